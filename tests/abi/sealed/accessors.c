/* SPDX-License-Identifier: Apache-2.0 */
/* What a module may do: read the spec through the host's accessors.  Must compile. */
#include <stdio.h>

#include <boxmaker/runtime.h>

void describe (const struct bx_host *host, const bx_run_spec *spec);

void
describe (const struct bx_host *host, const bx_run_spec *spec)
{
  size_t len;
  const char *arguments = host->spec_arguments (spec, &len);
  printf ("%s %.*s call %s session %s\n", host->spec_tool (spec), (int)len, arguments,
          host->spec_call (spec), host->spec_session (spec));
  for (size_t i = 0; i < host->spec_mount_count (spec); i++)
    printf ("mount %s %s\n", host->spec_mount_path (spec, i),
            host->spec_mount_writable (spec, i) ? "rw" : "ro");
  if (host->spec_has_egress (spec))
    for (size_t i = 0; i < host->spec_egress_count (spec); i++)
      printf ("egress %s\n", host->spec_egress_host (spec, i));
}
