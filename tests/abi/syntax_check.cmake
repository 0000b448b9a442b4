# SPDX-License-Identifier: Apache-2.0
# Compiles SOURCE with CC -fsyntax-only against the ABI header in INCLUDE.  EXPECT=pass: it
# must compile cleanly.  EXPECT=fail: it must fail, and because the spec's type is incomplete
# (not for a typo or a missing header, which would make the guard prove nothing).
execute_process (
  COMMAND ${CC} -std=c11 -Wall -Wextra -Werror -fsyntax-only -I${INCLUDE} ${SOURCE}
  RESULT_VARIABLE result
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if (EXPECT STREQUAL "pass")
  if (NOT result EQUAL 0)
    message (FATAL_ERROR "${SOURCE} should compile but does not:\n${err}")
  endif ()
  message (STATUS "compiles, as it must: ${SOURCE}")
else ()
  if (result EQUAL 0)
    message (FATAL_ERROR "${SOURCE} compiled, but a module must not be able to do this")
  endif ()
  if (NOT err MATCHES "incomplete|storage size of")
    message (FATAL_ERROR "${SOURCE} failed for another reason than the sealed spec:\n${err}")
  endif ()
  string (REGEX MATCH "[^\n]*incomplete[^\n]*" why "${err}")
  message (STATUS "refused, as it must: ${why}")
endif ()
