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

#include "grant_rootfs.h"

#include "bx/command.h"
#include "bx/error.h"

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
  const char *cgroup_root; /* v1: where the controllers are; v2: the subtree; NULL: found */
  uint64_t output_cap;
  uint64_t tmp_size;
  uint64_t file_size;
  struct bx_bwrap_limits limits;
  uint64_t limit_ms[BX_RUNTIME_TOOL_COUNT]; /* by spec_tool_id */
  int64_t uid, gid; /* the sandbox's, inside and outside its user namespace */
  int64_t slots;
  int64_t pool;              /* sandboxes made ahead (bwrap_pool.c); 0: none */
  const char *egress_helper; /* slirp4netns */
  const char *egress_dir;    /* where the per-call egress folders are made */
};

struct bx_bwrap_mount
{
  const char *path;
  int fd; /* the descriptor number the sandbox program sees */
  bool writable;
};

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
   * module's root at BX_RUNTIME_INJECTED_TOOLKIT.  NULL: the module's root. */
  const struct bx_runtime_root_step *root;
  size_t root_count;
};

/* ---- bwrap_argv.c: the argument list, a pure function of its inputs. ---------------------------
 * A NULL-terminated array whose first element is cfg->bwrap; free with bx_bwrap_argv_free. */
char **bx_bwrap_argv (const struct bx_bwrap_config *cfg, const struct bx_bwrap_call *call);
void bx_bwrap_argv_free (char **argv);
/* Whether MOUNTS[I] lies below one of the mounts before it that keeps its flags (a protected
 * path in a granted folder): bubblewrap is not given it, since it reaches the sandbox as a
 * submount of that one's copy (bwrap_alone.c). */
bool bx_bwrap_mount_inside_earlier (const struct bx_bwrap_mount *mounts, size_t i);

/* ---- bwrap_seccomp.c --------------------------------------------------------------------- */
/* The filter as BPF bytes (malloc'd), or -1 with *ERR. */
int bx_bwrap_seccomp_build (void **bpf, size_t *len, bx_error *err);
/* A fresh readable descriptor holding BPF, at offset 0; -1 with errno. */
int bx_bwrap_seccomp_fd (const void *bpf, size_t len);

/* ---- bwrap_cgroup.c: per-call cgroups, behind this small interface. ----------------------------
 * A pool of slots made at start, each a cgroup (in every controller, on cgroup v1) with the
 * limits set, so a call only starts its process in it (no mkdir on the call path) and the
 * slot is emptied (every task killed) when the call ends. */
struct bx_bwrap_cgroups;
/* ROOT: the cgroup_root option, or NULL for the host's own (see bwrap_cgroup.c).  NAME
 * identifies this instance (it holds brokerd's pid and start time, so the sweep can tell a
 * dead brokerd's leftovers from a live one's).  0, or -1 with *ERR. */
int bx_bwrap_cgroups_open (const char *root, const char *name, size_t slots,
                           const struct bx_bwrap_limits *limits, struct bx_bwrap_cgroups **out,
                           bx_error *err);
/* "cgroup v1" or "cgroup v2", and the folder the slots of CG are in, for the log. */
const char *bx_bwrap_cgroups_what (const struct bx_bwrap_cgroups *cg);
const char *bx_bwrap_cgroups_where (const struct bx_bwrap_cgroups *cg);
/* Removes the leftovers of instances whose brokerd is gone (never a live one's), beside
 * CG's; returns how many it removed. */
int bx_bwrap_cgroups_sweep (struct bx_bwrap_cgroups *cg);
/* Sets SLOT's limits to LIMITS (before a call starts in it; unchanged files are not
 * written again).  0, or -1 with errno. */
int bx_bwrap_cgroups_limit (struct bx_bwrap_cgroups *cg, size_t slot,
                            const struct bx_bwrap_limits *limits);
/* Waits for a free slot and takes it, once empty; SIZE_MAX, taking none, once STOP (ARG) is
 * true. */
size_t bx_bwrap_cgroups_acquire (struct bx_bwrap_cgroups *cg, bool (*stop) (const void *),
                                 const void *arg);
