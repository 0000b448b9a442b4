# The egress proxy: bx_egress (the proxy, its command form and the system Dial) is what the
# toolkit program links.  The fake Dial is a library of its own, built only for tests, so
# the program can never reach it.
add_library (bx_egress STATIC
  ${CMAKE_CURRENT_LIST_DIR}/egress.c
  ${CMAKE_CURRENT_LIST_DIR}/egress_copy.c
  ${CMAKE_CURRENT_LIST_DIR}/egress_main.c
  ${CMAKE_CURRENT_LIST_DIR}/dial_system.c)
target_include_directories (bx_egress PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries (bx_egress PUBLIC bx_proto Threads::Threads)

if (BX_TEST_HOOKS)
  add_library (bx_dial_fake STATIC ${CMAKE_CURRENT_LIST_DIR}/dial_fake.c)
  target_link_libraries (bx_dial_fake PUBLIC bx_egress)
endif ()
