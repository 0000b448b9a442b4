/* SPDX-License-Identifier: Apache-2.0 */
/* naive.so: a module that is no sandbox at all, for the conformance kit's own test.  It runs
 * `toolkit TOOL` straight on the host, in the kit's process's namespaces, with the time
 * limit and cancellation honoured (so the kit's run stays short) and nothing else: the kit
 * must catch every rule it breaks.  Test builds only; never installed.
 *
 *   option toolkit: the toolkit program (required)
 *
 * Built again with one fault each, for the kit's own robustness:
 *   NAIVE_CRASH_ON_WRITE     run() dereferences NULL on a write_file call
 *   NAIVE_GARBAGE_SENTENCE   every failure sentence is built per call, on the heap, with
 *                            terminal control bytes in it
 *   NAIVE_DECLINES_LIMITS    a call with a memory, pids, CPU or file size limit, or with
 *                            egress, is answered BX_RUN_UNAVAILABLE, as the header allows
 *                            a module that cannot enforce them
 * and once honest: NAIVE_DECLARED declares itself no sandbox (BX_RUNTIME_NOT_A_SANDBOX). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <boxmaker/runtime.h>

extern char **environ;

struct naive
{
  const struct bx_host *host;
  const char *toolkit;
};

static int
naive_create (const struct bx_host *host, const bx_options *options, void **instance,
              bx_error_sink *sink)
{
  static const char *const known[] = { "toolkit", NULL };
  struct naive *n = calloc (1, sizeof *n);
  if (n == NULL)
    return -1;
  n->host = host;
  if (host->option_check_known (options, known, sink) < 0
      || host->option_string (options, "toolkit", NULL, &n->toolkit, sink) < 0
      || n->toolkit == NULL)
    {
      if (n->toolkit == NULL)
        host->error_set (sink, "option toolkit is required");
      free (n);
      return -1;
    }
  *instance = n;
  return 0;
}

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#ifdef NAIVE_GARBAGE_SENTENCE
/* What a careless module does: a sentence made per call, holding bytes that would rewrite
 * a terminal (clear the screen, ring the bell). */
static const char *
garbage (const char *fixed)
{
  size_t len = strlen (fixed) + 32;
  char *s = malloc (len);
  if (s != NULL)
    snprintf (s, len, "\x1b[2J\a%s\r\n", fixed);
  return s != NULL ? s : fixed;
}
#endif

static enum bx_run_status naive_run_tool (void *instance, const bx_run_spec *spec,
                                          bx_run_result *result, const char **sentence);

static enum bx_run_status
naive_run (void *instance, const bx_run_spec *spec, bx_run_result *result, const char **sentence)
{
  struct naive *n = instance;
  const struct bx_host *h = n->host;
  (void)h;
#ifdef NAIVE_CRASH_ON_WRITE
  /* A crash as a bad module's would come: SIGSEGV, raised (the static analyser rightly
   * flags a write through NULL, even one meant). */
  if (h->spec_tool_id (spec) == BX_RUNTIME_TOOL_WRITE_FILE)
    raise (SIGSEGV);
#endif
#ifdef NAIVE_DECLINES_LIMITS
  if (h->spec_limit (spec, BX_LIMIT_MEMORY) || h->spec_limit (spec, BX_LIMIT_PIDS)
      || h->spec_limit (spec, BX_LIMIT_CPU) || h->spec_limit (spec, BX_LIMIT_FILE_SIZE))
    {
      *sentence = "the naive runtime cannot enforce this call's limits";
      return BX_RUN_UNAVAILABLE;
    }
  if (h->spec_has_egress (spec))
    {
      *sentence = "the naive runtime has no network";
      return BX_RUN_UNAVAILABLE;
    }
#endif
  enum bx_run_status status = naive_run_tool (instance, spec, result, sentence);
#ifdef NAIVE_GARBAGE_SENTENCE
  if (status != BX_RUN_OK)
    *sentence = garbage (*sentence);
#endif
  return status;
}

static enum bx_run_status
naive_run_tool (void *instance, const bx_run_spec *spec, bx_run_result *result,
                const char **sentence)
{
  struct naive *n = instance;
  const struct bx_host *h = n->host;
  int in[2], out[2];
  if (pipe2 (in, O_CLOEXEC) < 0 || pipe2 (out, O_CLOEXEC) < 0)
    {
      *sentence = "the naive runtime cannot make a pipe";
      return BX_RUN_UNAVAILABLE;
    }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_adddup2 (&fa, in[0], 0);
  posix_spawn_file_actions_adddup2 (&fa, out[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, out[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init (&attr);
  sigset_t none, all;
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setpgroup (&attr, 0);
  posix_spawnattr_setflags (&attr,
                            POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  char *argv[] = { (char *)n->toolkit, (char *)h->spec_tool (spec), NULL };
  pid_t pid;
  int r = posix_spawn (&pid, n->toolkit, &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  close (in[0]);
  close (out[1]);
  if (r != 0)
    {
      close (in[1]);
      close (out[0]);
      *sentence = "the naive runtime cannot start toolkit";
      return BX_RUN_UNAVAILABLE;
    }
  size_t len = 0;
  const char *args = h->spec_arguments (spec, &len);
  if (write (in[1], args, len) < 0)
    (void)0;
  close (in[1]);

  uint64_t limit = h->spec_limit (spec, BX_LIMIT_TIME);
  int64_t deadline = now_ms () + (int64_t)(limit ? limit : 30000);
  enum bx_run_status status = BX_RUN_OK;
  char buf[65536];
  for (;;)
    {
      struct pollfd p[2] = { { .fd = out[0], .events = POLLIN },
                             { .fd = h->spec_cancel_fd (spec), .events = POLLIN } };
      int64_t left = deadline - now_ms ();
      if (left <= 0)
        {
          *sentence = BX_SENTENCE_TIME_LIMIT;
          status = BX_RUN_FAILED;
          break;
        }
      if (poll (p, 2, (int)left) < 0 && errno != EINTR)
        break;
      if (p[1].revents)
        {
          *sentence = BX_SENTENCE_CANCELLED;
          status = BX_RUN_FAILED;
          break;
        }
      if (p[0].revents)
        {
          ssize_t got = read (out[0], buf, sizeof buf);
          if (got <= 0)
            break;
          if (h->output_append (result, buf, (size_t)got) < 0)
            break;
        }
    }
  kill (-pid, SIGKILL);
  close (out[0]);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  return status;
}

static void
naive_destroy (void *instance)
{
  free (instance);
}

#ifdef NAIVE_DECLARED
#define NAIVE_FLAGS BX_RUNTIME_NOT_A_SANDBOX
#else
#define NAIVE_FLAGS 0
#endif
BX_RUNTIME_DEFINE (.name = "naive", .create = naive_create, .run = naive_run,
                   .destroy = naive_destroy, .flags = NAIVE_FLAGS);