/* A free slot taken at once, or SIZE_MAX. */
size_t bx_bwrap_cgroups_try_acquire (struct bx_bwrap_cgroups *cg);
/* The same without waiting for the slot to be empty: the caller empties it
 * (bx_bwrap_cgroups_empty) before it uses it. */
size_t bx_bwrap_cgroups_try_claim (struct bx_bwrap_cgroups *cg);
/* Is PID listed in SLOT's cgroup (a process no one else can put there)? */
bool bx_bwrap_cgroups_holds (struct bx_bwrap_cgroups *cg, size_t slot, pid_t pid);
/* The socket of SLOT's keeper, which forks the slot's sandboxes (bwrap_keeper.c). */
int bx_bwrap_cgroups_keeper (struct bx_bwrap_cgroups *cg, size_t slot);
/* Starts SLOT's keeper again (after it died); only the slot's holder calls it.  0 or -1. */
int bx_bwrap_cgroups_revive (struct bx_bwrap_cgroups *cg, size_t slot);
/* How many times the slot's memory limit has killed a task so far. */
/* The "oom_kill" count of a cgroup file of "KEY VALUE" lines (v1's memory.oom_control, v2's
 * memory.events); 0 when it cannot be read. */
uint64_t bx_bwrap_cgroup_oom_kill_count (const char *path);
uint64_t bx_bwrap_cgroups_oom_kills (struct bx_bwrap_cgroups *cg, size_t slot);
/* Kills every task in SLOT but its keeper until each is gone or a zombie, but the slot's
 * bubblewrap (bx_bwrap_cgroups_bubblewrap) and slirp4netns (bx_bwrap_cgroups_helper), which
 * need only be in the kernel's exit, whose tearing down of the sandbox's namespaces and
 * mounts, or of slirp4netns's network device, may go on: what a call waits for before it
 * answers.  False when that took longer than 30 s (a killed process stuck in its exit, in a
 * file system that no longer answers, say): the slot is then stuck, later kills of it do
 * not wait, and no call or sandbox made ahead takes it until it is empty. */
bool bx_bwrap_cgroups_kill (struct bx_bwrap_cgroups *cg, size_t slot);
/* Kills every task in SLOT but its keeper until it is empty (before the slot is used
 * again; bx_bwrap_cgroups_acquire does it), and forgets its bubblewrap and slirp4netns. */
void bx_bwrap_cgroups_empty (struct bx_bwrap_cgroups *cg, size_t slot);
/* PID is bubblewrap's own process of the sandbox in SLOT, started by its keeper (0: none
 * known): it runs no program of the call, and the kernel's teardown of the sandbox's
 * namespaces in its exit is the one wait a call's end skips. */
void bx_bwrap_cgroups_bubblewrap (struct bx_bwrap_cgroups *cg, size_t slot, pid_t pid);
/* PID is the slirp4netns of the call in SLOT (0: none), started by its keeper outside the
 * sandbox: it runs no program of the call and writes no file, and the kernel's removal of
 * its network device in its exit (tens of milliseconds) is skipped as bubblewrap's is. */
void bx_bwrap_cgroups_helper (struct bx_bwrap_cgroups *cg, size_t slot, pid_t pid);
/* PID is the first process of the sandbox in SLOT, as bubblewrap's json status names it (0:
 * none known): it ends once every other process of the sandbox's pid namespace is gone, so
 * a call's end waits for it on a pidfd rather than polling the slot. */
void bx_bwrap_cgroups_first (struct bx_bwrap_cgroups *cg, size_t slot, pid_t pid);
/* The pid bubblewrap's json status STATUS (or NULL) names as the sandbox's first process,
 * or -1. */
pid_t bx_bwrap_status_child_pid (const char *status);
/* Kills what is left (bx_bwrap_cgroups_kill) and gives the slot back. */
void bx_bwrap_cgroups_release (struct bx_bwrap_cgroups *cg, size_t slot);
/* Kills everything, removes every slot and frees the pool. */
void bx_bwrap_cgroups_close (struct bx_bwrap_cgroups *cg);

