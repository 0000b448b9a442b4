/* SPDX-License-Identifier: Apache-2.0 */
/* fake.so: a runtime module for tests.  Its options choose the answer:
 *
 *   mode: echo          output is the whole spec as JSON (tool, arguments as text and
 *                       parsed, mounts with writability, egress or null, egress_private
 *                       (the allow_private ranges), image, call, session,
 *                       home, and rootfs when the grant names one), plus in_flight and
 *                       max_in_flight so a test can prove that runs overlap
 *   mode: fixed         output is `content` (repeated `repeat` times), marked truncated
 *                       when `truncated` is true, and as the tool's refusal when
 *                       `refused` is true
 *   mode: failed        Failed, with a fixed sentence
 *   mode: unavailable   Unavailable, with a fixed sentence
 *   mode: silent        Failed with no sentence (the host must supply one)
 *   mode: bad_status    a status the ABI does not define (the host must not trust it)
 *   mode: exec          runs the program of `exec` (a list: the program's path and its
 *                       arguments) on the host, with no sandbox at all, the call's arguments
 *                       on its standard input; output is its standard output, the tool's
 *                       refusal when it exits 1 (toolkit's convention), Failed otherwise
 *                       unless it exits 0.  For a test that drives toolkit mcp_call through
 *                       brokerd without a runtime's cost
 *   protected           paths the module names as protected (ABI 1.1)
 *   check_root          accepts a grant's image and rootfs, unless it holds "absent"
 *   delay_ms            how long each run waits before answering (default none); a
 *                       cancelled call stops waiting and answers BX_SENTENCE_CANCELLED
 *   busy_ms             how long each run works on the CPU before that (default none):
 *                       a run that is never asleep
 *
 * It is a module like any other: jansson is used inside it, and only plain C crosses the
 * ABI. */
#include <fcntl.h>
#include <jansson.h>
#include <stdatomic.h>
#include <errno.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdbool.h>
#include <time.h>

#include <boxmaker/runtime.h>

static const char failed_sentence[] = "the fake runtime was told to fail";
static const char unavailable_sentence[] = "the fake runtime was told to be unavailable";
static const char exec_sentence[] = "the fake runtime's program failed";

enum fake_mode
{
  MODE_ECHO,
  MODE_FIXED,
  MODE_FAILED,
  MODE_UNAVAILABLE,
  MODE_SILENT,
  MODE_BAD_STATUS,
  MODE_EXEC,
};

static const char *const mode_names[] = {
  "echo", "fixed", "failed", "unavailable", "silent", "bad_status", "exec", NULL,
};

struct fake
{
  const struct bx_host *host;
  enum fake_mode mode;
  const char *content; /* lives as long as the options: the whole process */
  int truncated;
  int refused;
  uint64_t delay_ms;
  uint64_t busy_ms;
  int64_t repeat;
  const char **protected; /* NULL-terminated copy of the option's list */
  char **exec;            /* NULL-terminated copy of the option's list (mode exec) */
  atomic_int in_flight;
  atomic_int max_in_flight;
};

static int
fake_create (const struct bx_host *host, const bx_options *options, void **instance,
             bx_error_sink *sink)
{
  static const char *const known[] = { "mode",    "content", "truncated", "refused", "delay_ms",
                                       "busy_ms", "repeat",  "protected", "exec",    NULL };
  if (host->option_check_known (options, known, sink) < 0)
    return -1;

  const char *mode;
  if (host->option_string (options, "mode", "echo", &mode, sink) < 0)
    return -1;
  int m = -1;
  for (int i = 0; mode_names[i] != NULL; i++)
    if (strcmp (mode, mode_names[i]) == 0)
      m = i;
  if (m < 0)
    {
      host->error_set (sink,
                       "option \"mode\": expected echo, fixed, failed, unavailable, silent, "
                       "bad_status or exec, got \"%.32s\"",
                       mode);
      return -1;
    }

  struct fake *f = calloc (1, sizeof (*f));
  if (f == NULL)
    {
      host->error_set (sink, "out of memory");
      return -1;
    }
  f->host = host;
  f->mode = (enum fake_mode)m;
  if (host->option_string (options, "content", "", &f->content, sink) < 0
      || host->option_bool (options, "truncated", 0, &f->truncated, sink) < 0
      || host->option_bool (options, "refused", 0, &f->refused, sink) < 0
      || host->option_duration_ms (options, "delay_ms", 0, &f->delay_ms, sink) < 0
      || host->option_duration_ms (options, "busy_ms", 0, &f->busy_ms, sink) < 0
      || host->option_int (options, "repeat", 1, 1000000, 1, &f->repeat, sink) < 0)
    {
      free (f);
      return -1;
    }
  const char *const *items;
  size_t count;
  if (host->option_list (options, "protected", &items, &count, sink) < 0)
    {
      free (f);
      return -1;
    }
  if (count > 0)
    {
      f->protected = calloc (count + 1, sizeof (char *));
      for (size_t i = 0; f->protected != NULL && i < count; i++)
        f->protected[i] = items[i];
    }
  if (host->option_list (options, "exec", &items, &count, sink) < 0)
    {
      free (f->protected);
      free (f);
      return -1;
    }
  if (f->mode == MODE_EXEC && count == 0)
    {
      host->error_set (sink, "mode exec: option \"exec\" must name a program");
      free (f->protected);
      free (f);
      return -1;
    }
  if (count > 0)
    {
      f->exec = calloc (count + 1, sizeof (char *));
      if (f->exec == NULL)
        {
          host->error_set (sink, "option \"exec\": out of memory");
          free (f->protected);
          free (f);
          return -1;
        }
      for (size_t i = 0; i < count; i++)
        f->exec[i] = (char *)items[i];
    }
  atomic_init (&f->in_flight, 0);
  atomic_init (&f->max_in_flight, 0);
  host->log (host, BX_LOG_INFO, "fake runtime ready: mode %s", mode_names[m]);
  *instance = f;
  return 0;
}

