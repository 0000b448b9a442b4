/* The podman argument lists of seed 000 section 6, as pure functions: the same inputs
 * always give the same list, so tests compare them with golden files.  Every argument is a
 * separate string; nothing here is ever given to a shell. */
#include <stdlib.h>
#include <string.h>

#include "podman.h"

/* A growing NULL-terminated list that owns its strings. */
struct argv_builder
{
  char **items;
  size_t len, cap;
};

static void
push_owned (struct argv_builder *b, char *s)
{
  if (b->len + 2 > b->cap)
    {
      b->cap = b->cap ? b->cap * 2 : 32;
      b->items = bx_xrealloc (b->items, b->cap * sizeof (char *));
    }
  b->items[b->len++] = s;
  b->items[b->len] = NULL;
}

static void
push (struct argv_builder *b, const char *s)
{
  push_owned (b, bx_xstrdup (s));
}

/* The program and podman's global options (this kind of host needs `--runtime runc`). */
static void
push_program (struct argv_builder *b, const struct bx_podman_config *cfg)
{
  push (b, cfg->podman);
  for (size_t i = 0; i < cfg->global_count; i++)
    push (b, cfg->global_options[i]);
}

static void
push_run_options (struct argv_builder *b, const struct bx_podman_config *cfg)
{
  for (size_t i = 0; i < cfg->run_count; i++)
    push (b, cfg->run_options[i]);
}

char **
bx_podman_argv_tool (const struct bx_podman_config *cfg, const struct bx_podman_call *call)
{
  struct argv_builder b = { 0 };
  push_program (&b, cfg);
  push (&b, "run");
  push (&b, "--rm");
  push (&b, "-i");
  push_owned (&b, bx_xasprintf ("--name=%s", call->name));
  push (&b, "--label=boxmaker=tool");
  push (&b, "--network=none");
  push (&b, "--read-only");
  push (&b, "--cap-drop=all");
  push (&b, "--security-opt=no-new-privileges");
  if (cfg->userns_keep_id)
    push (&b, "--userns=keep-id");
  push_owned (&b, bx_xasprintf ("--pids-limit=%lld", (long long)cfg->pids));
  push_owned (&b, bx_xasprintf ("--memory=%s", cfg->memory));
  push (&b, "--tmpfs=/tmp:rw,size=64m,mode=1777");
  push_run_options (&b, cfg);
  for (size_t i = 0; i < call->mount_count; i++)
    push_owned (&b,
                bx_xasprintf ("--volume=%s:%s:%s", call->mounts[i].path,
                                     call->mounts[i].path, call->mounts[i].writable ? "rw" : "ro"));
  if (call->egress_dir != NULL)
    push_owned (&b, bx_xasprintf ("--volume=%s:" BX_EGRESS_DIR ":rw", call->egress_dir));
  push (&b, cfg->image);
  push (&b, "/bin/toolkit");
  push (&b, call->tool);
  return b.items;
}

char **
bx_podman_argv_proxy (const struct bx_podman_config *cfg, const char *name, const char *egress_dir,
                      const char *const *hosts, size_t host_count)
{
  struct argv_builder b = { 0 };
  push_program (&b, cfg);
  push (&b, "run");
  push (&b, "-d");
  push (&b, "--rm");
  push_owned (&b, bx_xasprintf ("--name=%s-egress", name));
  push (&b, "--label=boxmaker=egress");
  push_owned (&b, bx_xasprintf ("--network=%s", cfg->egress_network));
  push (&b, "--read-only");
  push (&b, "--cap-drop=all");
  push (&b, "--security-opt=no-new-privileges");
  if (cfg->userns_keep_id)
    push (&b, "--userns=keep-id");
  push (&b, "--pids-limit=64");
  push (&b, "--memory=128m");
  push_run_options (&b, cfg);
  push_owned (&b, bx_xasprintf ("--volume=%s:" BX_EGRESS_DIR ":rw", egress_dir));
  push (&b, cfg->image);
  push (&b, "/bin/toolkit");
  push (&b, "egress-proxy");
  push (&b, "--socket");
  push (&b, BX_EGRESS_SOCKET);
  push (&b, "--allow");

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
  push_owned (&b, joined);
  return b.items;
}

char **
bx_podman_argv_kill (const struct bx_podman_config *cfg, const char *name)
{
  struct argv_builder b = { 0 };
  push_program (&b, cfg);
  push (&b, "kill");
  push (&b, name);
  return b.items;
}

char **
bx_podman_argv_rm (const struct bx_podman_config *cfg, const char *name)
{
  struct argv_builder b = { 0 };
  push_program (&b, cfg);
  push (&b, "rm");
  push (&b, "-f");
  push (&b, name);
  return b.items;
}

void
bx_podman_argv_free (char **argv)
{
  if (argv == NULL)
    return;
  for (char **p = argv; *p != NULL; p++)
    free (*p);
  free (argv);
}
