/* SPDX-License-Identifier: Apache-2.0 */
/* One way to run a child process (in the spirit of libvirt's virCommand): separate arguments
 * (never a shell), bytes fed on standard input and then closed, standard output kept up to a
 * cap, the first bytes of standard error kept, all within one deadline, and the process (or
 * its whole group) killed when the caller gives up on it.
 *
 *   struct bx_command cmd = { .argv = argv, .keep_output = true, .output_cap = cap,
 *                             .deadline = bx_deadline_in (ms) };
 *   struct bx_command_result r;
 *   bx_command_run (&cmd, &r);
 *   if (r.end == BX_COMMAND_TIMED_OUT) bx_command_reap (&r, 0);
 *   ...
 *   bx_command_result_clear (&r);
 *
 * The program starts with no signal blocked and SIGPIPE at its default; other signals the
 * caller ignores stay ignored (exec keeps them).
 *
 * It keeps no state outside the call, so many threads may run commands at once: every
 * descriptor is close-on-exec from birth (another thread's child must not inherit this
 * call's pipes, or their EOF would never come), and the child is waited for by its pid only.
 *
 * A caller whose program must start somewhere else (bwrap.so's keeper forks each sandbox
 * inside the sandbox's cgroup) gives a spawn hook: the runner makes the pipes, the hook
 * starts the program on them and hands back a pidfd, and the runner watches and kills the
 * program through that pidfd alone. */
#ifndef BX_COMMAND_H
#define BX_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How much of standard error is kept when the command does not say. */
#define BX_COMMAND_ERROR_KEEP 4096

enum bx_command_end
{
  BX_COMMAND_EXITED,    /* exit_code holds the exit status (-1 after a spawn hook: unknown) */
  BX_COMMAND_SIGNALED,  /* the process died of a signal (signal) */
  BX_COMMAND_NOT_RUN,   /* it could not be started: spawn_errno, and failed_chdir */
  BX_COMMAND_TIMED_OUT, /* the deadline passed first; the process may still run (pid) */
  BX_COMMAND_CAPPED,    /* standard output went past the cap first; it may still run (pid) */
  BX_COMMAND_CANCELLED, /* cancel_fd became readable first; it may still run (pid) */
};

struct bx_command;
struct bx_command_attach;

/* Starts CMD's program with IN, OUT and ERR as its standard streams, as the runner's own
 * spawn would (argv, env, cwd and own_group are the hook's to honour or refuse): a pidfd of
 * the new process, or -1 with errno (then the run ends NOT_RUN with that errno).  The
 * process need not be the caller's child, so its exit status is not waited for. */
typedef int (*bx_command_spawn_fn) (const struct bx_command *cmd, int in, int out, int err,
                                    void *data);

struct bx_command
{
  const char *const *argv; /* argv[0]: a path, or a bare name looked up in PATH */
  const char *const *env;  /* the whole environment; NULL: the caller's */
  const char *cwd;         /* NULL: the caller's */
  const char *input;       /* fed on standard input, which is then closed */
  size_t input_len;
  bool keep_output; /* false: standard output is read and dropped (or streamed) */
  /* Standard output written to OUTPUT_FD as it comes instead of kept, so a program with much
   * output costs no memory here; a failed write ends the run as CAPPED (output_errno). */
  bool stream_output;
  int output_fd;
  uint64_t output_cap;  /* with keep_output: a byte more ends the run as CAPPED */
  size_t error_keep;    /* the first bytes of standard error kept; 0: BX_COMMAND_ERROR_KEEP */
  bool error_to_output; /* standard error goes into the output pipe, in the order written */
  int64_t deadline;     /* on bx_now_ms's clock; BX_NO_DEADLINE for none */
  bool own_group;       /* the child leads a new process group, killed whole by the reap */
  /* Called in the parent once the child runs (before any byte is read): state that must
   * differ between the two, such as the parent's own oom_score_adj.  Not called after a
   * spawn hook, which knows its process better. */
  void (*started) (pid_t pid, void *data);
  void *started_data;
  /* NULL: posix_spawn. */
  bx_command_spawn_fn spawn;
  void *spawn_data;
  /* With status_keep > 0: STATUS_FD (left open, made non-blocking) is read beside the
   * output, such as bubblewrap's --json-status-fd, and its first status_keep bytes kept. */
  int status_fd;
  size_t status_keep;
  /* Reap every child of the caller that ends meanwhile (waitpid(-1)), for a pid 1 or a
   * subreaper whose orphans would otherwise hold pids until the command ends. */
  bool reap_orphans;
  /* With cancellable: the run ends as CANCELLED as soon as CANCEL_FD is readable (it is
   * polled, never read, so other pollers see it too). */
  bool cancellable;
  int cancel_fd;
  /* A process started ahead of the run (bwrap.so's pool), instead of a spawn: the run takes
   * over its pidfd and the parent's ends of its standard streams (ATTACH's descriptors are
   * the run's from then on, closed or left in the result as a spawn hook's would be). */
  const struct bx_command_attach *attach;
};

struct bx_command_attach
{
  int pidfd;
  int in;  /* a socket, as the runner's own would be (send with MSG_NOSIGNAL) */
  int out; /* a pipe's read end */
  int err; /* a pipe's read end */
};

struct bx_command_result
{
  enum bx_command_end end;
  int exit_code;
  int signal;
  int spawn_errno;
  bool failed_chdir; /* NOT_RUN because cwd could not be entered (else the program) */
  char *out;         /* standard output (malloc'd, NUL after its end, may be NULL) */
  size_t out_len;    /* kept, or streamed */
  int output_errno;  /* with stream_output: why writing to output_fd failed, else 0 */
  char *err;         /* the first error_keep bytes of standard error, NUL-terminated, never NULL */
  size_t err_len;
  char *status; /* with status_keep: the first bytes status_fd gave, NUL-terminated; else NULL */
  size_t status_len;
  pid_t pid;  /* the process still to reap after TIMED_OUT, CAPPED or CANCELLED; -1 otherwise */
  bool group; /* pid leads its own group */
  int pidfd;  /* after a spawn hook: its pidfd, kept like pid; -1 otherwise */
};

/* Runs CMD and fills *R (always: no failure is left unreported). */
void bx_command_run (const struct bx_command *cmd, struct bx_command_result *r);

/* For a result with a process left (TIMED_OUT, CAPPED or CANCELLED): waits up to GRACE_MS for it to
 * exit, then kills it (its group with own_group) with SIGKILL and waits.  Returns true when
 * it had to kill.  A no-op (false) when no process is left. */
bool bx_command_reap (struct bx_command_result *r, int64_t grace_ms);

/* Waits up to MS for PIDFD to become readable (its process ended); true when it did, or
 * when PIDFD cannot be polled (nothing left to wait for). */
bool bx_command_pidfd_ended (int pidfd, int64_t ms);
/* The same for a process known by *PIDFD alone (one a spawn hook started, even when no run
 * watched it): waits up to GRACE_MS, then kills it and waits for its end, and closes *PIDFD
 * (set to -1).  True when it had to kill; a no-op (false) for -1. */
bool bx_command_reap_pidfd (int *pidfd, int64_t grace_ms);

/* Frees the kept output, error and status text, and closes a pidfd left (without killing). */
void bx_command_result_clear (struct bx_command_result *r);

#endif
