/* SPDX-License-Identifier: Apache-2.0 */
/* bwrap.so: runs every allowed call in a fresh bubblewrap sandbox, with the same promises
 * as podman.so (a read-only root, no network but the egress proxy's socket, every limit
 * with a fixed sentence) at a fraction of its start-up cost.  This file is the module's
 * face: its table, its options and its instance. */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "bwrap.h"
#include "instance.h"
#include "rootfs.h"
#include "rootfs_digest.h"
#include "tool_limits.h"

static const char *const known_options[] = {
  "bwrap",       "rootfs",        "rootfs_digest", "cgroup_root", "output_cap",   "tmp_size",
  "file_size",   "memory",        "pids",          "cpu_percent", "read_file_ms", "write_file_ms",
  "shell_ms",    "http_fetch_ms", "mcp_call_ms",   "uid",         "gid",          "slots",
  "slirp4netns", "egress_dir",    "pool",          NULL,
};

#define DEFAULT_ROOTFS "/var/lib/boxmaker-bwrap/rootfs"
#define NOBODY         65534

/* The root must be a folder only root can change, holding bin/toolkit; its top-level
 * folders are bound one by one, in name order. */
static int
check_rootfs (const struct bx_host *host, struct bx_bwrap_instance *inst, bx_error_sink *sink)
{
  size_t n;
  if (bx_runtime_check_rootfs (host, inst->cfg.rootfs, sink) < 0
      || (inst->rootfs_dirs = bx_runtime_rootfs_folders (host, inst->cfg.rootfs, &n, sink)) == NULL)
    return -1;
  inst->cfg.rootfs_dirs = (const char *const *)inst->rootfs_dirs;
  inst->cfg.rootfs_dir_count = n;
  return 0;
}

/* The root must be the one the config pins. */
static int
check_digest (const struct bx_host *host, const struct bx_bwrap_config *cfg, bx_error_sink *sink)
{
  const char *want = cfg->rootfs_digest;
  bool form = strlen (want) == BX_RUNTIME_DIGEST_LEN && strncmp (want, "sha256:", 7) == 0
              && strspn (want + 7, "0123456789abcdef") == 64;
  if (!form)
    {
      host->error_set (sink,
                       "option rootfs_digest: \"%s\" is not sha256: and 64 lowercase hex "
                       "digits",
                       want);
      return -1;
    }
  char got[BX_RUNTIME_DIGEST_LEN + 1];
  cleanup_error bx_error why = NULL;
  if (bx_runtime_rootfs_digest (cfg->rootfs, false, got, &why) < 0)
    {
      host->error_set (sink, "option rootfs_digest: cannot compute the digest of %s: %s",
                       cfg->rootfs, bx_error_msg (why));
      return -1;
    }
  if (strcmp (got, want) != 0)
    {
      host->error_set (sink, "option rootfs_digest: %s holds %s, not %s", cfg->rootfs, got, want);
      return -1;
    }
  return 0;
}

