/* podman.so's internal interfaces.  Everything declared here is hidden (the module builds
 * with -fvisibility=hidden), so only bx_runtime_entry leaves the shared object. */
#ifndef BX_PODMAN_H
#define BX_PODMAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <boxmaker/runtime.h>

/* The four tools, in the order of the time-limit options. */
enum bx_podman_tool
{
  BX_PODMAN_READ_FILE,
  BX_PODMAN_WRITE_FILE,
  BX_PODMAN_SHELL,
  BX_PODMAN_HTTP_FETCH,
};
#define BX_PODMAN_TOOL_COUNT 4

/* The module's options, checked once by create() and read-only afterwards. */
struct bx_podman_config
{
  const char *podman; /* the program: a path, or a bare name looked up in PATH */
  const char *image;
  const char *egress_network;
  uint64_t output_cap;
  const char *memory; /* as written in the config ("512m"), already checked as a size */
  int64_t pids;
  uint64_t limit_ms[BX_PODMAN_TOOL_COUNT];
  const char *const *global_options; /* between the program and its subcommand */
  size_t global_count;
  const char *const *run_options; /* after the fixed `run` options, before the mounts */
  size_t run_count;
  bool userns_keep_id;
  const char *cpus;    /* as written ("1", "0.5"), already checked as a number */
  uint64_t file_size;  /* bytes: RLIMIT_FSIZE of every process in the sandbox */
  int64_t uidmap_base; /* rootful: sandbox ids 0..65535 are host ids base.. */
  const char *seccomp; /* the seccomp profile podman gets */
  const char *toolkit; /* the host's static toolkit, mounted into a grant's own image */
};

/* How many ids the rootful user namespace maps, from uidmap_base on. */
#define BX_PODMAN_MAP_SIZE 65536

/* Where toolkit appears in a grant's own image (spec_image): read-only, from the `toolkit`
 * option, so that any image runs it unchanged. */
#define BX_PODMAN_INJECTED_TOOLKIT "/run/boxmaker/toolkit"

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
};

/* ---- argv.c: the argument lists, pure functions of their inputs. ------------------------
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

/* ---- egress_private.c: allow_private for the proxy. ---------------------------------------- */
/* How many private ranges the spec holds (0 from a host older than ABI 1.1). */
size_t bx_podman_private_count (const struct bx_host *host, const bx_run_spec *spec);
/* Every range is non-empty text without a comma. */
bool bx_podman_private_ok (const struct bx_host *host, const bx_run_spec *spec);
/* ARGV (a proxy list) with `--allow-private R1,R2...` appended; unchanged when COUNT is 0. */
char **bx_podman_argv_add_private (char **argv, const char *const *ranges, size_t count);

/* ---- name.c ------------------------------------------------------------------------------ */
#define BX_PODMAN_TOKEN_LEN 12
/* Fills TOKEN (BX_PODMAN_TOKEN_LEN hex digits and a NUL) from the kernel's random source;
 * 0, or -1 with errno. */
int bx_podman_token (char token[BX_PODMAN_TOKEN_LEN + 1]);
/* boxmaker-<session>-<call>-<n>-<token>, newly allocated. */
char *bx_podman_name (const char *session, const char *call, uint64_t n, const char *token);

/* ---- process.c: running podman. ---------------------------------------------------------- */
#define BX_PODMAN_STDERR_KEEP 4096

enum bx_podman_end
{
  BX_PODMAN_EXITED,    /* exit_code holds podman's exit status */
  BX_PODMAN_SIGNALED,  /* podman itself died of a signal (signal) */
  BX_PODMAN_NOT_RUN,   /* podman could not be started (spawn_errno) */
  BX_PODMAN_TIMED_OUT, /* the deadline passed first */
  BX_PODMAN_CAPPED,    /* standard output went past the cap first */
  BX_PODMAN_CANCELLED, /* the call's cancel descriptor became readable first */
};

