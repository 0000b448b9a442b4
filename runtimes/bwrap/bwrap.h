/* SPDX-License-Identifier: Apache-2.0 */
/* bwrap.so's internal interfaces.  The module links with a version script that exports
 * bx_runtime_entry alone, so nothing declared here leaves the shared object. */
#ifndef BX_BWRAP_H
#define BX_BWRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <boxmaker/runtime.h>

/* The four tools, in the order of the time-limit options. */
enum bx_bwrap_tool
{
  BX_BWRAP_READ_FILE,
  BX_BWRAP_WRITE_FILE,
  BX_BWRAP_SHELL,
  BX_BWRAP_HTTP_FETCH,
};
#define BX_BWRAP_TOOL_COUNT 4

/* The limits a cgroup enforces. */
struct bx_bwrap_limits
{
  uint64_t memory;    /* bytes, memory and swap together */
  int64_t pids;       /* tasks */
  int64_t cpu_millis; /* thousandths of one CPU: 1000 is one whole CPU */
};

/* The module's options, checked once by create() and read-only afterwards. */
struct bx_bwrap_config
{
  const char *bwrap;  /* the program: an absolute path */
  const char *rootfs; /* the read-only root: a folder owned by root */
  const char *rootfs_digest;
  const char *const *rootfs_dirs; /* its top-level folders and links, bound one by one */
  size_t rootfs_dir_count;
  const char *cgroup_root; /* where the cgroup v1 controllers are mounted */
  uint64_t output_cap;
  uint64_t tmp_size;
  uint64_t file_size;
  struct bx_bwrap_limits limits;
  uint64_t limit_ms[BX_BWRAP_TOOL_COUNT];
  int64_t uid, gid; /* the sandbox's, inside and outside its user namespace */
  int64_t slots;
  const char *egress_helper; /* slirp4netns */
  const char *egress_dir;    /* where the per-call egress folders are made */
};

struct bx_bwrap_mount
{
  const char *path;
  int fd; /* the descriptor number the sandbox program sees */
  bool writable;
};

/* One step of a grant's own root (config key rootfs), in bubblewrap's order. */
enum bx_bwrap_root_kind
{
  BX_BWRAP_ROOT_BIND, /* --ro-bind SOURCE DEST: a folder or file of the root */
  BX_BWRAP_ROOT_LINK, /* --symlink SOURCE DEST: a link of the root, SOURCE its target */
  BX_BWRAP_ROOT_DIR,  /* --dir DEST: a folder on the way to a granted folder */
};

struct bx_bwrap_root_step
{
  enum bx_bwrap_root_kind kind;
  char *source; /* NULL for a folder */
  char *dest;
};

/* Where toolkit appears in a grant's own root: read-only, the module's root's bin/toolkit,
 * as podman.so mounts it into a grant's image. */
#define BX_BWRAP_INJECTED_TOOLKIT "/run/boxmaker/toolkit"
/* The PATH of a call in a grant's own root, Debian's default. */
#define BX_BWRAP_ROOT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* What one sandbox gets, besides the config.  Descriptor numbers are the ones bwrap sees. */
struct bx_bwrap_call
{
  const char *tool; /* "read_file", ...; "egress-proxy" for the proxy */
  const struct bx_bwrap_mount *mounts;
  size_t mount_count;
  int seccomp_fd;
  int status_fd;
  int egress_fd;             /* the egress folder, bound at /run/egress; -1 for none */
  bool egress_writable;      /* only for the proxy, who writes the records; a tool only
                                connects to the socket, which works read-only */
  const char *allow;         /* the proxy: its comma-separated host patterns */
  const char *allow_private; /* the proxy: the grant's allow_private ranges, or NULL */
  /* A grant's own root: its steps instead of the module's root, and toolkit from the
   * module's root at BX_BWRAP_INJECTED_TOOLKIT.  NULL: the module's root. */
  const struct bx_bwrap_root_step *root;
  size_t root_count;
};

/* ---- argv.c: the argument list, a pure function of its inputs. ---------------------------
 * A NULL-terminated array whose first element is cfg->bwrap; free with bx_bwrap_argv_free. */
