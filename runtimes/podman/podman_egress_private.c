/* SPDX-License-Identifier: Apache-2.0 */
/* allow_private for the egress proxy: the grant's private ranges (ABI 1.1,
 * bx_host.spec_egress_private) become `--allow-private RANGE[,RANGE...]` at the end of the
 * proxy's argument list.  brokerd has checked every range; a range holding a comma (which
 * would split into two) is refused here too, since the module does not trust the text to
 * be what brokerd checked. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "host_list.h"
#include "podman.h"

size_t
bx_podman_private_count (const struct bx_host *host, const bx_run_spec *spec)
{
  if (!BX_HOST_HAS (host, spec_egress_private) || host->spec_egress_private_count == NULL
      || host->spec_egress_private == NULL)
    return 0;
  return host->spec_egress_private_count (spec);
}

bool
bx_podman_private_ok (const struct bx_host *host, const bx_run_spec *spec)
{
  size_t n = bx_podman_private_count (host, spec);
  for (size_t i = 0; i < n; i++)
    {
      const char *r = host->spec_egress_private (spec, i);
      if (r == NULL || r[0] == '\0' || strchr (r, ',') != NULL)
        return false;
    }
  return true;
}

char **
bx_podman_argv_add_private (char **argv, const char *const *ranges, size_t count)
{
  if (count == 0)
    return argv;
  size_t len = 0;
  while (argv[len] != NULL)
    len++;
  char *joined = bx_runtime_join (ranges, count);
  argv = bx_xrealloc (argv, (len + 3) * sizeof (char *));
  argv[len] = bx_xstrdup ("--allow-private");
  argv[len + 1] = joined;
  argv[len + 2] = NULL;
  return argv;
}
