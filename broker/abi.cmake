# The host side of the runtime ABI (plugins-api/include/boxmaker/runtime.h): the module
# options, the sealed run spec, the host services table and the module loader.
add_library (bx_host STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/options.c
  ${CMAKE_CURRENT_SOURCE_DIR}/run_spec.c
  ${CMAKE_CURRENT_SOURCE_DIR}/host_services.c
  ${CMAKE_CURRENT_SOURCE_DIR}/module_loader.c)
target_include_directories (bx_host PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries (bx_host PUBLIC bx_proto bx_runtime_api ${CMAKE_DL_LIBS})