char **bx_bwrap_argv (const struct bx_bwrap_config *cfg, const struct bx_bwrap_call *call);
void bx_bwrap_argv_free (char **argv);

/* ---- path.c ------------------------------------------------------------------------------ */
/* Opens PATH (absolute) with O_PATH without following a symbolic link in any component.
 * A descriptor, or -1 with errno (ELOOP when a component is a link). */
int bx_bwrap_open_nofollow (const char *path);

/* ---- digest.c ---------------------------------------------------------------------------- */
#define BX_BWRAP_DIGEST_LEN 71 /* "sha256:" and 64 hex digits */
/* The content digest of the root ROOT (see digest.c); 0, or -1 with a message.  OWNED: also
 * refuse an entry anyone but root could change. */
int bx_bwrap_rootfs_digest (const char *root, bool owned, char digest[BX_BWRAP_DIGEST_LEN + 1],
                            char **why);

/* ---- grant_root.c: a grant's own root (config key rootfs, host spec_rootfs). ----------- */
/* The roots check_root accepted, so a call runs only in one whose digest was checked. */
struct bx_bwrap_roots;
struct bx_bwrap_roots *bx_bwrap_roots_new (void);
void bx_bwrap_roots_free (struct bx_bwrap_roots *roots);
/* bx_runtime.check_root: KEY "rootfs" with ROOT /PATH@sha256:<64 hex> is checked (a folder
 * of root's alone, holding what its digest says) and remembered; "image" is refused. */
int bx_bwrap_check_root (void *instance, const char *key, const char *root, bx_error_sink *sink);
/* The folder of ROOT, /PATH@sha256:..., when check_root accepted it and it is still the
 * same folder (not one moved into its place since); NULL otherwise (malloc'd). */
char *bx_bwrap_roots_folder (struct bx_bwrap_roots *roots, const char *root);
/* The steps that make the folder ROOT the sandbox's root, with the folders on the way to
 * each of the COUNT granted MOUNTS made in its tmpfs rather than bound (a read-only bind
 * could not hold their mount points).  0 with *steps (free with bx_bwrap_root_steps_free),
 * or -1 with a message. */
int bx_bwrap_root_steps (const char *root, const struct bx_bwrap_mount *mounts, size_t count,
                         struct bx_bwrap_root_step **steps, size_t *step_count, char **why);
void bx_bwrap_root_steps_free (struct bx_bwrap_root_step *steps, size_t count);

/* ---- seccomp.c --------------------------------------------------------------------------- */
/* The filter as BPF bytes (malloc'd), or -1 with a message. */
int bx_bwrap_seccomp_build (void **bpf, size_t *len, char **why);
/* A fresh readable descriptor holding BPF, at offset 0; -1 with errno. */
int bx_bwrap_seccomp_fd (const void *bpf, size_t len);

/* ---- cgroup.c: per-call cgroups, behind this small interface. ----------------------------
 * A pool of slots made at start, each a cgroup in every controller with the limits set, so
 * a call only moves its process in (no mkdir on the call path) and the slot is emptied
 * (every task killed) when the call ends. */
struct bx_bwrap_cgroups;
/* NAME identifies this instance (it holds brokerd's pid and start time, so the sweep can
 * tell a dead brokerd's leftovers from a live one's).  0, or -1 with a message. */
int bx_bwrap_cgroups_open (const char *root, const char *name, size_t slots,
                           const struct bx_bwrap_limits *limits, struct bx_bwrap_cgroups **out,
                           char **why);
/* This brokerd's NAME: "<pid>-<start time>", newly allocated. */
char *bx_bwrap_cgroups_own_name (void);
/* Is NAME, "<pid>-<start time>", a process that still runs?  (true for a name not of that
 * form: what is not ours is never removed) */
bool bx_bwrap_instance_alive (const char *name);
/* Removes the leftovers of instances whose brokerd is gone (never a live one's); returns how
 * many it removed. */
int bx_bwrap_cgroups_sweep (const char *root);
/* Sets SLOT's limits to LIMITS (before a call starts in it; unchanged files are not
 * written again).  0, or -1 with errno. */