/* ---- bwrap_cgroup_v1.c, bwrap_cgroup_v2.c: what differs between the kinds of hierarchy. --
 * bwrap_cgroup.c keeps the pool; a backend says where the slots' folders go and what their
 * files are.  A slot is DIRS folders (one per controller on v1, one on v2), each
 * <top>/<instance>/<slot>; the slot's folders below are in that order. */
#define BX_BWRAP_CGROUP_DIRS 3
struct bx_bwrap_cgroup_backend
{
  const char *what;    /* "cgroup v1", "cgroup v2" */
  size_t dirs;         /* folders per slot */
  size_t tasks;        /* the one whose cgroup.procs lists every task of a slot */
  const char *threads; /* the file of that folder that lists every thread */
  bool born_in;        /* a keeper can be born in its slot (clone3 CLONE_INTO_CGROUP) */
  /* Finds the folders the instances go in (ROOT: the option, or NULL) and makes them ready:
   * TOPS[0..dirs) malloc'd.  0, or -1 with *ERR. */
  int (*locate) (const char *root, char **tops, bx_error *err);
  /* Makes the new folder DIR ready to hold cgroups of its own.  0, or -1 with *ERR. */
  int (*ready) (const char *dir, bx_error *err);
  /* Writes LIMITS into the SLOT's files (FORCE: every file; else those that differ from
   * WAS).  0, or -1 with *ERR and errno. */
  int (*write_limits) (char *const *slot, const struct bx_bwrap_limits *was,
                       const struct bx_bwrap_limits *limits, bool force, bx_error *err);
  /* How many tasks of SLOT the memory limit has killed. */
  uint64_t (*oom_kills) (char *const *slot);
  /* After the last instance's folders in TOPS are gone: gives back what locate took
   * (NULL: nothing to give back). */
  void (*leave) (char *const *tops);
};
extern const struct bx_bwrap_cgroup_backend bx_bwrap_cgroup_v1;
extern const struct bx_bwrap_cgroup_backend bx_bwrap_cgroup_v2;
/* Is PATH on a cgroup v2 file system? */
bool bx_bwrap_cgroup_is_v2 (const char *path);
/* Writes TEXT to the file PATH in one write.  0, or -1 with errno. */
int bx_bwrap_cgroup_write (const char *path, const char *text);
/* Writes VALUE to FILE of the folder DIR.  0, or -1 with *ERR naming both, and errno. */
int bx_bwrap_cgroup_set (const char *dir, const char *file, const char *value, bx_error *err);
/* The CPU quota and period (microseconds) that give CPU_MILLIS thousandths of a CPU. */
void bx_bwrap_cgroup_cpu_quota (int64_t cpu_millis, long long *quota, long long *period);

/* ---- bwrap_run.c: one sandbox process. ---------------------------------------------------- */
#define BX_BWRAP_STDERR_KEEP 4096

/* ---- bwrap_ucounts.c: each sandbox's share of its uid's kernel counters. ---------------- */
#define BX_BWRAP_UCOUNT_SYSCTLS 12
#define BX_BWRAP_UCOUNT_RLIMITS 3
struct bx_bwrap_ucounts
{
  uint64_t sysctl[BX_BWRAP_UCOUNT_SYSCTLS]; /* /proc/sys/user limits; 0: left as they are */
  uint64_t rlimit[BX_BWRAP_UCOUNT_RLIMITS]; /* message queue bytes, queued signals, locked
                                               memory; 0: left as they are */
  bool set;
};
/* The shares of SLOTS sandboxes at once, from this host's limits (read once, at start). */
void bx_bwrap_ucounts_shares (size_t slots, struct bx_bwrap_ucounts *u);
/* In the child, as the sandbox's uid, just before it runs bubblewrap: moves into a user
 * namespace of its own whose limits are U's.  0, or -1 with errno.  Async-signal-safe. */
int bx_bwrap_ucounts_enter (const struct bx_bwrap_ucounts *u);
/* Tries it at start, in a child that takes UID and GID as a sandbox's would: 0, or -1 with
 * a message (a host whose security module forbids it, say). */
int bx_bwrap_ucounts_check (const struct bx_bwrap_ucounts *u, int64_t uid, int64_t gid,
                            bx_error *err);

