# The client library (seed 002's BrokerPort) and the boxmaker CLI built on it.
add_library (bx_client STATIC client.c)
target_include_directories (bx_client PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries (bx_client PUBLIC bx_proto PkgConfig::JANSSON)

add_executable (boxmaker boxmaker.c)
target_compile_definitions (boxmaker PRIVATE BX_VERSION="${PROJECT_VERSION}")
target_link_libraries (boxmaker PRIVATE bx_client)
install (TARGETS boxmaker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT daemon)

# The brokerd benchmark's programs (bench/broker/run.sh builds them): a load generator that
# calls through this client, and the bare echo server it is compared with.  Not part of `all`.
add_executable (bx_bench_broker EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/bench/broker/load.c)
target_link_libraries (bx_bench_broker PRIVATE bx_client Threads::Threads)
add_executable (bx_bench_echo EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/bench/broker/echo.c)
target_link_libraries (bx_bench_echo PRIVATE bx_proto Threads::Threads)