struct bx_podman_outcome
{
  enum bx_podman_end end;
  int exit_code;
  int signal;
  int spawn_errno;
  char *out; /* standard output, at most cap bytes kept (malloc'd, may be NULL) */
  size_t out_len;
  char err[BX_PODMAN_STDERR_KEEP + 1]; /* the first 4 KiB of standard error, NUL-terminated */
  size_t err_len;
};

/* Runs ARGV with INPUT on standard input (then closed), keeping standard output up to CAP
 * bytes when KEEP_OUTPUT (a byte more ends the run as CAPPED), until the process exits,
 * DEADLINE_MS (CLOCK_MONOTONIC) passes, or CANCEL_FD (-1: none) becomes readable.  When it
 * ends TIMED_OUT, CAPPED or CANCELLED, the process may still be running: *child holds it for
 * bx_podman_reap; otherwise *child is -1. */
void bx_podman_execute (char *const argv[], const char *input, size_t input_len, bool keep_output,
                        uint64_t cap, int64_t deadline_ms, int cancel_fd,
                        struct bx_podman_outcome *outcome, pid_t *child);
/* Waits up to GRACE_MS for CHILD to exit, then kills it with SIGKILL and waits.  Returns
 * true when it had to kill it. */
bool bx_podman_reap (pid_t child, int64_t grace_ms);
void bx_podman_outcome_clear (struct bx_podman_outcome *outcome);
int64_t bx_podman_now_ms (void);

/* ---- module.c / call.c: one instance and one call. --------------------------------------- */
struct bx_podman_instance
{
  const struct bx_host *host;
  struct bx_podman_config cfg;
  char token[BX_PODMAN_TOKEN_LEN + 1];
  uint64_t _Atomic counter; /* the one piece of shared mutable state */
  char *egress_root;        /* <home>/run/egress, or NULL without a home */
  char *seccomp_owned;      /* cfg.seccomp when the module found it itself */
  int lock_fd;              /* flock'd lock_path while alive, or -1 */
  char *lock_path;          /* <home>/run/instances/<token> */
  int watch_fd;             /* to the watcher process, or -1 */
  pid_t watch_pid;
  char **protected; /* NULL-terminated: what no grant may reach (module.c) */
};

/* ---- mounts.c: what a mount source is when the call starts. ------------------------------ */
/* 0 when PATH is a folder reached without any symbolic link on the way (or is missing,
 * which podman reports itself); -1 with errno ELOOP for a link, ENOTDIR for a file. */
int bx_podman_check_source (const char *path);

/* ---- watch.c: nothing outlives brokerd. ---------------------------------------------------
 * A watcher process, forked at create, holds the names of the running containers; when
 * brokerd ends, however it ends, the watcher kills and removes those still there. */
int bx_podman_watch_start (struct bx_podman_instance *inst);
void bx_podman_watch (struct bx_podman_instance *inst, const char *name, bool running);
void bx_podman_watch_stop (struct bx_podman_instance *inst);

/* ---- sweep.c: what earlier brokerds left. -------------------------------------------------
 * Takes this instance's lock in <home>/run/instances, then removes the containers and egress
 * folders of every instance whose lock nobody holds. */
void bx_podman_sweep (struct bx_podman_instance *inst);

/* call.c: `podman kill` then `podman rm -f` NAME, failures only logged. */
void bx_podman_kill_and_remove (struct bx_podman_instance *inst, const char *name);
/* Removes the folder PARENT/NAME and all it holds, without following symbolic links. */
void bx_podman_remove_tree_at (int parent, const char *name);

enum bx_run_status bx_podman_call_run (struct bx_podman_instance *inst, const bx_run_spec *spec,
                                       bx_run_result *result, const char **sentence);

/* ---- util ---------------------------------------------------------------------------------- */
void *bx_podman_xmalloc (size_t n);
void *bx_podman_xrealloc (void *p, size_t n);
char *bx_podman_xstrdup (const char *s);
char *bx_podman_xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#endif
