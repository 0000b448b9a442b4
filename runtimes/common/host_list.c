/* SPDX-License-Identifier: Apache-2.0 */
/* Comma-separated lists for the egress proxy: see host_list.h. */
#include <string.h>

#include "bx/cleanup.h"

#include "host_list.h"

char *
bx_runtime_join (const char *const *items, size_t count)
{
  size_t total = 1;
  for (size_t i = 0; i < count; i++)
    total += strlen (items[i]) + 1;
  char *joined = bx_xmalloc (total);
  char *p = joined;
  for (size_t i = 0; i < count; i++)
    {
      if (i > 0)
        *p++ = ',';
      size_t n = strlen (items[i]);
      memcpy (p, items[i], n);
      p += n;
    }
  *p = '\0';
  return joined;
}

char *
bx_runtime_join_hosts (const struct bx_host *host, const bx_run_spec *spec)
{
  size_t count = host->spec_egress_count (spec);
  cleanup_free const char **hosts = bx_xmalloc ((count + 1) * sizeof (char *));
  for (size_t i = 0; i < count; i++)
    hosts[i] = host->spec_egress_host (spec, i);
  return bx_runtime_join (hosts, count);
}

char *
bx_runtime_join_private (const struct bx_host *host, const bx_run_spec *spec)
{
  size_t count
      = BX_HOST_HAS (host, spec_egress_private) ? host->spec_egress_private_count (spec) : 0;
  if (count == 0)
    return NULL;
  cleanup_free const char **ranges = bx_xmalloc (count * sizeof (char *));
  for (size_t i = 0; i < count; i++)
    ranges[i] = host->spec_egress_private (spec, i);
  return bx_runtime_join (ranges, count);
}
