/* SPDX-License-Identifier: Apache-2.0 */
/* A module's protected paths against the grants: see protect.h. */
#include <errno.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/printable.h"

#include "protect.h"

/* Whether A is B or lies below it, on a component boundary; unlike bx_path_inside, a
 * module's path need not be clean ("/" itself or a trailing slash are fine). */
static bool
inside (const char *a, const char *b)
{
  size_t n = strlen (b);
  while (n > 0 && b[n - 1] == '/')
    n--;
  return strncmp (a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

int
bx_protect_check (const struct bx_config *cfg, struct bx_module *module, bx_error *err)
{
  const char *const *paths = bx_module_protected_paths (module);
  for (size_t p = 0; paths != NULL && paths[p] != NULL; p++)
    {
      const char *path = paths[p];
      if (path[0] != '/')
        {
          cleanup_free char *shown = bx_printable (path, strlen (path), 80);
          return bx_error_setc (err, EINVAL,
                                "runtime module %s: protected path \"%s\" is not absolute",
                                bx_module_path (module), shown);
        }
      for (size_t i = 0; i < cfg->n_grants; i++)
        for (size_t k = 0; k < cfg->grants[i].n_paths; k++)
          {
            const char *folder = cfg->grants[i].paths[k];
            if (inside (folder, path) || inside (path, folder))
              {
                cleanup_free char *shown = bx_printable (path, strlen (path), 200);
                return bx_error_setc (err, EPERM,
                                      "%s:%u: grant %zu folder %s meets %s, which runtime "
                                      "module %s protects: a sandbox could read or replace it; "
                                      "grant a folder that neither holds it nor lies in it",
                                      cfg->file, cfg->grants[i].line, i + 1, folder, shown,
                                      bx_module_name (module));
              }
          }
    }
  return 0;
}
