/* SPDX-License-Identifier: Apache-2.0 */
/* A module tries to read the tool straight out of the spec: must not compile. */
#include <boxmaker/runtime.h>

const void *
tool_of (const bx_run_spec *spec)
{
  return (const void *)&spec->tool;
}
