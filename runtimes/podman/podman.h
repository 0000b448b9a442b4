/* SPDX-License-Identifier: Apache-2.0 */
/* podman.so's internal interfaces.  Everything declared here is hidden (the module builds
 * with -fvisibility=hidden and links base behind a version script), so only
 * bx_runtime_entry leaves the shared object. */
#ifndef BX_PODMAN_H
#define BX_PODMAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <boxmaker/runtime.h>

#include "bx/cleanup.h"
#include "bx/command.h"
#include "bx/contract.h"
#include "bx/deadline.h"

/* The module's options, checked once by create() and read-only afterwards. */
struct bx_podman_config
{
  const char *podman; /* the program: a path, or a bare name looked up in PATH */
  const char *image;
  const char *egress_network;
  uint64_t output_cap;
  const char *memory; /* as written in the config ("512m"), already checked as a size */
  int64_t pids;
  uint64_t limit_ms[BX_TOOL_COUNT];  /* by enum bx_tool */
  const char *const *global_options; /* between the program and its subcommand */
  size_t global_count;
  const char *const *run_options; /* after the fixed `run` options, before the mounts */
  size_t run_count;
  bool rootless;      /* brokerd (and so podman) is not root */
  bool cgroup_limits; /* memory, pids and CPU limits are passed, and must hold */
  const char *cpus;   /* as written ("1", "0.5"), already checked as a number */
  uint64_t file_size; /* bytes: RLIMIT_FSIZE of every process in the sandbox */
  /* Sandbox ids 0..65535 are ids base.. of podman's user namespace: host ids as root;
   * rootless, where 0 is brokerd's user, the user's subordinate ids from 1 on. */
  int64_t uidmap_base;
  const char *seccomp;   /* the seccomp profile podman gets */
  const char *toolkit;   /* the host's static toolkit, mounted into a grant's own image */
  int64_t slots;         /* calls brokerd runs at once: each container's share of counters */
  const char *hooks_dir; /* podman --hooks-dir (podman_ucounts.c); NULL: none */
};

/* podman.so's slots when its options name none (brokerd's config.c knows it too): brokerd's
 * max_running default before podman.so had slots, max_connections' default. */
#define BX_PODMAN_DEFAULT_SLOTS 64

/* How many ids the sandboxes' user namespace maps, from uidmap_base on. */
#define BX_PODMAN_MAP_SIZE 65536

/* Where toolkit appears in a grant's own image (spec_image): read-only, from the `toolkit`
 * option, so that any image runs it unchanged. */
#define BX_PODMAN_INJECTED_TOOLKIT BX_RUNTIME_INJECTED_TOOLKIT

struct bx_podman_mount
{
  const char *path;
  bool writable;
};

/* What one tool container gets, besides the config. */
struct bx_podman_call
{
  const char *name; /* the container's name */
  const char *tool; /* "read_file", ... */
  const struct bx_podman_mount *mounts;
  size_t mount_count;
  const char *egress_dir; /* http_fetch only: mounted at /run/egress; NULL otherwise */
  uint64_t timeout_s;     /* podman --timeout: the container's own deadline */
  /* The call's own limits (ABI 1.1 spec_limit); 0: the config's option applies. */
  uint64_t memory_bytes;
  uint64_t pids;
  uint64_t cpu_millis;
  uint64_t file_size;
  const char *image; /* a grant's own image, with toolkit mounted in; NULL: cfg->image */
  /* cgroup v2 with limits: the container's cgroup gets memory.oom.group 1, so that the
   * kernel's out-of-memory kill takes the whole container (as on cgroup v1) and the call
   * ends with exit 137, not with the one process killed and the rest answering. */
  bool oom_group;
};

/* ---- podman_argv.c: the argument lists, pure functions of their inputs. ------------------------
 * Each returns a NULL-terminated array whose first element is cfg->podman; free it with
 * bx_podman_argv_free. */
char **bx_podman_argv_tool (const struct bx_podman_config *cfg, const struct bx_podman_call *call);
char **bx_podman_argv_proxy (const struct bx_podman_config *cfg, const char *name,
                             const char *egress_dir, uint64_t timeout_s, const char *const *hosts,
                             size_t host_count);
