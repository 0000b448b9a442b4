/* SPDX-License-Identifier: Apache-2.0 */
/* gvisor.so: runs every allowed call in a fresh gVisor sandbox (`runsc run`, an OCI bundle
 * per call), so the tool's system calls reach gVisor's own kernel rather than the host's:
 * a kernel bug reachable through an allowed system call is no longer an escape.  The same
 * promises as podman.so and bwrap.so otherwise (a read-only root, no network but the egress
 * proxy's socket, every limit with a fixed sentence).  This file is the module's face: its
 * table, its options, its instance and the sweep of what a dead brokerd left. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/command.h"
#include "bx/deadline.h"

#include "gvisor.h"
#include "instance.h"
#include "rootfs.h"
#include "tool_limits.h"

static const char *const known_options[] = {
  "runsc",    "platform",      "rootfs",      "state_dir", "cgroup_path",  "slirp4netns",
  "nsenter",  "debug_log",     "output_cap",  "tmp_size",  "file_size",    "memory",
  "pids",     "cpu_percent",   "uid",         "gid",       "read_file_ms", "write_file_ms",
  "shell_ms", "http_fetch_ms", "mcp_call_ms", NULL,
};

#define DEFAULT_ROOTFS "/var/lib/boxmaker-gvisor/rootfs"
#define SANDBOX_ID     1000

static int
read_options (const struct bx_host *host, const bx_options *options, struct bx_gvisor_config *cfg,
              bx_error_sink *sink)
{
  int64_t cpu_percent;
  if (host->option_check_known (options, known_options, sink) < 0
      || bx_runtime_read_path (host, options, "runsc", "/usr/bin/runsc", &cfg->runsc, sink) < 0
      || host->option_string (options, "platform", "ptrace", &cfg->platform, sink) < 0
      || bx_runtime_read_path (host, options, "rootfs", DEFAULT_ROOTFS, &cfg->rootfs, sink) < 0
      || bx_runtime_read_path (host, options, "state_dir", "/run/boxmaker-gvisor", &cfg->state_dir,
                               sink)
             < 0
      || bx_runtime_read_path (host, options, "cgroup_path", "/boxmaker-gvisor", &cfg->cgroup_path,
                               sink)
             < 0
      || bx_runtime_read_path (host, options, "slirp4netns", "/usr/bin/slirp4netns",
                               &cfg->slirp4netns, sink)
             < 0
      || bx_runtime_read_path (host, options, "debug_log", NULL, &cfg->debug_log, sink) < 0
      || bx_runtime_read_path (host, options, "nsenter", "/usr/bin/nsenter", &cfg->nsenter, sink)
             < 0
      || host->option_size (options, "output_cap", 262144, &cfg->output_cap, sink) < 0
      || host->option_size (options, "tmp_size", 64ull << 20, &cfg->tmp_size, sink) < 0
      || host->option_size (options, "file_size", 64ull << 20, &cfg->file_size, sink) < 0
      || host->option_size (options, "memory", 512ull << 20, &cfg->memory, sink) < 0
      || host->option_int (options, "pids", 1, 4194304, 128, &cfg->pids, sink) < 0
      || host->option_int (options, "cpu_percent", 1, 100000, 100, &cpu_percent, sink) < 0
      || host->option_int (options, "uid", 1, 65533, SANDBOX_ID, &cfg->uid, sink) < 0
      || host->option_int (options, "gid", 1, 65533, SANDBOX_ID, &cfg->gid, sink) < 0
      || host->option_int (options, "id_base", 65536, 4294901759, 200000, &cfg->id_base, sink) < 0)
    return -1;
  cfg->cpu_millis = cpu_percent * 10;
  /* gVisor's kernel itself lives in the sandbox's memory cgroup: below this it cannot start. */
  if (cfg->memory < (64ull << 20))
    {
      host->error_set (sink, "option memory: below the minimum of 64m (gVisor's own kernel "
                             "counts in it)");
      return -1;
    }
  /* ptrace works everywhere runsc does; kvm needs /dev/kvm.  This runsc has no systrap. */
  if (strcmp (cfg->platform, "ptrace") != 0 && strcmp (cfg->platform, "kvm") != 0
      && strcmp (cfg->platform, "systrap") != 0)
    {
      host->error_set (sink, "option platform: \"%s\" is not ptrace, kvm or systrap",
                       cfg->platform);
      return -1;
    }
  if (strcspn (cfg->cgroup_path, ",\"\\") != strlen (cfg->cgroup_path))
    {
      host->error_set (sink, "option cgroup_path: \"%s\" holds a character runsc does not take",
                       cfg->cgroup_path);
      return -1;
    }
  return bx_runtime_read_limits (host, options, cfg->limit_ms, sink);
}

