/* SPDX-License-Identifier: Apache-2.0 */
/* bx_runtime.check_root for podman.so: a grant's image (config key image) must be in
 * podman's local storage and be the one its digest names, since there is no registry to
 * pull it from and a call in a missing image could only fail.  A grant's rootfs is
 * bwrap.so's. */
#include <string.h>

#include "bx/argv.h"
#include "bx/cleanup.h"

#include "check_root.h"
#include "podman.h"

/* How long `podman image inspect` may take. */
#define INSPECT_MS 30000

char **
bx_podman_argv_inspect (const struct bx_podman_config *cfg, const char *image)
{
  struct bx_argv b = { 0 };
  bx_argv_push (&b, cfg->podman);
  for (size_t i = 0; i < cfg->global_count; i++)
    bx_argv_push (&b, cfg->global_options[i]);
  bx_argv_push (&b, "image");
  bx_argv_push (&b, "inspect");
  bx_argv_push (&b, "--format");
  bx_argv_push (&b, "{{.Digest}}");
  bx_argv_push (&b, image);
  return b.items;
}

int
bx_podman_check_root (void *instance, const char *key, const char *root, bx_error_sink *sink)
{
  struct bx_podman_instance *inst = instance;
  const struct bx_host *host = inst->host;
  if (bx_runtime_root_key (host, "podman", key, sink) < 0)
    return -1;
  const char *at = strrchr (root, '@');
  if (at == NULL || root[0] == '-')
    {
      host->error_set (sink, "%s", bx_runtime_root_only ("podman"));
      return -1;
    }
  char **argv = bx_podman_argv_inspect (&inst->cfg, root);
  struct bx_command_result o;
  bx_podman_execute (inst, argv, NULL, 0, true, 4096, bx_now_ms () + INSPECT_MS, -1, &o);
  bx_podman_argv_free (argv);
  bx_command_reap (&o, 0);
  int r = 0;
  if (o.end != BX_COMMAND_EXITED || o.exit_code != 0 || o.out == NULL)
    {
      /* podman's words go to the log: they may be long, and the refusal says what to do. */
      host->log (host, BX_LOG_ERROR, "podman image inspect %s: %.500s", root, o.err);
      host->error_set (sink,
                       "podman has no image %s (build it with build-dev-image.sh, or load it, "
                       "then pin the digest it prints)",
                       root);
      r = -1;
    }
  else
    {
      size_t n = strcspn (o.out, "\n");
      if (n != strlen (at + 1) || strncmp (o.out, at + 1, n) != 0)
        {
          host->error_set (sink, "podman's image %s has digest %.*s, not the pinned %s", root,
                           (int)(n > 80 ? 80 : n), o.out, at + 1);
          r = -1;
        }
    }
  bx_command_result_clear (&o);
  return r;
}
