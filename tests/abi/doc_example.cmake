# SPDX-License-Identifier: Apache-2.0
# docs/writing-a-runtime.md must hold docs/examples/echo-runtime.c verbatim, in one ```c
# block, so the code a reader types in is the code the walk test compiles.
file (READ "${DOC}" doc)
file (READ "${EXAMPLE}" example)
string (FIND "${doc}" "```c\n${example}```\n" at)
if (at EQUAL -1)
  message (FATAL_ERROR "${DOC} does not hold ${EXAMPLE} verbatim in a ```c block")
endif ()
message (STATUS "the doc holds the example at byte ${at}")