/* The names of this instance's containers (any state): `ps -a` filtered on TOKEN. */
char **bx_podman_argv_ps (const struct bx_podman_config *cfg, const char *token);
char **bx_podman_argv_kill (const struct bx_podman_config *cfg, const char *name);
char **bx_podman_argv_rm (const struct bx_podman_config *cfg, const char *name);
void bx_podman_argv_free (char **argv);

/* ---- podman_image_check.c: bx_runtime.check_root, a grant's image present and as pinned. */
/* `podman [global options] image inspect --format {{.Digest}} IMAGE`. */
char **bx_podman_argv_inspect (const struct bx_podman_config *cfg, const char *image);
int bx_podman_check_root (void *instance, const char *key, const char *root, bx_error_sink *sink);

/* ---- podman_host_check.c: what this podman can promise (`podman info`), asked once. ------ */
#define BX_PODMAN_MAX_RANGES 16
struct bx_podman_id_range
{
  int64_t container, host, size;
};
struct bx_podman_info
{
  bool rootless;
  char cgroup_version[16]; /* "v1", "v2" */
  char cgroup_manager[32]; /* "systemd", "cgroupfs" */
  bool memory, pids, cpu;  /* among the controllers podman can use */
  char controllers[256];   /* all of them, for messages */
  struct bx_podman_id_range uidmap[BX_PODMAN_MAX_RANGES], gidmap[BX_PODMAN_MAX_RANGES];
  size_t uid_count, gid_count; /* rootless only: podman's own user namespace */
};
enum bx_podman_check
{
  BX_PODMAN_CHECK_UNASKED = 0, /* not yet, or podman could not be asked */
  BX_PODMAN_CHECK_OK,
  BX_PODMAN_CHECK_REFUSED, /* this host cannot keep what the options promise */
};
char **bx_podman_argv_info (const struct bx_podman_config *cfg);
/* 0, or -1 when TEXT is not podman info's JSON. */
int bx_podman_info_parse (const char *text, size_t len, struct bx_podman_info *info);
/* 0 when the memory, pids and CPU limits hold under INFO's podman; else -1 with BUF
 * saying what the host lacks and how to give it. */
int bx_podman_limits_problem (const struct bx_podman_info *info, char *buf, size_t len);
/* The host id of sandbox id 0 (uid, or gid with GID), or -1 with BUF saying why none is
 * usable: the ids do not fit the user's subordinate ones, or hold SELF. */
int64_t bx_podman_sandbox_id (const struct bx_podman_info *info, int64_t base, bool gid, uid_t self,
                              char *buf, size_t len);

/* ---- podman_environment.c: brokerd's environment less systemd's variables for brokerd alone */
char **bx_podman_environment (void);
void bx_podman_environment_free (char **env);

/* ---- podman_egress_private.c: allow_private for the proxy. --------------------------------- */
/* How many private ranges the spec holds (0 from a host older than ABI 1.1). */
size_t bx_podman_private_count (const struct bx_host *host, const bx_run_spec *spec);
/* Every range is non-empty text without a comma. */
bool bx_podman_private_ok (const struct bx_host *host, const bx_run_spec *spec);
/* ARGV (a proxy list) with `--allow-private R1,R2...` appended; unchanged when COUNT is 0. */
char **bx_podman_argv_add_private (char **argv, const char *const *ranges, size_t count);

/* ---- podman_name.c ----------------------------------------------------------------------- */
#define BX_PODMAN_TOKEN_LEN 12
/* Fills TOKEN (BX_PODMAN_TOKEN_LEN hex digits and a NUL) from the kernel's random source;
 * 0, or -1 with errno. */
int bx_podman_token (char token[BX_PODMAN_TOKEN_LEN + 1]);
/* boxmaker-<session>-<call>-<n>-<token>, newly allocated. */
char *bx_podman_name (const char *session, const char *call, uint64_t n, const char *token);