/* The most descriptors a child gets (fd_count below): with its three standard streams, the
 * kernel's cap on descriptors in one message to the keeper (SCM_MAX_FD, 253).  Each mount
 * of a call is one, and a grant of a few writable folders with the default protected paths
 * has dozens. */
#define BX_BWRAP_MAX_FDS 250

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
   * alone, without the mounts below it (bwrap_alone.c). */
  size_t mount_first, mount_count;
  /* One per mount source, or NULL: true where its copy is made read-only there, for the
   * mounts that reach the sandbox inside another one's tree (bwrap_argv.c). */
  const bool *mount_readonly;
  /* One per mount source, or NULL: true where bubblewrap is not given the source
   * (bx_bwrap_mount_inside_earlier).  Its descriptor is closed once its copy is mounted:
   * bubblewrap closes only those it is given, and one left open would reach the sandbox's
   * command, a way up from the copy to the host's folders ("/proc/self/fd/N/.."). */
  const bool *mount_inside;
  /* A sandbox's shares of its uid's counters (NULL for a helper such as slirp4netns, which
   * must stay in the host's user namespace to join the sandbox's). */
  const struct bx_bwrap_ucounts *ucounts;
  /* No program runs: the child mounts the mount sources into the pool's sandbox whose pidfd
   * is fds[0] (its pid JOIN_PID), each at the place argv[1 + i] names (bwrap_join.c),
   * reports 0 and exits. */
  bool join;
  pid_t join_pid;
  /* A sandbox made ahead (bwrap_pool.c): once it has started, the keeper clones its mounter
   * ahead too, so that the call that takes it does not wait for that clone (bwrap_keeper.c). */
  bool spare_mounter;
  /* On bx_now_ms's clock (CLOCK_MONOTONIC, the same in the keeper): when the keeper stops
   * waiting for the child to exec (or, joining, to report), kills it and answers ETIMEDOUT;
   * 0: no bound.  A child that has taken the sandbox's uid, or a mounter in the sandbox's
   * user namespace, may be stopped by a process of that uid. */
  int64_t deadline;
};

/* Runs ARGV as set up by CHILD (bx_command with the keeper as its spawn hook), feeding
 * INPUT, keeping standard output up to CAP bytes, until it exits, DEADLINE_MS passes or
 * CANCEL_FD (-1: none) becomes readable.  R->pidfd is the child still running after
 * TIMED_OUT, CAPPED or CANCELLED.  STATUS_READ is the read end of the json status pipe (its
 * write end is among CHILD's fds), or -1; R->status holds what it said. */
void bx_bwrap_run (char *const argv[], const struct bx_bwrap_child *child, const char *input,
                   size_t input_len, uint64_t cap, int64_t deadline_ms, int status_read,
                   int cancel_fd, struct bx_command_result *r);
/* The pid of the process PIDFD refers to (its fdinfo), or 0. */
pid_t bx_bwrap_pidfd_pid (int pidfd);
/* Only starts it, with IN, OUT and ERR as its standard streams: a pidfd, or -1 with errno. */
int bx_bwrap_spawn (char *const argv[], const struct bx_bwrap_child *child, int in, int out,
                    int err);
/* From bubblewrap's json status STATUS (or NULL): the sandbox's exit code, or -1; *started
 * when bubblewrap reported the sandbox's process. */
int bx_bwrap_status (const char *status, bool *started);
/* In a child: no signal blocked, every one at its default but IGNORED, which is ignored.
 * Async-signal-safe. */
void bx_bwrap_signals_default (int ignored);
/* In the child: sets up what CHILD says, with IN, OUT and ERR as standard streams, and
 * runs ARGV; on failure writes errno to REPORT and exits 127.  Async-signal-safe. */
void bx_bwrap_child_exec (char *const argv[], const struct bx_bwrap_child *child, int in, int out,
                          int err, int report) __attribute__ ((noreturn));

