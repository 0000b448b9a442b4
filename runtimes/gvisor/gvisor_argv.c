/* SPDX-License-Identifier: Apache-2.0 */
/* runsc's argument lists, pure functions of their inputs. */
#include <stdlib.h>

#include "bx/argv.h"

#include "gvisor.h"

static void
push_global (struct bx_argv *b, const struct bx_gvisor_config *cfg, const char *root)
{
  bx_argv_push (b, cfg->runsc);
  bx_argv_push (b, "--root");
  bx_argv_push (b, root);
}

char **
bx_gvisor_argv (const struct bx_gvisor_config *cfg, const char *root, const char *id,
                const char *bundle, const char *network, const char *host_uds)
{
  struct bx_argv b = { 0 };
  push_global (&b, cfg, root);
  bx_argv_pushf (&b, "--platform=%s", cfg->platform);
  bx_argv_pushf (&b, "--network=%s", network);
  bx_argv_pushf (&b, "--host-uds=%s", host_uds);
  /* The spec's seccomp filter, run by gVisor's kernel on the tool's own calls. */
  bx_argv_push (&b, "--oci-seccomp");
  if (cfg->debug_log != NULL)
    {
      bx_argv_push (&b, "--debug");
      bx_argv_pushf (&b, "--debug-log=%s/", cfg->debug_log);
    }
  bx_argv_push (&b, "run");
  bx_argv_push (&b, "--bundle");
  bx_argv_push (&b, bundle);
  bx_argv_push (&b, id);
  return b.items;
}

char **
bx_gvisor_delete_argv (const struct bx_gvisor_config *cfg, const char *root, const char *id)
{
  struct bx_argv b = { 0 };
  push_global (&b, cfg, root);
  bx_argv_push (&b, "delete");
  bx_argv_push (&b, "--force");
  bx_argv_push (&b, id);
  return b.items;
}

void
bx_gvisor_argv_free (char **argv)
{
  bx_argv_free (argv);
}
