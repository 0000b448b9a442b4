/* SPDX-License-Identifier: Apache-2.0 */
/* See golden.h. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "tree.h"

void
bx_golden_check (const char *path, const char *got)
{
  char *want = read_bytes (path, NULL);
  const char *regen = getenv ("BX_REGENERATE_GOLDEN");
  if ((want == NULL || strcmp (want, got) != 0) && regen != NULL && strcmp (regen, "1") == 0)
    {
      write_bytes (path, got, strlen (got));
      printf ("rewrote %s: review the change before committing it\n", path);
      fflush (stdout);
    }
  else
    {
      ck_assert_msg (want != NULL, "no golden file %s (BX_REGENERATE_GOLDEN=1 writes it)", path);
      ck_assert_msg (strcmp (want, got) == 0, "%s differs:\n--- want\n%s--- got\n%s", path, want,
                     got);
    }
  free (want);
}
