# SPDX-License-Identifier: Apache-2.0
# bx_check_test(NAME SOURCES... [LIBS ...] [TIMEOUT S] [MAY_SKIP CASE...]): one Check
# executable, registered with CTest.  Check's fork mode stays on, so a crash fails one test and
# not the run.  A program that skips exits 77, which CTest reports as skipped.  Each TCase in
# MAY_SKIP (made with bx_test_case_may_skip) is an entry of its own, NAME_CASE, so a test
# that skips there does not hide the others' passes; the entry NAME runs the rest.
function (bx_check_test name)
  cmake_parse_arguments (arg "" "TIMEOUT" "SOURCES;LIBS;MAY_SKIP" ${ARGN})
  add_executable (${name} ${arg_SOURCES})
  target_link_libraries (${name} PRIVATE ${arg_LIBS} bx_test_common PkgConfig::CHECK)
  if (NOT arg_TIMEOUT)
    set (arg_TIMEOUT 300)
  endif ()
  add_test (NAME ${name} COMMAND ${name})
  set_tests_properties (${name} PROPERTIES TIMEOUT ${arg_TIMEOUT} SKIP_RETURN_CODE 77)
  if (arg_MAY_SKIP)
    set_tests_properties (${name} PROPERTIES ENVIRONMENT "CK_EXCLUDE_TAGS=may_skip")
  endif ()
  foreach (case ${arg_MAY_SKIP})
    add_test (NAME ${name}_${case} COMMAND ${name})
    set_tests_properties (${name}_${case} PROPERTIES TIMEOUT ${arg_TIMEOUT} SKIP_RETURN_CODE 77
                          ENVIRONMENT "CK_RUN_CASE=${case}")
  endforeach ()
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
