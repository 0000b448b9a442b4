/* SPDX-License-Identifier: Apache-2.0 */
/* A module tries to build a spec of its own: must not compile. */
#include <boxmaker/runtime.h>

int
main (void)
{
  struct bx_run_spec s;
  (void)s;
  return 0;
}
