# brokerd: config, policy, runner, server and audit log (static lib bx_broker, so the tests
# link the same code), and the brokerd program.
add_library (bx_broker STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/config.c
  ${CMAKE_CURRENT_SOURCE_DIR}/policy.c
  ${CMAKE_CURRENT_SOURCE_DIR}/runner.c
  ${CMAKE_CURRENT_SOURCE_DIR}/server.c
  ${CMAKE_CURRENT_SOURCE_DIR}/audit.c)
target_include_directories (bx_broker PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries (bx_broker PUBLIC bx_host bx_proto PkgConfig::YAML PkgConfig::JANSSON
                       Threads::Threads)

add_executable (brokerd ${CMAKE_CURRENT_SOURCE_DIR}/brokerd.c)
target_link_libraries (brokerd PRIVATE bx_broker)
# Modules are looked up by name in the installed runtimes folder unless --runtimedir says
# otherwise (tests and `make run` point it at the build tree's modules).
target_compile_definitions (brokerd PRIVATE BX_RUNTIMEDIR="${BX_RUNTIMEDIR}"
                                            BX_VERSION="${PROJECT_VERSION}")
install (TARGETS brokerd RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT daemon)

# `make run`: brokerd in the foreground with a development config from the build tree: a
# socket in the build tree, fake.so in echo mode (or refusing.so without test hooks), and
# grants on a scratch folder of the build tree and on example.com.
set (bx_dev_dir "${PROJECT_BINARY_DIR}/dev")
if (BX_TEST_HOOKS)
  set (bx_dev_runtime "module: fake\n  options:\n    mode: echo")
else ()
  set (bx_dev_runtime "module: refusing")
endif ()
file (MAKE_DIRECTORY "${bx_dev_dir}/scratch")
file (WRITE "${bx_dev_dir}/brokerd.yaml"
"# Written by CMake for `make run`; edits are lost at the next configure.
socket: ${bx_dev_dir}/broker.sock
home: ${bx_dev_dir}/home
audit: stderr
runtime:
  ${bx_dev_runtime}
grants:
  - tools: [read_file, write_file, shell]
    paths: [${bx_dev_dir}/scratch]
    class: private
  - tools: [http_fetch]
    hosts: [example.com, \"*.example.com\"]
    class: public
")
add_custom_target (run
  COMMAND brokerd --config "${bx_dev_dir}/brokerd.yaml" --runtimedir "${BX_BUILD_RUNTIMEDIR}"
  DEPENDS brokerd
  USES_TERMINAL
  COMMENT "brokerd on ${bx_dev_dir}/broker.sock (Ctrl-C stops it)")
if (BX_TEST_HOOKS)
  add_dependencies (run fake_runtime)
else ()
  add_dependencies (run refusing_runtime)
endif ()
