# brokerd: config, policy, runner, server and audit log (static lib bx_broker, so the tests
# link the same code), and the brokerd program.
add_library (bx_broker STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/config.c
  ${CMAKE_CURRENT_SOURCE_DIR}/policy.c
  ${CMAKE_CURRENT_SOURCE_DIR}/runner.c
  ${CMAKE_CURRENT_SOURCE_DIR}/audit.c)
target_include_directories (bx_broker PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries (bx_broker PUBLIC bx_host bx_proto PkgConfig::YAML PkgConfig::JANSSON
                       Threads::Threads)