/* ---- podman_module.c / podman_call.c: one instance and one call. ------------------------- */
struct bx_podman_instance
{
  const struct bx_host *host;
  struct bx_podman_config cfg;
  char token[BX_PODMAN_TOKEN_LEN + 1];
  uint64_t _Atomic counter; /* the one piece of shared mutable state */
  char *egress_root;        /* <home>/run/egress, or NULL without a home */
  char *seccomp_owned;      /* cfg.seccomp when the module found it itself */
  char *hooks_dir_owned;    /* cfg.hooks_dir, removed at destroy */
  char *ucounts_helper;     /* podman-ucounts beside the module */
  int lock_fd;              /* flock'd lock_path while alive, or -1 */
  char *lock_path;          /* <home>/run/instances/<token> */
  int watch_fd;             /* to the watcher process, or -1 */
  pid_t watch_pid;
  char **protected; /* NULL-terminated: what no grant may reach (podman_module.c) */
  char **env;       /* every podman process's environment (podman_environment.c) */
  /* podman_host_check.c: asked at create, or at the first call when podman was missing then. */
  pthread_mutex_t check_lock;
  enum bx_podman_check check;
  char check_problem[1024];
  int64_t sandbox_uid, sandbox_gid; /* host ids of the sandboxes' root */
  bool oom_group;                   /* podman reports cgroup v2: calls set memory.oom.group */
};

/* podman_host_check.c: the instance's verdict, asking podman when it has none yet; BUF gets the
 * reason of anything but BX_PODMAN_CHECK_OK. */
enum bx_podman_check bx_podman_host_check (struct bx_podman_instance *inst, char *buf, size_t len);

/* ---- podman_ucounts.c: each container's share of the kernel's per-uid counters. ---------------
 * Writes an OCI hooks folder whose createRuntime hook runs HELPER (podman-ucounts), and sets
 * cfg.hooks_dir to it; -1 with the reason in SINK. */
int bx_podman_ucounts_hook (struct bx_podman_instance *inst, const char *helper,
                            bx_error_sink *sink);
/* Removes such a folder. */
void bx_podman_ucounts_remove (const char *dir);

/* ---- podman_mounts.c: what a mount source is when the call starts. ----------------------- */
/* 0 when PATH is a folder reached without any symbolic link on the way (or is missing,
 * which podman reports itself); -1 with errno ELOOP for a link, ENOTDIR for a file. */
int bx_podman_check_source (const char *path);

/* ---- podman_watch.c: nothing outlives brokerd. --------------------------------------------
 * A watcher process, forked at create, holds the names of the running containers; when
 * brokerd ends, however it ends, the watcher kills and removes those still there. */
int bx_podman_watch_start (struct bx_podman_instance *inst);
void bx_podman_watch (struct bx_podman_instance *inst, const char *name, bool running);
void bx_podman_watch_stop (struct bx_podman_instance *inst);

/* ---- podman_sweep.c: what earlier brokerds left. ------------------------------------------
 * Takes this instance's lock in <home>/run/instances, then removes the containers and egress
 * folders of every instance whose lock nobody holds. */
void bx_podman_sweep (struct bx_podman_instance *inst);

/* podman_call.c: runs podman with ARGV (bx_command): INPUT on standard input, standard output kept
 * up to CAP when KEEP, until DEADLINE_MS or until CANCEL_FD (-1: none) is readable; *o's
 * process, if any is left, is for bx_command_reap. */
void bx_podman_execute (const struct bx_podman_instance *inst, char **argv, const char *input,
                        size_t input_len, bool keep, uint64_t cap, int64_t deadline_ms,
                        int cancel_fd, struct bx_command_result *o);

/* podman_call.c: `podman kill` then `podman rm -f` NAME, failures only logged. */
void bx_podman_kill_and_remove (struct bx_podman_instance *inst, const char *name);
/* Removes the folder PARENT/NAME and all it holds, without following symbolic links. */
void bx_podman_remove_tree_at (int parent, const char *name);

enum bx_run_status bx_podman_call_run (struct bx_podman_instance *inst, const bx_run_spec *spec,
                                       bx_run_result *result, const char **sentence);

#endif