static void
free_instance (struct bx_gvisor_instance *inst)
{
  if (inst == NULL)
    return;
  bx_runtime_rootfs_folders_free (inst->rootfs_dirs);
  bx_runtime_roots_free (inst->roots);
  free (inst->name);
  free ((char *)inst->cfg.seccomp);
  free (inst->runsc_root);
  free (inst->boxes);
  free (inst);
}

static int
gvisor_create (const struct bx_host *host, const bx_options *options, void **instance,
               bx_error_sink *sink)
{
  struct bx_gvisor_instance *inst = bx_xzalloc (sizeof *inst);
  inst->host = host;
  inst->roots = bx_runtime_roots_new ();
  atomic_init (&inst->counter, 0);
  if (read_options (host, options, &inst->cfg, sink) < 0
      || bx_runtime_check_rootfs (host, inst->cfg.rootfs, sink) < 0
      || (inst->rootfs_dirs
          = bx_runtime_rootfs_folders (host, inst->cfg.rootfs, &inst->rootfs_dir_count, sink))
             == NULL)
    {
      free_instance (inst);
      return -1;
    }
  /* runsc makes the sandbox's cgroups, mounts and namespaces: it needs root. */
  if (geteuid () != 0)
    {
      host->error_set (sink, "gvisor.so needs brokerd to run as root (runsc makes the "
                             "sandboxes' cgroups and namespaces)");
      free_instance (inst);
      return -1;
    }
  inst->cfg.seccomp = bx_gvisor_seccomp_json ();
  inst->name = bx_runtime_instance_name ();
  inst->runsc_root = bx_xasprintf ("%s/runsc", inst->cfg.state_dir);
  inst->boxes = bx_xasprintf ("%s/boxes", inst->cfg.state_dir);
  cleanup_error bx_error why = NULL;
  if (bx_runtime_own_folder (inst->cfg.state_dir, 0711, &why) < 0
      || bx_runtime_own_folder (inst->runsc_root, 0700, &why) < 0
      || bx_runtime_own_folder (inst->boxes, 0711, &why) < 0)
    {
      host->error_set (sink, "option state_dir: %s", bx_error_msg (why));
      free_instance (inst);
      return -1;
    }
  int swept = bx_gvisor_sweep (inst);
  if (swept > 0)
    host->log (host, BX_LOG_INFO, "removed %d sandbox(es) of brokerds that are gone", swept);
  /* Not fatal: runsc may be installed after brokerd starts; each call says so. */
  if (access (inst->cfg.runsc, X_OK) < 0)
    host->log (host, BX_LOG_WARNING,
               "program \"%s\" not found; every call will fail until it is installed "
               "(apt-get install runsc); see docs/runbook.md#runner-unavailable",
               inst->cfg.runsc);
  host->log (host, BX_LOG_INFO,
             "gVisor platform %s, root %s, sandboxes run as uid %lld in gVisor's kernel "
             "(uid %lld on the host), cgroups under %s, state in %s",
             inst->cfg.platform, inst->cfg.rootfs, (long long)inst->cfg.uid,
             (long long)(inst->cfg.id_base + inst->cfg.uid), inst->cfg.cgroup_path,
             inst->cfg.state_dir);
  *instance = inst;
  return 0;
}

/* ---- the sweep ---------------------------------------------------------------------------- */

/* The owner of a sandbox's folder NAME, "<pid>-<start time>-<n>": NAME up to its last '-'. */
static char *
owner_of (const char *name)
{
  const char *dash = strrchr (name, '-');
  return dash == NULL ? NULL : bx_xstrndup (name, (size_t)(dash - name));
}

