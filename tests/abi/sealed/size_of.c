/* SPDX-License-Identifier: Apache-2.0 */
/* A module tries to allocate a spec by its size: must not compile. */
#include <stdlib.h>

#include <boxmaker/runtime.h>

bx_run_spec *
forge (void)
{
  return malloc (sizeof (bx_run_spec));
}