static int
read_options (const struct bx_host *host, const bx_options *options, struct bx_bwrap_config *cfg,
              bx_error_sink *sink)
{
  int64_t cpu_percent;
  if (host->option_check_known (options, known_options, sink) < 0
      || bx_runtime_read_path (host, options, "bwrap", "/usr/bin/bwrap", &cfg->bwrap, sink) < 0
      || bx_runtime_read_path (host, options, "rootfs", DEFAULT_ROOTFS, &cfg->rootfs, sink) < 0
      || host->option_string (options, "rootfs_digest", NULL, &cfg->rootfs_digest, sink) < 0
      || bx_runtime_read_path (host, options, "cgroup_root", NULL, &cfg->cgroup_root, sink) < 0
      || bx_runtime_read_path (host, options, "slirp4netns", "/usr/bin/slirp4netns",
                               &cfg->egress_helper, sink)
             < 0
      || bx_runtime_read_path (host, options, "egress_dir", "/run/boxmaker-bwrap", &cfg->egress_dir,
                               sink)
             < 0
      || host->option_size (options, "output_cap", 262144, &cfg->output_cap, sink) < 0
      || host->option_size (options, "tmp_size", 64ull << 20, &cfg->tmp_size, sink) < 0
      || host->option_size (options, "file_size", 64ull << 20, &cfg->file_size, sink) < 0
      || host->option_size (options, "memory", 512ull << 20, &cfg->limits.memory, sink) < 0
      || host->option_int (options, "pids", 1, 4194304, 128, &cfg->limits.pids, sink) < 0
      || host->option_int (options, "cpu_percent", 1, 100000, 100, &cpu_percent, sink) < 0
      || host->option_int (options, "slots", 1, 1024, 16, &cfg->slots, sink) < 0
      || host->option_int (options, "pool", 0, 1024, 0, &cfg->pool, sink) < 0)
    return -1;
  if (cfg->pool > cfg->slots)
    {
      host->error_set (sink,
                       "option pool: %lld sandboxes made ahead need as many slots, and "
                       "slots is %lld",
                       (long long)cfg->pool, (long long)cfg->slots);
      return -1;
    }
  cfg->limits.cpu_millis = cpu_percent * 10;
  if (cfg->limits.memory < (8ull << 20))
    {
      host->error_set (sink, "option memory: below the minimum of 8m");
      return -1;
    }
  if (bx_runtime_read_limits (host, options, cfg->limit_ms, sink) < 0)
    return -1;

  /* As root, the sandbox runs as nobody; otherwise as brokerd's own user, the only one it
   * can be.  It is never uid 0, inside or out. */
  bool root = geteuid () == 0;
  if (host->option_int (options, "uid", 1, 4294967294, root ? NOBODY : (int64_t)geteuid (),
                        &cfg->uid, sink)
          < 0
      || host->option_int (options, "gid", 1, 4294967294, root ? NOBODY : (int64_t)getegid (),
                           &cfg->gid, sink)
             < 0)
    return -1;
  if (!root && (cfg->uid != (int64_t)geteuid () || cfg->gid != (int64_t)getegid ()))
    {
      host->error_set (sink,
                       "options uid and gid: brokerd does not run as root, so sandboxes "
                       "run as its own uid %u and gid %u",
                       (unsigned)geteuid (), (unsigned)getegid ());
      return -1;
    }
  return 0;
}

static void
free_instance (struct bx_bwrap_instance *inst)
{
  if (inst == NULL)
    return;
  bx_bwrap_pool_close (inst->pool);
  bx_bwrap_cgroups_close (inst->cgroups);
  bx_runtime_rootfs_folders_free (inst->rootfs_dirs);
  bx_runtime_roots_free (inst->roots);
  free (inst->bpf);
  free (inst->name);
  free (inst);
}

