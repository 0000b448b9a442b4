/* SPDX-License-Identifier: Apache-2.0 */
/* The podman argument lists of a call (the tool container and its egress proxy), as pure
 * functions: the same inputs always give the same list, so tests compare them with golden
 * files.  Every argument is a separate string; nothing here is ever given to a shell. */
#include <stdlib.h>
#include <string.h>

#include "bx/argv.h"

#include "host_list.h"
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

/* A global option too: the OCI hook that bounds a container's kernel counters (ucounts.c). */
static void
push_hooks (struct bx_argv *b, const struct bx_podman_config *cfg)
{
  if (cfg->hooks_dir != NULL)
    bx_argv_pushf (b, "--hooks-dir=%s", cfg->hooks_dir);
}

static void
push_run_options (struct bx_argv *b, const struct bx_podman_config *cfg)
{
  for (size_t i = 0; i < cfg->run_count; i++)
    bx_argv_push (b, cfg->run_options[i]);
}

/* What every container gets, tool or proxy: its own deadline (it ends even when nobody is
 * left to stop it), no host variable (podman copies the host's proxy variables in by
 * default), a user namespace of ids that are neither host root nor brokerd's own user
 * (rootless too: there the map's ids are the user's subordinate ones), the seccomp profile
 * (no keyrings, no new user namespaces), one CPU, and the file size limit. */
static void
push_confinement (struct bx_argv *b, const struct bx_podman_config *cfg, uint64_t timeout_s,
                  uint64_t cpu_millis, uint64_t file_size)
{
  bx_argv_push (b, "--read-only");
  bx_argv_push (b, "--cap-drop=all");
  bx_argv_push (b, "--security-opt=no-new-privileges");
  bx_argv_pushf (b, "--security-opt=seccomp=%s", cfg->seccomp);
  bx_argv_push (b, "--http-proxy=false");
  bx_argv_pushf (b, "--timeout=%llu", (unsigned long long)timeout_s);
  bx_argv_pushf (b, "--uidmap=0:%lld:%d", (long long)cfg->uidmap_base, BX_PODMAN_MAP_SIZE);
  bx_argv_pushf (b, "--gidmap=0:%lld:%d", (long long)cfg->uidmap_base, BX_PODMAN_MAP_SIZE);
  /* A call's own CPU and file size limits (ABI 1.1; 0: none) win over the options. */
  if (cfg->cgroup_limits && cpu_millis > 0)
    bx_argv_pushf (b, "--cpus=%llu.%03llu", (unsigned long long)(cpu_millis / 1000),
                   (unsigned long long)(cpu_millis % 1000));
  else if (cfg->cgroup_limits)
    bx_argv_pushf (b, "--cpus=%s", cfg->cpus);
  if (file_size == 0)
    file_size = cfg->file_size;
  bx_argv_pushf (b, "--ulimit=fsize=%llu:%llu", (unsigned long long)file_size,
                 (unsigned long long)file_size);
}

/* A bind mount that is not recursive: a mount below the source on the host (or one a
 * link leads to) does not come along. */
static void
push_mount (struct bx_argv *b, const char *src, const char *dst, bool writable)
{
  bx_argv_pushf (b, "--mount=type=bind,src=%s,dst=%s,%sbind-nonrecursive", src, dst,
                 writable ? "" : "ro=true,");
}

char **
bx_podman_argv_tool (const struct bx_podman_config *cfg, const struct bx_podman_call *call)
{
  struct bx_argv b = { 0 };
  push_program (&b, cfg);
  push_hooks (&b, cfg);
  bx_argv_push (&b, "run");
  bx_argv_push (&b, "--rm");
  bx_argv_push (&b, "-i");
  bx_argv_pushf (&b, "--name=%s", call->name);
  bx_argv_push (&b, "--label=boxmaker=tool");
  bx_argv_push (&b, "--network=none");
  push_confinement (&b, cfg, call->timeout_s, call->cpu_millis, call->file_size);
  /* The call's own limits win over the options (which stay the defaults); with
   * cgroup_limits off a call with such limits never gets here (call.c). */
  if (cfg->cgroup_limits)
    {
      if (call->pids > 0)
        bx_argv_pushf (&b, "--pids-limit=%llu", (unsigned long long)call->pids);
      else
        bx_argv_pushf (&b, "--pids-limit=%lld", (long long)cfg->pids);
      if (call->memory_bytes > 0)
        bx_argv_pushf (&b, "--memory=%llu", (unsigned long long)call->memory_bytes);
      else
        bx_argv_pushf (&b, "--memory=%s", cfg->memory);
      if (call->oom_group)
        bx_argv_push (&b, "--cgroup-conf=memory.oom.group=1");
    }
  bx_argv_push (&b, "--tmpfs=/tmp:rw,size=64m,mode=1777");
  push_run_options (&b, cfg);
  for (size_t i = 0; i < call->mount_count; i++)
    push_mount (&b, call->mounts[i].path, call->mounts[i].path, call->mounts[i].writable);
  /* Read-only: only the proxy writes there (its records reach the audit line), and a
   * Unix socket connects through a read-only mount. */
  if (call->egress_dir != NULL)
    push_mount (&b, call->egress_dir, "/run/egress", false);
  if (call->image != NULL)
    push_mount (&b, cfg->toolkit, BX_PODMAN_INJECTED_TOOLKIT, false);
  bx_argv_push (&b, call->image != NULL ? call->image : cfg->image);
  bx_argv_push (&b, call->image != NULL ? BX_PODMAN_INJECTED_TOOLKIT : "/bin/toolkit");
  bx_argv_push (&b, call->tool);
  return b.items;
}

char **
bx_podman_argv_proxy (const struct bx_podman_config *cfg, const char *name, const char *egress_dir,
                      uint64_t timeout_s, const char *const *hosts, size_t host_count)
{
  struct bx_argv b = { 0 };
  push_program (&b, cfg);
  push_hooks (&b, cfg);
  bx_argv_push (&b, "run");
  bx_argv_push (&b, "-d");
  bx_argv_push (&b, "--rm");
  bx_argv_pushf (&b, "--name=%s-egress", name);
  bx_argv_push (&b, "--label=boxmaker=egress");
  bx_argv_pushf (&b, "--network=%s", cfg->egress_network);
  push_confinement (&b, cfg, timeout_s, 0, 0);
  if (cfg->cgroup_limits)
    {
      bx_argv_push (&b, "--pids-limit=64");
      bx_argv_push (&b, "--memory=128m");
    }
  push_run_options (&b, cfg);
  push_mount (&b, egress_dir, "/run/egress", true);
  bx_argv_push (&b, cfg->image);
  bx_argv_push (&b, "/bin/toolkit");
  bx_argv_push (&b, "egress-proxy");
  bx_argv_push (&b, "--socket");
  bx_argv_push (&b, BX_EGRESS_SOCKET);
  bx_argv_push (&b, "--allow");
  bx_argv_push_owned (&b, bx_runtime_join (hosts, host_count));
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
bx_podman_argv_ps (const struct bx_podman_config *cfg, const char *token)
{
  struct bx_argv b = { 0 };
  push_program (&b, cfg);
  bx_argv_push (&b, "ps");
  bx_argv_push (&b, "-a");
  bx_argv_push (&b, "--filter=label=boxmaker");
  bx_argv_pushf (&b, "--filter=name=^boxmaker-.*-%s(-egress)?$", token);
  bx_argv_push (&b, "--format={{.Names}}");
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