static int64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits MS, or less when the call is cancelled (ABI 1.1): true when it was. */
static bool
wait_ms (const struct bx_host *h, const bx_run_spec *spec, uint64_t ms)
{
  struct pollfd p = { .fd = h->spec_cancel_fd (spec), .events = POLLIN };
  int64_t until = now_ms () + (int64_t)ms;
  for (;;)
    {
      int64_t left = until - now_ms ();
      if (left <= 0)
        return false;
      int r = poll (&p, p.fd >= 0 ? 1 : 0, left > 60000 ? 60000 : (int)left);
      if (r > 0 || h->spec_cancelled (spec))
        return true;
    }
}

static json_t *
nullable_string (const char *s)
{
  return s != NULL ? json_string (s) : json_null ();
}

static json_t *
echo_spec (struct fake *f, const bx_run_spec *spec, int in_flight)
{
  const struct bx_host *h = f->host;
  size_t len = 0;
  const char *arguments = h->spec_arguments (spec, &len);
  json_t *parsed = arguments != NULL ? json_loadb (arguments, len, 0, NULL) : NULL;

  json_t *mounts = json_array ();
  size_t n = h->spec_mount_count (spec);
  for (size_t i = 0; i < n; i++)
    json_array_append_new (mounts, json_pack ("{s:o, s:b}", "path",
                                              nullable_string (h->spec_mount_path (spec, i)),
                                              "writable", h->spec_mount_writable (spec, i)));

  json_t *egress = json_null ();
  if (h->spec_has_egress (spec))
    {
      egress = json_array ();
      size_t e = h->spec_egress_count (spec);
      for (size_t i = 0; i < e; i++)
        json_array_append_new (egress, nullable_string (h->spec_egress_host (spec, i)));
    }

  json_t *ranges = json_array ();
  size_t np = BX_HOST_HAS (h, spec_egress_private) ? h->spec_egress_private_count (spec) : 0;
  for (size_t i = 0; i < np; i++)
    json_array_append_new (ranges, nullable_string (h->spec_egress_private (spec, i)));

  const char *image = BX_HOST_HAS (h, spec_image) ? h->spec_image (spec) : NULL;

  json_t *limits = json_object ();
  static const char *const limit_names[BX_LIMIT_COUNT]
      = { "time", "memory", "pids", "cpus", "output", "file_size" };
  for (int i = 0; i < BX_LIMIT_COUNT; i++)
    json_object_set_new (limits, limit_names[i],
                         json_integer ((json_int_t)h->spec_limit (spec, i)));

  json_t *o = json_pack (
      "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:o}", "tool",
      nullable_string (h->spec_tool (spec)), "arguments_text",
      arguments != NULL ? json_stringn (arguments, len) : json_null (), "arguments",
      parsed != NULL ? parsed : json_null (), "mounts", mounts, "egress", egress, "egress_private",
      ranges, "image", nullable_string (image), "call", nullable_string (h->spec_call (spec)),
      "session", nullable_string (h->spec_session (spec)), "home", nullable_string (h->home),
      "in_flight", in_flight, "max_in_flight", atomic_load (&f->max_in_flight), "limits", limits);
  const char *rootfs = BX_HOST_HAS (h, spec_rootfs) ? h->spec_rootfs (spec) : NULL;
  if (o != NULL && rootfs != NULL)
    json_object_set_new (o, "rootfs", json_string (rootfs));
  /* The number modules branch on: tests compare it with the name above. */
  if (o != NULL)
    json_object_set_new (o, "tool_id", json_integer (h->spec_tool_id (spec)));
  return o;
}

/* Mode exec: the program of `exec` with the call's arguments on its standard input (a
 * memfd, so that nothing has to pump both ways) and its standard output as the output. */