/* ---- bwrap_alone.c ----------------------------------------------------------------------- */
/* In the child, as root: moves it into a mount namespace of its own and there mounts each
 * of the COUNT mount sources FDS on top of itself without the mounts below it, each
 * descriptor now naming that copy, read-only where READONLY (NULL: none) says so.  A source
 * inside an earlier one lands on that one's copy, which then holds it as a submount.  0, or -1 with
 * errno: ESTALE when a source was removed, moved under a symbolic link or covered by another mount
 * since it was opened (the call's source changed, not the runtime).  Async-signal-safe. */
int bx_bwrap_bind_alone (const int *fds, const bool *readonly, size_t count);

/* Opens PATH in this namespace without following links and checks it is the folder or file
 * SOURCE (device and inode): a descriptor, or -1 with errno (ESTALE where it is another).
 * Async-signal-safe. */
int bx_bwrap_same_place (const char *path, int source);

/* ---- bwrap_join.c ------------------------------------------------------------------------ */
/* In the keeper's child, as root, after bx_bwrap_bind_alone: mounts a clone of each of the
 * COUNT sources MOUNTS that is not INSIDE another at PATHS[i] in the mount namespace of the
 * sandbox whose first process is PIDFD (pid PID), as bubblewrap's bind would (read-only
 * where READONLY says so), locked by the kernel as bubblewrap's are, making the mount
 * points in the sandbox's root and /tmp only, as UID and GID, who must reach each source.
 * 0, or -1 with errno.  Async-signal-safe. */
int bx_bwrap_join (int pidfd, pid_t pid, const int *mounts, const char *const *paths,
                   const bool *readonly, const bool *inside, size_t count, int64_t uid,
                   int64_t gid);

/* ---- bwrap_keeper.c: the process that forks a slot's sandboxes inside the slot's cgroups. */
/* Starts a keeper in the slot's cgroups: born in the cgroup v2 folder CGROUP (clone3 with
 * CLONE_INTO_CGROUP) where it is not -1 and the kernel can, else forked and moved in
 * through PROCS, the slot's cgroup.procs descriptors.  Returns the socket to it (and
 * *pid), or -1 with errno. */
int bx_bwrap_keeper_start (int cgroup, const int *procs, size_t procs_count, pid_t *pid);
/* Asks the keeper on SOCK to start ARGV as CHILD says: a pidfd, or -1 with errno. */
int bx_bwrap_keeper_spawn (int sock, char *const argv[], const struct bx_bwrap_child *child, int in,
                           int out, int err);

/* ---- bwrap_pool.c: sandboxes made ahead of their calls. --------------------------------- */
struct bx_bwrap_pool;
/* One sandbox of the pool, ready for its call: it holds its slot. */
struct bx_bwrap_pooled
{
  size_t slot;
  int pidfd;         /* bubblewrap's, as the keeper started it */
  int sandbox;       /* a pidfd of the sandbox's first process: its namespaces */
  pid_t sandbox_pid; /* that process's pid, checked to be in the slot */
  int in, out, err;  /* the parent's ends of its standard streams (in: a socket) */
  int status;        /* bubblewrap's json status, its read end */
  char *status_text; /* what the status said so far (malloc'd) */
};
struct bx_bwrap_instance;
/* Starts the pool of INST with SIZE sandboxes (0: no pool, *OUT NULL).  0, or -1 with *ERR. */
int bx_bwrap_pool_open (struct bx_bwrap_instance *inst, size_t size, struct bx_bwrap_pool **out,
                        bx_error *err);
/* Takes a ready sandbox into *OUT (false: none ready, or no pool); with WAIT, when none is
 * ready but one is being made, waits for that one. */
bool bx_bwrap_pool_take (struct bx_bwrap_pool *pool, bool wait, struct bx_bwrap_pooled *out);
/* Closes P's descriptors (after its call: its slot is emptied with the call's). */
void bx_bwrap_pooled_close (struct bx_bwrap_pooled *p);
/* Kills P's sandbox and closes its descriptors; its slot stays taken. */
void bx_bwrap_pool_discard (struct bx_bwrap_pool *pool, struct bx_bwrap_pooled *p);
/* The slot of a ready sandbox (or of the one being made, once it is), which is killed
 * (SIZE_MAX: none, or no pool). */
