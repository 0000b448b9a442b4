# toolkit, the program a sandbox runs.  The tools image is minimal, so toolkit is linked
# statically (glibc and jansson included); a sanitizer build needs the dynamic runtime, so
# there it links dynamically.  A test checks which one it got (tests/toolkit).
#
# toolkit_test is the same program for the test suite only: it takes the path of curl from
# BX_TEST_CURL so tests can put a fake in its place.  It is never installed; the installed
# toolkit always runs /bin/curl.
if (BX_SANITIZE)
  set (BX_TOOLKIT_STATIC OFF)
else ()
  set (BX_TOOLKIT_STATIC ON)
  # bx_proto carries PkgConfig::JANSSON, which names libjansson.so by its full path, and a
  # static link refuses any .so.  So the static program links the archives by file and
  # jansson's own archive instead of following the targets' link interfaces.
  find_library (BX_JANSSON_STATIC NAMES libjansson.a HINTS ${JANSSON_LIBRARY_DIRS} REQUIRED)
endif ()

function (bx_toolkit_program name)
  add_executable (${name} ${CMAKE_CURRENT_LIST_DIR}/main.c)
  set (libs bx_toolkit_tools)
  if (TARGET bx_egress)
    list (PREPEND libs bx_egress)
    target_compile_definitions (${name} PRIVATE BX_TOOLKIT_HAVE_EGRESS=1)
  endif ()
  if (NOT BX_TOOLKIT_STATIC)
    target_link_libraries (${name} PRIVATE ${libs})
    return ()
  endif ()
  list (APPEND libs bx_proto)
  foreach (lib IN LISTS libs)
    add_dependencies (${name} ${lib})
    target_include_directories (${name} PRIVATE
      $<TARGET_PROPERTY:${lib},INTERFACE_INCLUDE_DIRECTORIES>)
    target_link_libraries (${name} PRIVATE $<TARGET_FILE:${lib}>)
  endforeach ()
  target_include_directories (${name} PRIVATE ${JANSSON_INCLUDE_DIRS})
  target_link_libraries (${name} PRIVATE ${BX_JANSSON_STATIC} Threads::Threads)
  # A static executable, not a static PIE: the image has no loader at all.
  set_target_properties (${name} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  target_link_options (${name} PRIVATE -static)
endfunction ()

bx_toolkit_program (toolkit)
install (TARGETS toolkit DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/boxmaker COMPONENT podman)

if (BX_TEST_HOOKS)
  bx_toolkit_program (toolkit_test)
  target_compile_definitions (toolkit_test PRIVATE BX_TOOLKIT_TEST_BUILD=1)
endif ()
