/* SPDX-License-Identifier: Apache-2.0 */
/* A module tries to copy a spec it was given, to change the copy: must not compile. */
#include <boxmaker/runtime.h>

void
copy (bx_run_spec *to, const bx_run_spec *from)
{
  *to = *from;
}