size_t bx_bwrap_pool_evict (struct bx_bwrap_pool *pool);
/* Whether a sandbox is ready (false: none, or no pool). */
bool bx_bwrap_pool_ready (struct bx_bwrap_pool *pool);
/* A call of the instance starts (the pool then makes no more than one at a time while calls
 * run, see bwrap_pool.c) and ends, having given its slot back. */
void bx_bwrap_pool_call_started (struct bx_bwrap_pool *pool);
void bx_bwrap_pool_call_ended (struct bx_bwrap_pool *pool);
/* An open /dev/null: the standard streams of a call's mounter. */
int bx_bwrap_pool_devnull (const struct bx_bwrap_pool *pool);
/* Runs CALL (its tool, mounts and descriptors MOUNT_FDS) in P's sandbox, as bx_bwrap_run
 * would in a new one: 0 with *O filled, or -1 with errno when its folders could not be
 * mounted into it (O untouched; P is then the caller's to discard). */
int bx_bwrap_pool_run (struct bx_bwrap_instance *inst, struct bx_bwrap_pooled *p,
                       const struct bx_bwrap_call *call, const int *mount_fds, const char *input,
                       size_t input_len, uint64_t cap, int64_t deadline, int cancel_fd,
                       struct bx_command_result *o);
/* Ends the pool's thread, kills its sandboxes and gives their slots back. */
void bx_bwrap_pool_close (struct bx_bwrap_pool *pool);

/* ---- bwrap_module.c / bwrap_call.c: one instance and one call. ---------------------------- */
struct bx_bwrap_instance
{
  const struct bx_host *host;
  struct bx_bwrap_config cfg;
  struct bx_bwrap_cgroups *cgroups;
  void *bpf;
  size_t bpf_len;
  char **rootfs_dirs;
  char *name; /* "<pid>-<start time>": names this instance's cgroups and egress folders */
  const char *protected[5];        /* protected_paths: rootfs, bwrap, slirp4netns, egress_dir */
  struct bx_runtime_roots *roots;  /* grants' own roots that check_root accepted */
  struct bx_bwrap_ucounts ucounts; /* each sandbox's shares (bwrap_ucounts.c) */
  struct bx_bwrap_pool *pool;      /* NULL: no pool */
  uint64_t _Atomic counter;
};

/* bwrap_call.c: the argument list for CALL run with EXTRA_FDS, its mount sources (bwrap sees them
 * from 5 up, after the seccomp filter at 3 and the json status at 4) in cgroup SLOT. */
#define BX_BWRAP_FD_FIRST_EXTRA 5
void bx_bwrap_sandbox (struct bx_bwrap_instance *inst, struct bx_bwrap_call *call,
                       const int *extra_fds, size_t extra_count, size_t slot, const char *input,
                       size_t input_len, uint64_t cap, uint64_t file_size, int64_t deadline,
                       int cancel_fd, struct bx_command_result *r);
/* The tool's sandbox in SLOT, with the egress folder EGRESS_FD (or -1) at /run/egress. */
enum bx_run_status bx_bwrap_run_tool (struct bx_bwrap_instance *inst, const bx_run_spec *spec,
                                      const char *name, int tool, size_t slot, int egress_fd,
                                      struct bx_bwrap_pooled *pooled, bx_run_result *result,
                                      const char **sentence);
/* bwrap_egress.c: the proxy's sandbox, slirp4netns, then the tool's sandbox, all in SLOT. */
enum bx_run_status bx_bwrap_egress_run (struct bx_bwrap_instance *inst, const bx_run_spec *spec,
                                        const char *name, int tool, size_t slot,
                                        bx_run_result *result, const char **sentence);
/* Removes the egress folders of brokerds that are gone; returns how many. */
int bx_bwrap_egress_sweep (const char *root);
/* The fixed sentences bwrap_egress.c answers with (bwrap_call.c has them all). */
extern const char bx_bwrap_sentence_unavailable[];
extern const char bx_bwrap_sentence_could_not_run[];
extern const char bx_bwrap_sentence_cancelled[];

enum bx_run_status bx_bwrap_call_run (struct bx_bwrap_instance *inst, const bx_run_spec *spec,
                                      bx_run_result *result, const char **sentence);

#endif
