# The four tools as a library, so tests and the fuzz harness link the same code the program
# runs.
add_library (bx_toolkit_tools STATIC
  input.c
  output.c
  spawn.c
  read_file.c
  write_file.c
  shell.c
  http_fetch.c)
target_include_directories (bx_toolkit_tools PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries (bx_toolkit_tools PUBLIC bx_proto)