static enum bx_run_status
exec_program (struct fake *f, const bx_run_spec *spec, bx_run_result *result, const char **sentence)
{
  const struct bx_host *h = f->host;
  size_t len = 0;
  const char *arguments = h->spec_arguments (spec, &len);
  int in = memfd_create ("fake-exec-input", MFD_CLOEXEC);
  int out[2] = { -1, -1 };
  *sentence = exec_sentence;
  if (in < 0 || pipe2 (out, O_CLOEXEC) < 0)
    {
      if (in >= 0)
        close (in);
      return BX_RUN_FAILED;
    }
  for (size_t done = 0; arguments != NULL && done < len;)
    {
      ssize_t w = write (in, arguments + done, len - done);
      if (w <= 0)
        break;
      done += (size_t)w;
    }
  lseek (in, 0, SEEK_SET);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_adddup2 (&actions, in, 0);
  posix_spawn_file_actions_adddup2 (&actions, out[1], 1);
  pid_t pid;
  extern char **environ;
  int r = posix_spawn (&pid, f->exec[0], &actions, NULL, f->exec, environ);
  posix_spawn_file_actions_destroy (&actions);
  close (in);
  close (out[1]);
  if (r != 0)
    {
      close (out[0]);
      return BX_RUN_FAILED;
    }
  char buf[65536];
  bool full = false;
  for (;;)
    {
      ssize_t n = read (out[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      if (!full && h->output_append (result, buf, (size_t)n) < 0)
        {
          h->output_set_truncated (result);
          full = true;
        }
    }
  close (out[0]);
  int status = -1; /* not an exit when waitpid fails */
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED (status) || WEXITSTATUS (status) > 1)
    return BX_RUN_FAILED;
  if (WEXITSTATUS (status) == 1 && BX_HOST_HAS (h, output_set_refused))
    h->output_set_refused (result);
  *sentence = NULL;
  return BX_RUN_OK;
}

static enum bx_run_status
fake_run (void *instance, const bx_run_spec *spec, bx_run_result *result, const char **sentence)
{
  struct fake *f = instance;
  const struct bx_host *h = f->host;

  int now = atomic_fetch_add (&f->in_flight, 1) + 1;
  int max = atomic_load (&f->max_in_flight);
  while (now > max && !atomic_compare_exchange_weak (&f->max_in_flight, &max, now))
    ;
  h->log (h, BX_LOG_DEBUG, "run %s: %s", h->spec_call (spec), h->spec_tool (spec));
  for (int64_t until = now_ms () + (int64_t)f->busy_ms; now_ms () < until;)
    ;
  if (f->delay_ms > 0 && wait_ms (h, spec, f->delay_ms))
    {
      atomic_fetch_sub (&f->in_flight, 1);
      *sentence = BX_SENTENCE_CANCELLED;
      return BX_RUN_FAILED;
    }

  enum bx_run_status status = BX_RUN_OK;
  switch (f->mode)
    {
    case MODE_ECHO:
      {
        json_t *echo = echo_spec (f, spec, now);
        char *text = echo != NULL ? json_dumps (echo, JSON_COMPACT) : NULL;
        json_decref (echo);
        if (text == NULL)
          {
            *sentence = failed_sentence;
            status = BX_RUN_FAILED;
            break;
          }
        h->output_append (result, text, strlen (text));
        free (text);
        break;
      }
    case MODE_FIXED:
      {
        size_t len = strlen (f->content);
        for (int64_t i = 0; i < f->repeat; i++)
          if (h->output_append (result, f->content, len) < 0)
            {
              /* The host takes no more: what it has is marked truncated. */
              h->output_set_truncated (result);
              break;
            }
        if (f->truncated)
          h->output_set_truncated (result);
        if (f->refused && BX_HOST_HAS (h, output_set_refused))
          h->output_set_refused (result);
        break;
      }
    case MODE_FAILED:
      *sentence = failed_sentence;
      status = BX_RUN_FAILED;
      break;
    case MODE_UNAVAILABLE:
      *sentence = unavailable_sentence;
      status = BX_RUN_UNAVAILABLE;
      break;
    case MODE_SILENT:
      *sentence = NULL;
      status = BX_RUN_FAILED;
      break;
    case MODE_BAD_STATUS:
      status = (enum bx_run_status)42;
      break;
    case MODE_EXEC:
      status = exec_program (f, spec, result, sentence);
      break;
    }

  atomic_fetch_sub (&f->in_flight, 1);
  return status;
}

static const char *const *
fake_protected_paths (void *instance)
{
  return ((struct fake *)instance)->protected;
}

/* A root a test names "absent" is refused, as a module refuses one it does not have. */
static int
fake_check_root (void *instance, const char *key, const char *root, bx_error_sink *sink)
{
  struct fake *f = instance;
  if (strstr (root, "absent") == NULL)
    return 0;
  f->host->error_set (sink, "fake.so has no %s %s", key, root);
  return -1;
}

static void
fake_destroy (void *instance)
{
  struct fake *f = instance;
  free (f->protected);
  free (f->exec);
  free (f);
}

BX_RUNTIME_DEFINE (.name = "fake", .create = fake_create, .run = fake_run, .destroy = fake_destroy,
                   .protected_paths = fake_protected_paths, .check_root = fake_check_root);
