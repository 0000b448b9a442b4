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
      b->items = bx_podman_xrealloc (b->items, b->cap * sizeof (char *));
    }
  b->items[b->len++] = s;
  b->items[b->len] = NULL;
}

static void
push (struct argv_builder *b, const char *s)
{
  push_owned (b, bx_podman_xstrdup (s));
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

/* What every container gets, tool or proxy: its own deadline (it ends even when nobody is
 * left to stop it), no host variable (podman copies the host's proxy variables in by
 * default), a user namespace (the sandbox's root is never host root), the seccomp profile
 * (no keyrings, no new user namespaces), one CPU, and the file size limit. */
static void
push_confinement (struct argv_builder *b, const struct bx_podman_config *cfg, uint64_t timeout_s,
                  uint64_t cpu_millis, uint64_t file_size)
{
  push (b, "--read-only");
  push (b, "--cap-drop=all");
  push (b, "--security-opt=no-new-privileges");
  push_owned (b, bx_podman_xasprintf ("--security-opt=seccomp=%s", cfg->seccomp));
  push (b, "--http-proxy=false");
  push_owned (b, bx_podman_xasprintf ("--timeout=%llu", (unsigned long long)timeout_s));
  if (cfg->userns_keep_id)
    push (b, "--userns=keep-id");
  else
    {
      push_owned (b, bx_podman_xasprintf ("--uidmap=0:%lld:%d", (long long)cfg->uidmap_base,
                                          BX_PODMAN_MAP_SIZE));
      push_owned (b, bx_podman_xasprintf ("--gidmap=0:%lld:%d", (long long)cfg->uidmap_base,
                                          BX_PODMAN_MAP_SIZE));
    }
  /* A call's own CPU and file size limits (ABI 1.1; 0: none) win over the options. */
  if (cpu_millis > 0)
    push_owned (b,
                bx_podman_xasprintf ("--cpus=%llu.%03llu", (unsigned long long)(cpu_millis / 1000),
                                     (unsigned long long)(cpu_millis % 1000)));
  else
    push_owned (b, bx_podman_xasprintf ("--cpus=%s", cfg->cpus));
  if (file_size == 0)
    file_size = cfg->file_size;
  push_owned (b, bx_podman_xasprintf ("--ulimit=fsize=%llu:%llu", (unsigned long long)file_size,
                                      (unsigned long long)file_size));
}

/* A bind mount that is not recursive: a mount below the source on the host (or one a
 * link leads to) does not come along. */
static void
push_mount (struct argv_builder *b, const char *src, const char *dst, bool writable)
{
  push_owned (b, bx_podman_xasprintf ("--mount=type=bind,src=%s,dst=%s,%sbind-nonrecursive", src,
                                      dst, writable ? "" : "ro=true,"));
}

char **
bx_podman_argv_tool (const struct bx_podman_config *cfg, const struct bx_podman_call *call)
{
  struct argv_builder b = { 0 };
  push_program (&b, cfg);
  push (&b, "run");
  push (&b, "--rm");
  push (&b, "-i");
  push_owned (&b, bx_podman_xasprintf ("--name=%s", call->name));
  push (&b, "--label=boxmaker=tool");
  push (&b, "--network=none");
  push_confinement (&b, cfg, call->timeout_s, call->cpu_millis, call->file_size);
  /* The call's own limits win over the options (which stay the defaults). */
  if (call->pids > 0)
    push_owned (&b, bx_podman_xasprintf ("--pids-limit=%llu", (unsigned long long)call->pids));
  else
    push_owned (&b, bx_podman_xasprintf ("--pids-limit=%lld", (long long)cfg->pids));
  if (call->memory_bytes > 0)
    push_owned (&b, bx_podman_xasprintf ("--memory=%llu", (unsigned long long)call->memory_bytes));
  else
    push_owned (&b, bx_podman_xasprintf ("--memory=%s", cfg->memory));
  push (&b, "--tmpfs=/tmp:rw,size=64m,mode=1777");
  push_run_options (&b, cfg);
  for (size_t i = 0; i < call->mount_count; i++)
    push_mount (&b, call->mounts[i].path, call->mounts[i].path, call->mounts[i].writable);
  if (call->egress_dir != NULL)
    push_mount (&b, call->egress_dir, "/run/egress", true);
  if (call->image != NULL)
    push_mount (&b, cfg->toolkit, BX_PODMAN_INJECTED_TOOLKIT, false);
  push (&b, call->image != NULL ? call->image : cfg->image);
  push (&b, call->image != NULL ? BX_PODMAN_INJECTED_TOOLKIT : "/bin/toolkit");
  push (&b, call->tool);
  return b.items;
}

char **
bx_podman_argv_proxy (const struct bx_podman_config *cfg, const char *name, const char *egress_dir,
                      uint64_t timeout_s, const char *const *hosts, size_t host_count)
{
  struct argv_builder b = { 0 };
  push_program (&b, cfg);
  push (&b, "run");
  push (&b, "-d");
  push (&b, "--rm");
  push_owned (&b, bx_podman_xasprintf ("--name=%s-egress", name));
  push (&b, "--label=boxmaker=egress");
  push_owned (&b, bx_podman_xasprintf ("--network=%s", cfg->egress_network));
  push_confinement (&b, cfg, timeout_s, 0, 0);
  push (&b, "--pids-limit=64");
  push (&b, "--memory=128m");
  push_run_options (&b, cfg);
  push_mount (&b, egress_dir, "/run/egress", true);
  push (&b, cfg->image);
  push (&b, "/bin/toolkit");
  push (&b, "egress-proxy");
  push (&b, "--socket");
  push (&b, "/run/egress/egress.sock");
  push (&b, "--allow");

  size_t total = 1;
  for (size_t i = 0; i < host_count; i++)
    total += strlen (hosts[i]) + 1;
  char *joined = bx_podman_xmalloc (total);
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
bx_podman_argv_ps (const struct bx_podman_config *cfg, const char *token)
{
  struct argv_builder b = { 0 };
  push_program (&b, cfg);
  push (&b, "ps");
  push (&b, "-a");
  push (&b, "--filter=label=boxmaker");
  push_owned (&b, bx_podman_xasprintf ("--filter=name=^boxmaker-.*-%s(-egress)?$", token));
  push (&b, "--format={{.Names}}");
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
