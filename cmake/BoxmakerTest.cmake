# SPDX-License-Identifier: Apache-2.0
# bx_check_test(NAME SOURCES... [LIBS ...]): one Check executable, registered with CTest.
# Check's fork mode stays on, so a crash fails one test and not the run.
function (bx_check_test name)
  cmake_parse_arguments (arg "" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  add_executable (${name} ${arg_SOURCES})
  target_link_libraries (${name} PRIVATE ${arg_LIBS} bx_test_common PkgConfig::CHECK)
  add_test (NAME ${name} COMMAND ${name})
  if (arg_TIMEOUT)
    set_tests_properties (${name} PROPERTIES TIMEOUT ${arg_TIMEOUT})
  else ()
    set_tests_properties (${name} PROPERTIES TIMEOUT 300)
  endif ()
endfunction ()

# bx_fuzz_target(NAME SOURCE LIBS... ): a libFuzzer harness.  With BX_FUZZ (clang) it is a real
# fuzzer and the suite runs it for a short smoke run; without, the same harness is linked to a
# small driver that replays its seed corpus, so the harness code is built and run everywhere.
function (bx_fuzz_target name source corpus)
  cmake_parse_arguments (arg "" "" "LIBS" ${ARGN})
  if (BX_FUZZ)
    add_executable (${name} ${source})
    target_compile_options (${name} PRIVATE -fsanitize=fuzzer)
    target_link_options (${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries (${name} PRIVATE ${arg_LIBS})
    # New inputs go to a corpus folder in the build tree (the first folder given); the
    # checked-in seeds are only read.  BX_FUZZ_SECONDS sets the smoke run's length.
    set (work_corpus "${CMAKE_CURRENT_BINARY_DIR}/${name}-corpus")
    file (MAKE_DIRECTORY "${work_corpus}")
    add_test (NAME ${name}_smoke
              COMMAND ${name} -max_total_time=${BX_FUZZ_SECONDS} -timeout=5 -rss_limit_mb=2048
                      -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/${name}-
                      "${work_corpus}" ${corpus})
    set_tests_properties (${name}_smoke PROPERTIES TIMEOUT 300)
  else ()
    add_executable (${name} ${source} ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.c)
    target_link_libraries (${name} PRIVATE ${arg_LIBS})
    add_test (NAME ${name}_replay COMMAND ${name} ${corpus})
    set_tests_properties (${name}_replay PROPERTIES TIMEOUT 120)
  endif ()
endfunction ()