int bx_bwrap_cgroups_limit (struct bx_bwrap_cgroups *cg, size_t slot,
                            const struct bx_bwrap_limits *limits);
/* Waits for a free slot and takes it; SIZE_MAX, taking none, once STOP (ARG) is true. */
size_t bx_bwrap_cgroups_acquire (struct bx_bwrap_cgroups *cg, bool (*stop) (const void *),
                                 const void *arg);
/* The socket of SLOT's keeper, which forks the slot's sandboxes (keeper.c). */
int bx_bwrap_cgroups_keeper (struct bx_bwrap_cgroups *cg, size_t slot);
/* Starts SLOT's keeper again (after it died); only the slot's holder calls it.  0 or -1. */
int bx_bwrap_cgroups_revive (struct bx_bwrap_cgroups *cg, size_t slot);
/* How many times the slot's memory limit has killed a task so far. */
uint64_t bx_bwrap_cgroups_oom_kills (struct bx_bwrap_cgroups *cg, size_t slot);
/* Kills every task in SLOT until it is empty. */
void bx_bwrap_cgroups_kill (struct bx_bwrap_cgroups *cg, size_t slot);
/* Kills what is left and gives the slot back. */
void bx_bwrap_cgroups_release (struct bx_bwrap_cgroups *cg, size_t slot);
/* Kills everything, removes every slot and frees the pool. */
void bx_bwrap_cgroups_close (struct bx_bwrap_cgroups *cg);

/* ---- run.c: one sandbox process. ---------------------------------------------------------- */
#define BX_BWRAP_STDERR_KEEP 4096

enum bx_bwrap_end
{
  BX_BWRAP_EXITED,    /* bwrap ended: see started and tool_exit */
  BX_BWRAP_NOT_RUN,   /* could not be started (spawn_errno) */
  BX_BWRAP_TIMED_OUT, /* the deadline passed first */
  BX_BWRAP_CAPPED,    /* standard output went past the cap first */
  BX_BWRAP_CANCELLED, /* the call's cancel descriptor became readable first */
};

struct bx_bwrap_outcome
{
  enum bx_bwrap_end end;
  int spawn_errno;
  bool started;  /* bwrap reported the sandbox's process (json status "child-pid") */
  int tool_exit; /* bwrap reported the sandbox's exit code ("exit-code"), or -1 */
  char *out;     /* standard output, at most the cap (malloc'd, may be NULL) */
  size_t out_len;
  char err[BX_BWRAP_STDERR_KEEP + 1];
  size_t err_len;
};

/* What the child does between fork and exec. */
struct bx_bwrap_child
{
  struct bx_bwrap_cgroups *cgroups; /* whose keeper for SLOT forks it */
  size_t slot;
  int64_t uid, gid;   /* -1: keep */
  uint64_t file_size; /* 0: no limit */
  const int *fds;     /* descriptors the child gets as 3, 4, ... in this order */
  size_t fd_count;
  /* fds[mount_first] and the mount_count after it are mount sources: each is bound in
   * alone, without the mounts below it (alone.c). */
  size_t mount_first, mount_count;
};

/* Runs ARGV as set up by CHILD, feeding INPUT, keeping standard output up to CAP bytes,
 * until it exits, DEADLINE_MS passes or CANCEL_FD (-1: none) becomes readable.  *pidfd is
 * the pidfd of the child still running after TIMED_OUT, CAPPED or CANCELLED, -1 otherwise.
 * STATUS_READ is the read end of the json status pipe (its write end is among CHILD's
 * fds), or -1. */
void bx_bwrap_run (char *const argv[], const struct bx_bwrap_child *child, const char *input,
                   size_t input_len, uint64_t cap, int64_t deadline_ms, int status_read,
                   int cancel_fd, struct bx_bwrap_outcome *o, int *pidfd);
/* Only starts it, with IN, OUT and ERR as its standard streams: a pidfd, or -1 with errno. */
int bx_bwrap_spawn (char *const argv[], const struct bx_bwrap_child *child, int in, int out,
                    int err);
/* Kills the process of PIDFD, waits for its end and closes PIDFD (a no-op for -1). */
void bx_bwrap_reap (int pidfd);
/* In the child: sets up what CHILD says, with IN, OUT and ERR as standard streams, and
 * runs ARGV; on failure writes errno to REPORT and exits 127.  Async-signal-safe. */
