/* The podman argument lists of seed 000 section 6, as pure functions: the same inputs
 * always give the same list, so tests compare them with golden files.  Every argument is a
 * separate string; nothing here is ever given to a shell. */
#include <stdlib.h>
#include <string.h>

#include "bx/argv.h"

#include "podman.h"

/* A growing NULL-terminated list that owns its strings. */
/* The program and podman's global options (this kind of host needs `--runtime runc`). */
static void
push_program (struct bx_argv *b, const struct bx_podman_config *cfg)
{
  bx_argv_push (b, cfg->podman);
  for (size_t i = 0; i < cfg->global_count; i++)
    bx_argv_push (b, cfg->global_options[i]);
}

static void
push_run_options (struct bx_argv *b, const struct bx_podman_config *cfg)
{
  for (size_t i = 0; i < cfg->run_count; i++)
    bx_argv_push (b, cfg->run_options[i]);
}

char **
bx_podman_argv_tool (const struct bx_podman_config *cfg, const struct bx_podman_call *call)
{
  struct bx_argv b = { 0 };
  push_program (&b, cfg);
  bx_argv_push (&b, "run");
  bx_argv_push (&b, "--rm");
  bx_argv_push (&b, "-i");
  bx_argv_pushf (&b, "--name=%s", call->name);
  bx_argv_push (&b, "--label=boxmaker=tool");
  bx_argv_push (&b, "--network=none");
  bx_argv_push (&b, "--read-only");
  bx_argv_push (&b, "--cap-drop=all");
  bx_argv_push (&b, "--security-opt=no-new-privileges");
  if (cfg->userns_keep_id)
    bx_argv_push (&b, "--userns=keep-id");
  bx_argv_pushf (&b, "--pids-limit=%lld", (long long)cfg->pids);
  bx_argv_pushf (&b, "--memory=%s", cfg->memory);
  bx_argv_push (&b, "--tmpfs=/tmp:rw,size=64m,mode=1777");
  push_run_options (&b, cfg);
  for (size_t i = 0; i < call->mount_count; i++)
    bx_argv_pushf (&b, "--volume=%s:%s:%s", call->mounts[i].path, call->mounts[i].path,
                   call->mounts[i].writable ? "rw" : "ro");
  if (call->egress_dir != NULL)
    bx_argv_pushf (&b, "--volume=%s:" BX_EGRESS_DIR ":rw", call->egress_dir);
  bx_argv_push (&b, cfg->image);
  bx_argv_push (&b, "/bin/toolkit");
  bx_argv_push (&b, call->tool);
  return b.items;
}

char **
bx_podman_argv_proxy (const struct bx_podman_config *cfg, const char *name, const char *egress_dir,
                      const char *const *hosts, size_t host_count)
{
  struct bx_argv b = { 0 };
  push_program (&b, cfg);
  bx_argv_push (&b, "run");
  bx_argv_push (&b, "-d");
  bx_argv_push (&b, "--rm");
  bx_argv_pushf (&b, "--name=%s-egress", name);
  bx_argv_push (&b, "--label=boxmaker=egress");
  bx_argv_pushf (&b, "--network=%s", cfg->egress_network);
  bx_argv_push (&b, "--read-only");
  bx_argv_push (&b, "--cap-drop=all");
  bx_argv_push (&b, "--security-opt=no-new-privileges");
  if (cfg->userns_keep_id)
    bx_argv_push (&b, "--userns=keep-id");
  bx_argv_push (&b, "--pids-limit=64");
  bx_argv_push (&b, "--memory=128m");
  push_run_options (&b, cfg);
  bx_argv_pushf (&b, "--volume=%s:" BX_EGRESS_DIR ":rw", egress_dir);
  bx_argv_push (&b, cfg->image);
  bx_argv_push (&b, "/bin/toolkit");
  bx_argv_push (&b, "egress-proxy");
  bx_argv_push (&b, "--socket");
  bx_argv_push (&b, BX_EGRESS_SOCKET);
  bx_argv_push (&b, "--allow");

  size_t total = 1;
  for (size_t i = 0; i < host_count; i++)
    total += strlen (hosts[i]) + 1;
  char *joined = bx_xmalloc (total);
  joined[0] = '\0';
  for (size_t i = 0; i < host_count; i++)
    {
      if (i > 0)
        strcat (joined, ",");
      strcat (joined, hosts[i]);
    }
  bx_argv_push_owned (&b, joined);
  return b.items;
}

char **
bx_podman_argv_kill (const struct bx_podman_config *cfg, const char *name)
{
  struct bx_argv b = { 0 };
  push_program (&b, cfg);
  bx_argv_push (&b, "kill");
  bx_argv_push (&b, name);
  return b.items;
}

char **
bx_podman_argv_rm (const struct bx_podman_config *cfg, const char *name)
{
  struct bx_argv b = { 0 };
  push_program (&b, cfg);
  bx_argv_push (&b, "rm");
  bx_argv_push (&b, "-f");
  bx_argv_push (&b, name);
  return b.items;
}

void
bx_podman_argv_free (char **argv)
{
  bx_argv_free (argv);
}
