/* SPDX-License-Identifier: Apache-2.0 */
/* gvisor.so's internal interfaces.  The module links with a version script that exports
 * bx_runtime_entry alone, so nothing declared here leaves the shared object. */
#ifndef BX_GVISOR_H
#define BX_GVISOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <boxmaker/runtime.h>

#include "grant_rootfs.h"
#include "tool_limits.h"

/* The module's options, checked once by create() and read-only afterwards. */
struct bx_gvisor_config
{
  const char *runsc;       /* the program: an absolute path */
  const char *platform;    /* runsc --platform: "ptrace" or "kvm" */
  const char *rootfs;      /* the read-only root: a folder owned by root */
  const char *state_dir;   /* runsc's --root, the bundles, the mount points, egress folders */
  const char *cgroup_path; /* the cgroup the sandboxes' cgroups are made in */
  const char *slirp4netns; /* the egress proxy's way out */
  const char *debug_log;   /* runsc --debug-log's folder, or NULL: no debug log */
  const char *nsenter;     /* starts runsc in the proxy's network namespace */
  uint64_t output_cap;
  uint64_t tmp_size;
  uint64_t file_size;
  uint64_t memory;
  int64_t pids;
  int64_t cpu_millis;
  uint64_t limit_ms[BX_RUNTIME_TOOL_COUNT];
  int64_t uid, gid;    /* the sandbox's processes' (inside gVisor's own kernel) */
  int64_t id_base;     /* the host uid and gid of the sandbox's root: 0 to 65535 map there */
  const char *seccomp; /* the OCI seccomp section (gvisor_seccomp.c) */
};

/* One mount of a sandbox: SOURCE (a path of the module's own, never the grant's) at DEST. */
struct bx_gvisor_mount
{
  const char *dest;
  const char *source;
  bool writable;
};

/* What one sandbox gets besides the config. */
struct bx_gvisor_box
{
  const char *root;        /* the sandbox's root folder (gvisor_call.c makes it of the module's) */
  const char *path;        /* the process's PATH; NULL: /bin (the module's root) */
  const char *const *args; /* the process's arguments: toolkit TOOL, or the proxy */
  const struct bx_gvisor_mount *mounts;
  size_t mount_count;
  const char *egress_source; /* bound at /run/egress; NULL for none */
  bool egress_writable;      /* the proxy's: it makes the socket and writes the records */
  int64_t uid, gid;          /* the process's, when not the config's (0) */
  const char *cgroup;        /* cgroupsPath */
  uint64_t memory;
  int64_t pids;
  int64_t cpu_millis;
  uint64_t file_size;
};

/* ---- gvisor_spec.c: the bundle's config.json, a pure function of its inputs (malloc'd). - */
char *bx_gvisor_spec_json (const struct bx_gvisor_config *cfg, const struct bx_gvisor_box *box);

/* ---- gvisor_seccomp.c: the OCI seccomp section of every sandbox (malloc'd). ------------- */
char *bx_gvisor_seccomp_json (void);

/* ---- gvisor_argv.c: runsc's arguments (state folder ROOT) for container ID of the bundle BUNDLE.
 * NETWORK: "none", or "host" for the proxy, run in a namespace of slirp4netns's.  HOST_UDS: "open"
 * lets the tool connect to the proxy's socket, "create" lets the proxy make it.  NULL-terminated,
 * free with bx_gvisor_argv_free. */
char **bx_gvisor_argv (const struct bx_gvisor_config *cfg, const char *root, const char *id,
                       const char *bundle, const char *network, const char *host_uds);
/* The same for `runsc --root ROOT delete --force ID`. */
char **bx_gvisor_delete_argv (const struct bx_gvisor_config *cfg, const char *root, const char *id);
void bx_gvisor_argv_free (char **argv);

/* ---- gvisor_call.c: one call. ------------------------------------------------------------ */
struct bx_gvisor_instance
{
  const struct bx_host *host;
  struct bx_gvisor_config cfg;
  char *name; /* "<pid>-<start time>" */
  char *runsc_root;
  char *boxes;        /* <state_dir>/boxes: a folder per sandbox, <name>-<n> */
  char **rootfs_dirs; /* the root's top-level folders, bound one by one */
  size_t rootfs_dir_count;
  const char *protected[7];
  struct bx_runtime_roots *roots; /* grants' own roots that check_root accepted */
  uint64_t _Atomic counter;
};

enum bx_run_status bx_gvisor_call_run (struct bx_gvisor_instance *inst, const bx_run_spec *spec,
                                       bx_run_result *result, const char **sentence);
/* Kills what is left of sandbox ID (every task of its cgroups, once runsc is dead) and
 * removes its cgroups and runsc's state files, without waiting for runsc. */
void bx_gvisor_remove_box (struct bx_gvisor_instance *inst, const char *id);
/* Removes what instances that are gone left: their sandboxes, mounts and folders. */
int bx_gvisor_sweep (struct bx_gvisor_instance *inst);

#endif