/* Unmounts and removes what a box folder DIR holds (mount points, egress, config). */
static void
empty_box (int dir_fd, const char *dir)
{
  DIR *d = fdopendir (dup (dir_fd));
  if (d == NULL)
    return;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      cleanup_free char *path = bx_xasprintf ("%s/%s", dir, e->d_name);
      if (e->d_name[0] == 'm' || strcmp (e->d_name, "root") == 0)
        umount2 (path, MNT_DETACH | UMOUNT_NOFOLLOW);
      if (strcmp (e->d_name, "egress") == 0)
        {
          cleanup_free char *sock = bx_xasprintf ("%s/egress.sock", path);
          cleanup_free char *records = bx_xasprintf ("%s/egress-records", path);
          unlink (sock);
          unlink (records);
        }
      if (unlinkat (dir_fd, e->d_name, AT_REMOVEDIR) < 0)
        unlinkat (dir_fd, e->d_name, 0);
    }
  closedir (d);
}

int
bx_gvisor_sweep (struct bx_gvisor_instance *inst)
{
  int removed = 0;
  DIR *d = opendir (inst->boxes);
  if (d == NULL)
    return 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (e->d_name[0] == '.')
        continue;
      cleanup_free char *owner = owner_of (e->d_name);
      if (owner == NULL || bx_runtime_instance_alive (owner))
        continue;
      /* The sandbox first (runsc kills it and removes its cgroup), then its folder. */
      char **argv = bx_gvisor_delete_argv (&inst->cfg, inst->runsc_root, e->d_name);
      static const char *const env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
      struct bx_command cmd
          = { .argv = (const char *const *)argv, .env = env, .deadline = bx_deadline_in (30000) };
      struct bx_command_result r;
      bx_command_run (&cmd, &r);
      if (r.end != BX_COMMAND_EXITED)
        bx_command_reap (&r, 0);
      bx_command_result_clear (&r);
      bx_gvisor_argv_free (argv);
      /* runsc delete leaves the state of a runsc that was killed (its lock file). */
      bx_gvisor_remove_box (inst, e->d_name);
      cleanup_free char *dir = bx_xasprintf ("%s/%s", inst->boxes, e->d_name);
      int fd = openat (dirfd (d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0)
        {
          empty_box (fd, dir);
          close (fd);
        }
      if (unlinkat (dirfd (d), e->d_name, AT_REMOVEDIR) == 0)
        removed++;
    }
  closedir (d);
  return removed;
}

static enum bx_run_status
gvisor_run (void *instance, const bx_run_spec *spec, bx_run_result *result, const char **sentence)
{
  return bx_gvisor_call_run (instance, spec, result, sentence);
}

static void
gvisor_destroy (void *instance)
{
  free_instance (instance);
}

/* What no grant may reach: the root (a grant holding it could change the sandboxes'
 * toolkit), the programs run as root for it (runsc, slirp4netns, nsenter), the state folder
 * and the folder runsc writes its debug logs into as root. */
static const char *const *
gvisor_protected_paths (void *instance)
{
  struct bx_gvisor_instance *inst = instance;
  const char **p = inst->protected;
  *p++ = inst->cfg.rootfs;
  *p++ = inst->cfg.runsc;
  *p++ = inst->cfg.slirp4netns;
  *p++ = inst->cfg.nsenter;
  *p++ = inst->cfg.state_dir;
  if (inst->cfg.debug_log != NULL)
    *p++ = inst->cfg.debug_log;
  *p = NULL;
  return inst->protected;
}

/* A grant's "rootfs" is checked against its digest and remembered (grant_rootfs.h); its
 * calls but http_fetch then run in it.  An image is refused: gvisor.so runs no image. */
static int
gvisor_check_root (void *instance, const char *key, const char *root, bx_error_sink *sink)
{
  struct bx_gvisor_instance *inst = instance;
  return bx_runtime_roots_check (inst->host, inst->roots, "gvisor", key, root, sink);
}

BX_RUNTIME_DEFINE (.name = "gvisor", .create = gvisor_create, .run = gvisor_run,
                   .destroy = gvisor_destroy, .protected_paths = gvisor_protected_paths,
                   .check_root = gvisor_check_root);