static int
bwrap_create (const struct bx_host *host, const bx_options *options, void **instance,
              bx_error_sink *sink)
{
  struct bx_bwrap_instance *inst = bx_xzalloc (sizeof *inst);
  inst->host = host;
  inst->roots = bx_runtime_roots_new ();
  atomic_init (&inst->counter, 0);
  if (read_options (host, options, &inst->cfg, sink) < 0 || check_rootfs (host, inst, sink) < 0)
    {
      free_instance (inst);
      return -1;
    }
  cleanup_error bx_error why = NULL;
  if (inst->cfg.rootfs_digest != NULL && check_digest (host, &inst->cfg, sink) < 0)
    {
      free_instance (inst);
      return -1;
    }
  if (bx_bwrap_seccomp_build (&inst->bpf, &inst->bpf_len, &why) < 0)
    {
      host->error_set (sink, "cannot build the seccomp filter: %s", bx_error_msg (why));
      free_instance (inst);
      return -1;
    }

  /* Each sandbox's shares of its uid's counters, from the host's limits at start. */
  bx_bwrap_ucounts_shares ((size_t)inst->cfg.slots, &inst->ucounts);
  if (bx_bwrap_ucounts_check (&inst->ucounts, inst->cfg.uid, inst->cfg.gid, &why) < 0)
    {
      host->error_set (sink,
                       "cannot bound the sandboxes' shares of their uid's kernel counters: %s; "
                       "bwrap.so runs nothing where one sandbox could take them all",
                       bx_error_msg (why));
      free_instance (inst);
      return -1;
    }
  /* Limits or nothing: without cgroups the memory, pids and CPU limits would not hold. */
  inst->name = bx_runtime_instance_name ();
  if (bx_bwrap_cgroups_open (inst->cfg.cgroup_root, inst->name, (size_t)inst->cfg.slots,
                             &inst->cfg.limits, &inst->cgroups, &why)
      < 0)
    {
      host->error_set (sink,
                       "cannot set up the limits' cgroups: %s; bwrap.so runs nothing "
                       "without its memory, pids and CPU limits (run brokerd as root)",
                       bx_error_msg (why));
      free_instance (inst);
      return -1;
    }
  int swept = bx_bwrap_cgroups_sweep (inst->cgroups);
  if (swept > 0)
    host->log (host, BX_LOG_INFO, "removed the cgroups of %d brokerd(s) that are gone", swept);
  if (bx_runtime_own_folder (inst->cfg.egress_dir, 0711, &why) < 0)
    {
      host->error_set (sink, "option egress_dir: %s", bx_error_msg (why));
      free_instance (inst);
      return -1;
    }
  swept = bx_bwrap_egress_sweep (inst->cfg.egress_dir);
  if (swept > 0)
    host->log (host, BX_LOG_INFO, "removed %d egress folder(s) of brokerds that are gone", swept);

  /* Not fatal: bubblewrap may be installed after brokerd starts; each call says so. */
  if (access (inst->cfg.bwrap, X_OK) < 0)
    host->log (host, BX_LOG_WARNING,
               "program \"%s\" not found; every call will fail until it is installed; "
               "see docs/runbook.md#runner-unavailable",
               inst->cfg.bwrap);
  if (bx_bwrap_pool_open (inst, (size_t)inst->cfg.pool, &inst->pool, &why) < 0)
    {
      host->error_set (sink, "option pool: %s", bx_error_msg (why));
      free_instance (inst);
      return -1;
    }
  host->log (host, BX_LOG_INFO,
             "root %s, sandboxes run as uid %lld, %lld %s slots in %s, %lld made ahead",
             inst->cfg.rootfs, (long long)inst->cfg.uid, (long long)inst->cfg.slots,
             bx_bwrap_cgroups_what (inst->cgroups), bx_bwrap_cgroups_where (inst->cgroups),
             (long long)inst->cfg.pool);
  *instance = inst;
  return 0;
}

static enum bx_run_status
bwrap_run (void *instance, const bx_run_spec *spec, bx_run_result *result, const char **sentence)
{
  return bx_bwrap_call_run (instance, spec, result, sentence);
}

static void
bwrap_destroy (void *instance)
{
  free_instance (instance);
}

/* What no grant may reach: the root (a grant holding it could change the sandboxes' toolkit),
 * the programs run as brokerd's helpers, and the egress folders. */
static const char *const *
bwrap_protected_paths (void *instance)
{
  struct bx_bwrap_instance *inst = instance;
  const char **p = inst->protected;
  *p++ = inst->cfg.rootfs;
  *p++ = inst->cfg.bwrap;
  *p++ = inst->cfg.egress_helper;
  *p++ = inst->cfg.egress_dir;
  *p = NULL;
  return inst->protected;
}

/* A grant's "rootfs" is checked against its digest and remembered (grant_rootfs.h). */
static int
bwrap_check_root (void *instance, const char *key, const char *root, bx_error_sink *sink)
{
  struct bx_bwrap_instance *inst = instance;
  return bx_runtime_roots_check (inst->host, inst->roots, "bwrap", key, root, sink);
}

BX_RUNTIME_DEFINE (.name = "bwrap", .create = bwrap_create, .run = bwrap_run,
                   .destroy = bwrap_destroy, .protected_paths = bwrap_protected_paths,
                   .check_root = bwrap_check_root);