void bx_bwrap_child_exec (char *const argv[], const struct bx_bwrap_child *child, int in, int out,
                          int err, int report) __attribute__ ((noreturn));

/* ---- alone.c ----------------------------------------------------------------------------- */
/* In the child, as root: moves it into a mount namespace of its own and there mounts each
 * of the COUNT mount sources FDS on top of itself without the mounts below it, each
 * descriptor now naming that copy.  0, or -1 with errno: ESTALE when a source was removed,
 * moved under a symbolic link or covered by another mount since it was opened (the call's
 * source changed, not the runtime).  Async-signal-safe. */
int bx_bwrap_bind_alone (const int *fds, size_t count);

/* ---- keeper.c: the process that forks a slot's sandboxes inside the slot's cgroups. ----- */
/* Forks a keeper that first moves itself into the cgroups whose cgroup.procs descriptors
 * are PROCS; returns the socket to it (and *pid), or -1 with errno. */
int bx_bwrap_keeper_start (const int *procs, size_t procs_count, pid_t *pid);
/* Asks the keeper on SOCK to start ARGV as CHILD says: a pidfd, or -1 with errno. */
int bx_bwrap_keeper_spawn (int sock, char *const argv[], const struct bx_bwrap_child *child, int in,
                           int out, int err);
void bx_bwrap_outcome_clear (struct bx_bwrap_outcome *o);

/* ---- module.c / call.c: one instance and one call. ---------------------------------------- */
struct bx_bwrap_instance
{
  const struct bx_host *host;
  struct bx_bwrap_config cfg;
  struct bx_bwrap_cgroups *cgroups;
  void *bpf;
  size_t bpf_len;
  char **rootfs_dirs;
  char *name; /* "<pid>-<start time>": names this instance's cgroups and egress folders */
  const char *protected[5];     /* protected_paths: rootfs, bwrap, slirp4netns, egress_dir */
  struct bx_bwrap_roots *roots; /* grants' own roots that check_root accepted */
  uint64_t _Atomic counter;
};

/* call.c: the argument list for CALL run with EXTRA_FDS, its mount sources (bwrap sees them
 * from 5 up, after the seccomp filter at 3 and the json status at 4) in cgroup SLOT. */
#define BX_BWRAP_FD_FIRST_EXTRA 5
void bx_bwrap_sandbox (struct bx_bwrap_instance *inst, struct bx_bwrap_call *call,
                       const int *extra_fds, size_t extra_count, size_t slot, const char *input,
                       size_t input_len, uint64_t cap, uint64_t file_size, int64_t deadline,
                       int cancel_fd, struct bx_bwrap_outcome *o, int *running);
/* The tool's sandbox in SLOT, with the egress folder EGRESS_FD (or -1) at /run/egress. */
enum bx_run_status bx_bwrap_run_tool (struct bx_bwrap_instance *inst, const bx_run_spec *spec,
                                      const char *name, int tool, size_t slot, int egress_fd,
                                      bx_run_result *result, const char **sentence);
/* egress.c: the proxy's sandbox, slirp4netns, then the tool's sandbox, all in SLOT. */
enum bx_run_status bx_bwrap_egress_run (struct bx_bwrap_instance *inst, const bx_run_spec *spec,
                                        const char *name, int tool, size_t slot,
                                        bx_run_result *result, const char **sentence);
/* Makes the folder of the egress folders (0711, brokerd's, writable by no one else). */
int bx_bwrap_egress_prepare (const char *root, char **why);
/* Removes the egress folders of brokerds that are gone; returns how many. */
int bx_bwrap_egress_sweep (const char *root);
/* The fixed sentences egress.c answers with (call.c has them all). */
extern const char bx_bwrap_sentence_unavailable[];
extern const char bx_bwrap_sentence_could_not_run[];
extern const char bx_bwrap_sentence_cancelled[];

enum bx_run_status bx_bwrap_call_run (struct bx_bwrap_instance *inst, const bx_run_spec *spec,
                                      bx_run_result *result, const char **sentence);

#endif
