/* SPDX-License-Identifier: Apache-2.0 */
/* podman.so against a fake podman (fake-podman): every row of docs/config.md's table
 * "How a call ends", the output cap, the time limit with its kill and remove, standard input, and
 * the egress lifecycle with its clean-up on each failure path.  The module is driven through
 * brokerd's own loader and host services. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "golden_argv.h"
#include "podman_test_host.h"
#include "test_main.h"

#define SENT_COULD_NOT_RUN "the tool could not run"
#define SENT_UNAVAILABLE   "the tool runner could not start the container"
#define SENT_STOPPED       "the tool was stopped: it ran out of memory or was killed"
#define SENT_FILE_SIZE     "the tool went past its file size limit"
#define SENT_TIME_LIMIT    "the tool ran past its time limit"
#define SENT_UNEXPECTED    "the tool failed with an unexpected status"
#define POINTER            "see docs/runbook.md#runner-unavailable"

static char record_dir[256];
static char home_dir[256];
static struct test_log log_capture;

static void
setup (void)
{
  snprintf (record_dir, sizeof record_dir, "/tmp/bx-fake-podman.XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (record_dir));
  snprintf (home_dir, sizeof home_dir, "/tmp/bx-fake-home.XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (home_dir));
  setenv ("FAKE_PODMAN_DIR", record_dir, 1);
  unsetenv ("FAKE_PODMAN_FIXTURE");
  test_log_clear (&log_capture);
}

static void
teardown (void)
{
  char *cmd = NULL;
  if (asprintf (&cmd, "rm -rf '%s' '%s'", record_dir, home_dir) >= 0)
    {
      if (system (cmd) != 0)
        fprintf (stderr, "cannot remove the test folders\n");
      free (cmd);
    }
}

static void
use_fixture (const char *name)
{
  char path[512];
  snprintf (path, sizeof path, "%s/%s.fixture", FIXTURES_DIR, name);
  setenv ("FAKE_PODMAN_FIXTURE", path, 1);
}

static struct bx_module *
load (const char *const *extra)
{
  /* A profile in the test's home, so that the golden lists hold no path of this machine. */
  static char profile[300];
  snprintf (profile, sizeof profile, "%s/seccomp.json", home_dir);
  FILE *f = fopen (profile, "w");
  ck_assert_ptr_nonnull (f);
  fputs ("{}\n", f);
  fclose (f);
  /* EXTRA last: of two values of one key, the last is read. */
  const char *options[64]
      = { "podman",         FAKE_PODMAN,        "image",           "localhost/boxmaker-tools:test",
          "global_options", "[--runtime,runc]", "seccomp_profile", profile };
  size_t n = 8;
  for (size_t i = 0; extra != NULL && extra[i] != NULL; i++)
    options[n++] = extra[i];
  options[n] = NULL;
  char *error = NULL;
  struct bx_module *m = test_podman_load (options, home_dir, &log_capture, &error);
  ck_assert_msg (m != NULL, "create failed: %s", error ? error : "?");
  return m;
}

static char *
read_file (const char *path, size_t *len)
{
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return NULL;
  size_t alloc = 4096, used = 0, got;
  char *buf = malloc (alloc + 1);
  while ((got = fread (buf + used, 1, alloc - used, f)) > 0)
    {
      used += got;
      if (used == alloc)
        buf = realloc (buf, (alloc *= 2) + 1);
    }
  fclose (f);
  buf[used] = '\0';
  if (len)
    *len = used;
  return buf;
}

/* The recorded log of invocations: "<n> <subcommand> <last argument>" lines. */
static char *
calls_log (void)
{
  char path[512];
  snprintf (path, sizeof path, "%s/log", record_dir);
  char *text = read_file (path, NULL);
  return text ? text : strdup ("");
}

static char **
recorded_args (int n)
{
  char path[512];
  size_t len;
  snprintf (path, sizeof path, "%s/calls/%d.args", record_dir, n);
  char *raw = read_file (path, &len);
  ck_assert_msg (raw != NULL, "no call %d recorded", n);
  char **argv = calloc (len + 1, sizeof (char *));
  size_t count = 0;
  for (size_t i = 0; i < len; i += strlen (raw + i) + 1)
    argv[count++] = strdup (raw + i);
  free (raw);
  /* argv[0] of the recorded list is the first argument; prepend the program. */
  memmove (argv + 1, argv, count * sizeof (char *));
  argv[0] = strdup (FAKE_PODMAN);
  argv[count + 1] = NULL;
  return argv;
}

static void
free_argv (char **argv)
{
  for (size_t i = 0; argv[i]; i++)
    free (argv[i]);
  free (argv);
}

/* The --name=... of a recorded call. */
static char *
recorded_name (int n)
{
  char **argv = recorded_args (n);
  char *name = NULL;
  for (size_t i = 0; argv[i]; i++)
    if (name == NULL && strncmp (argv[i], "--name=", 7) == 0)
      name = strdup (argv[i] + 7);
  free_argv (argv);
  ck_assert_ptr_nonnull (name);
  return name;
}

static enum bx_run_status
run (struct bx_module *m, enum bx_tool tool, const char *json, const char *const *mounts,
     struct bx_run_output *out, const char **sentence)
{
  bx_run_spec *spec = test_spec (tool, json, "c1", mounts);
  memset (out, 0, sizeof *out);
  *sentence = NULL;
  enum bx_run_status st = bx_module_run (m, spec, out, sentence);
  bx_run_spec_free (spec);
  return st;
}

static enum bx_run_status
run_fetch (struct bx_module *m, struct bx_run_output *out, const char **sentence)
{
  bx_run_spec *spec
      = test_spec (BX_TOOL_HTTP_FETCH, "{\"url\":\"https://example.com/\"}", "c1", NULL);
  const char *hosts[] = { "example.com", "*.example.org" };
  bx_run_spec_set_egress (spec, hosts, 2);
  memset (out, 0, sizeof *out);
  *sentence = NULL;
  enum bx_run_status st = bx_module_run (m, spec, out, sentence);
  bx_run_spec_free (spec);
  return st;
}

static int
egress_entries (void)
{
  char path[512];
  snprintf (path, sizeof path, "%s/run/egress", home_dir);
  DIR *d = opendir (path);
  if (d == NULL)
    return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      n++;
  closedir (d);
  return n;
}

static double
seconds_since (struct timespec t0)
{
  struct timespec t1;
  clock_gettime (CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

static const char *const notes_ro[] = { "ro:/home/me/notes", NULL };
#define READ_JSON "{\"path\":\"/home/me/notes/a.txt\"}"

/* ---- exit 0 and 1 -------------------------------------------------------------------- */

START_TEST (test_exit_0_answers_the_output_and_feeds_the_arguments)
{
  use_fixture ("ok");
  struct bx_module *m = load (NULL);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), BX_RUN_OK);
  ck_assert_str_eq (out.content, "hello from the tool");
  ck_assert (!out.truncated);

  char path[512];
  snprintf (path, sizeof path, "%s/calls/0.stdin", record_dir);
  char *stdin_text = read_file (path, NULL);
  ck_assert_str_eq (stdin_text, READ_JSON);
  free (stdin_text);

  /* The list podman got is the golden one, with the name in its place. */
  char *name = recorded_name (0);
  char **argv = recorded_args (0);
  golden_check_in ("fake_read_file.argv", argv, name, home_dir);
  free_argv (argv);
  free (name);

  char *log = calls_log ();
  ck_assert_str_eq (log, "0 run read_file\n");
  free (log);
  bx_run_output_clear (&out);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_exit_1_is_a_result_the_model_reads)
{
  use_fixture ("tool-said-no");
  struct bx_module *m = load (NULL);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), BX_RUN_OK);
  ck_assert_str_eq (out.content, "read_file: /srv/x: no such file");
  bx_run_output_clear (&out);
  test_podman_unload (m);
}
END_TEST

/* ---- the error table ------------------------------------------------------------------ */

static void
expect_failure (const char *fixture, enum bx_run_status want, const char *want_sentence,
                bool want_pointer, const char *want_in_log)
{
  use_fixture (fixture);
  struct bx_module *m = load (NULL);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), want);
  ck_assert_str_eq (sentence, want_sentence);
  const char *log = test_log_text (&log_capture);
  if (want_pointer)
    ck_assert_msg (strstr (log, POINTER) != NULL, "no runbook pointer in: %s", log);
  else
    ck_assert_msg (strstr (log, POINTER) == NULL, "a runbook pointer in: %s", log);
  if (want_in_log)
    ck_assert_msg (strstr (log, want_in_log) != NULL, "no \"%s\" in: %s", want_in_log, log);
  bx_run_output_clear (&out);
  test_podman_unload (m);
}

START_TEST (test_exit_2_is_the_tool_could_not_run)
{
  expect_failure ("exit2", BX_RUN_FAILED, SENT_COULD_NOT_RUN, false, "input does not parse");
}
END_TEST

START_TEST (test_exit_125_is_unavailable_with_the_runbook_pointer)
{
  expect_failure ("exit125", BX_RUN_UNAVAILABLE, SENT_UNAVAILABLE, true, "image not known");
}
END_TEST

START_TEST (test_exit_126_is_unavailable_with_the_runbook_pointer)
{
  expect_failure ("exit126", BX_RUN_UNAVAILABLE, SENT_UNAVAILABLE, true, "permission denied");
}
END_TEST

START_TEST (test_exit_127_is_unavailable_with_the_runbook_pointer)
{
  expect_failure ("exit127", BX_RUN_UNAVAILABLE, SENT_UNAVAILABLE, true,
                  "executable file not found");
}
END_TEST

START_TEST (test_exit_137_is_stopped_and_the_output_is_dropped)
{
  expect_failure ("exit137", BX_RUN_FAILED, SENT_STOPPED, false, NULL);
}
END_TEST

/* toolkit itself killed by SIGXFSZ (when it is not the container's pid 1, which the kernel
 * spares such signals). */
START_TEST (test_exit_153_is_past_the_file_size_limit)
{
  expect_failure ("exit153", BX_RUN_FAILED, SENT_FILE_SIZE, false, "file size limit");
}
END_TEST

START_TEST (test_another_exit_is_an_unexpected_status)
{
  expect_failure ("exit3", BX_RUN_FAILED, SENT_UNEXPECTED, false, "exit 3");
}
END_TEST

START_TEST (test_podman_dying_of_a_signal_is_an_unexpected_status)
{
  expect_failure ("signal", BX_RUN_FAILED, SENT_UNEXPECTED, false, "signal 11");
}
END_TEST

START_TEST (test_podman_dying_of_a_signal_still_kills_and_removes_the_container)
{
  /* A podman client that dies (the OOM killer, a stray kill) leaves its container running
   * under conmon: with no client left, nothing would enforce the time limit on it. */
  use_fixture ("signal");
  struct bx_module *m = load (NULL);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence),
                    BX_RUN_FAILED);
  ck_assert_str_eq (sentence, SENT_UNEXPECTED);
  char *name = recorded_name (0);
  char *want = NULL;
  ck_assert_int_ge (asprintf (&want, "0 run read_file\n1 kill %s\n2 rm %s\n", name, name), 0);
  char *log = calls_log ();
  ck_assert_str_eq (log, want);
  free (log);
  free (want);
  free (name);
  test_podman_unload (m);
}
END_TEST

struct cancel_arg
{
  bx_run_spec *spec;
  int ms;
};

static void *
cancel_later (void *arg)
{
  struct cancel_arg *c = arg;
  struct timespec ts = { 0, (long)c->ms * 1000000L };
  nanosleep (&ts, NULL);
  bx_run_spec_cancel (c->spec);
  return NULL;
}

/* ABI 1.1: a cancelled call's container is killed and removed at once, and the call
 * answers the fixed sentence, long before the time limit. */
START_TEST (test_a_cancelled_call_kills_and_removes_its_container)
{
  use_fixture ("sleep");
  struct bx_module *m = load (NULL);
  bx_run_spec *spec = test_spec (BX_TOOL_SHELL, "{\"command\":\"sleep 60\"}", "c1", NULL);
  struct cancel_arg c = { spec, 300 };
  pthread_t t;
  pthread_create (&t, NULL, cancel_later, &c);
  struct bx_run_output out;
  const char *sentence = NULL;
  struct timespec t0, t1;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_FAILED);
  clock_gettime (CLOCK_MONOTONIC, &t1);
  pthread_join (t, NULL);
  bx_run_spec_free (spec);
  ck_assert_str_eq (sentence, "the call was cancelled");
  double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  ck_assert_msg (took < 5, "took %.1f s", took);
  char *name = recorded_name (0);
  char *want = NULL;
  ck_assert_int_ge (
      asprintf (&want, "0 run shell\n1 kill %s\n2 rm %s\n3 rm %s\n", name, name, name), 0);
  char *log = calls_log ();
  ck_assert_str_eq (log, want);
  free (log);
  free (want);
  free (name);
  test_podman_unload (m);
}
END_TEST

/* A call cancelled before it starts never starts a container. */
START_TEST (test_a_call_cancelled_before_it_starts_runs_nothing)
{
  use_fixture ("ok");
  struct bx_module *m = load (NULL);
  bx_run_spec *spec = test_spec (BX_TOOL_SHELL, "{\"command\":\"true\"}", "c1", NULL);
  bx_run_spec_cancel (spec);
  struct bx_run_output out;
  const char *sentence = NULL;
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_FAILED);
  bx_run_spec_free (spec);
  ck_assert_str_eq (sentence, "the call was cancelled");
  char *log = calls_log ();
  ck_assert_str_eq (log, "");
  free (log);
  test_podman_unload (m);
}
END_TEST

/* ABI 1.1: the spec's limits win over the options in the tool container's arguments. */
START_TEST (test_spec_limits_reach_the_arguments)
{
  use_fixture ("ok");
  const char *extra[] = { "memory", "512m", "pids", "128", NULL };
  struct bx_module *m = load (extra);
  bx_run_spec *spec = test_spec (BX_TOOL_SHELL, "{\"command\":\"true\"}", "c1", NULL);
  bx_run_spec_set_limit (spec, BX_LIMIT_MEMORY, 64 << 20);
  bx_run_spec_set_limit (spec, BX_LIMIT_PIDS, 32);
  bx_run_spec_set_limit (spec, BX_LIMIT_CPU, 1500);
  bx_run_spec_set_limit (spec, BX_LIMIT_FILE_SIZE, 1 << 20);
  struct bx_run_output out;
  const char *sentence = NULL;
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_OK);
  bx_run_output_clear (&out);
  bx_run_spec_free (spec);
  char path[512];
  snprintf (path, sizeof path, "%s/calls/0.args", record_dir);
  size_t len = 0;
  char *args = read_file (path, &len);
  ck_assert_ptr_nonnull (args);
  for (size_t i = 0; i < len; i++)
    if (args[i] == '\0')
      args[i] = ' ';
  ck_assert_msg (strstr (args, " --cpus=1.500 --ulimit=fsize=1048576:1048576 --pids-limit=32 "
                               "--memory=67108864 ")
                     != NULL,
                 "args: %s", args);
  free (args);
  test_podman_unload (m);
}
END_TEST

/* ABI 1.1: podman's own folders and the program given by path are protected. */
START_TEST (test_protected_paths_name_podman_storage_and_the_program)
{
  use_fixture ("ok");
  struct bx_module *m = load (NULL);
  const char *const *p = bx_module_protected_paths (m);
  ck_assert_ptr_nonnull (p);
  bool storage = false, program = false;
  for (; *p != NULL; p++)
    {
      ck_assert_int_eq ((*p)[0], '/');
      if (strcmp (*p, FAKE_PODMAN) == 0)
        program = true;
      if (strcmp (*p, geteuid () == 0 ? "/var/lib/containers" : "/etc/containers") == 0)
        storage = true;
    }
  ck_assert (storage);
  ck_assert (program);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_a_flood_on_standard_error_is_drained_and_the_pointer_kept)
{
  use_fixture ("noisy125"); /* 1 MiB of "e" on standard error, then exit 125 */
  struct bx_module *m = load (NULL);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence),
                    BX_RUN_UNAVAILABLE);
  ck_assert_str_eq (sentence, SENT_UNAVAILABLE);
  const char *log = test_log_text (&log_capture);
  const char *run_of_e = strstr (log, "eeee");
  ck_assert_ptr_nonnull (run_of_e);
  ck_assert_uint_le (strspn (run_of_e, "e"), 4096);
  /* brokerd cuts long log lines: the pointer after podman's error must survive. */
  ck_assert_msg (strstr (log, POINTER) != NULL, "no runbook pointer in the log");
  test_podman_unload (m);
}
END_TEST

START_TEST (test_podman_missing_is_unavailable_with_the_runbook_pointer)
{
  const char *options[] = { "podman", "/nonexistent/podman", "image", "x", NULL };
  char *error = NULL;
  struct bx_module *m = test_podman_load (options, home_dir, &log_capture, &error);
  ck_assert_ptr_nonnull (m);
  /* create only warns: podman may be installed after brokerd starts. */
  ck_assert_ptr_nonnull (strstr (test_log_text (&log_capture), "not found"));
  test_log_clear (&log_capture);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence),
                    BX_RUN_UNAVAILABLE);
  ck_assert_str_eq (sentence, SENT_UNAVAILABLE);
  ck_assert_ptr_nonnull (strstr (test_log_text (&log_capture), POINTER));
  ck_assert_ptr_nonnull (strstr (test_log_text (&log_capture), "No such file"));
  test_podman_unload (m);
}
END_TEST

/* ---- the cap ---------------------------------------------------------------------------- */

START_TEST (test_output_past_the_cap_is_truncated_and_the_container_removed)
{
  use_fixture ("flood"); /* 5000 bytes, then it sleeps 30 s */
  const char *extra[] = { "output_cap", "1000", NULL };
  struct bx_module *m = load (extra);
  struct bx_run_output out;
  const char *sentence;
  struct timespec t0;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  ck_assert_int_eq (run (m, BX_TOOL_SHELL, "{\"command\":\"yes\"}", NULL, &out, &sentence),
                    BX_RUN_OK);
  ck_assert (out.truncated);
  ck_assert_uint_eq (out.len, 1000);
  ck_assert_uint_eq (strspn (out.content, "x"), 1000);
  /* Not the fixture's 30 s: at worst `podman run` gets its 10 s grace after the kill and is
   * then killed itself (a loaded machine once took 10.1 s there). */
  ck_assert_msg (seconds_since (t0) < 25, "took %.1f s", seconds_since (t0));

  char *name = recorded_name (0);
  char *want = NULL;
  ck_assert_int_ge (
      asprintf (&want, "0 run shell\n1 kill %s\n2 rm %s\n3 rm %s\n", name, name, name), 0);
  char *log = calls_log ();
  ck_assert_str_eq (log, want);
  free (log);
  free (want);
  free (name);
  bx_run_output_clear (&out);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_the_largest_output_cap_keeps_the_output)
{
  /* The cap plus the one byte more must not wrap around to a read of nothing. */
  use_fixture ("ok");
  const char *extra[] = { "output_cap", "18446744073709551615", NULL };
  struct bx_module *m = load (extra);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), BX_RUN_OK);
  ck_assert_str_eq (out.content, "hello from the tool");
  ck_assert (!out.truncated);
  bx_run_output_clear (&out);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_output_of_exactly_the_cap_is_not_truncated)
{
  char path[512];
  snprintf (path, sizeof path, "%s/exact.fixture", record_dir);
  FILE *f = fopen (path, "we");
  fprintf (f, "RUN_STDOUT=\"0123456789\"\n");
  fclose (f);
  setenv ("FAKE_PODMAN_FIXTURE", path, 1);
  const char *extra[] = { "output_cap", "10", NULL };
  struct bx_module *m = load (extra);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), BX_RUN_OK);
  ck_assert (!out.truncated);
  ck_assert_str_eq (out.content, "0123456789");
  char *log = calls_log ();
  ck_assert_str_eq (log, "0 run read_file\n"); /* no kill, no rm */
  free (log);
  bx_run_output_clear (&out);
  test_podman_unload (m);
}
END_TEST

/* ---- the time limit --------------------------------------------------------------------- */

START_TEST (test_past_the_time_limit_kills_then_removes_by_name)
{
  use_fixture ("sleep");
  const char *extra[] = { "read_file_ms", "300", NULL };
  struct bx_module *m = load (extra);
  struct bx_run_output out;
  const char *sentence;
  struct timespec t0;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence),
                    BX_RUN_FAILED);
  ck_assert_str_eq (sentence, SENT_TIME_LIMIT);
  double took = seconds_since (t0);
  ck_assert_msg (took >= 0.3 && took < 5, "took %.2f s", took);

  char *name = recorded_name (0);
  char *want = NULL;
  ck_assert_int_ge (
      asprintf (&want, "0 run read_file\n1 kill %s\n2 rm %s\n3 rm %s\n", name, name, name), 0);
  char *log = calls_log ();
  ck_assert_str_eq (log, want);
  free (log);
  free (want);

  /* kill and rm carry the global options, as the golden lists say. */
  char **argv = recorded_args (1);
  golden_check ("fake_kill.argv", argv, name);
  free_argv (argv);
  argv = recorded_args (2);
  golden_check ("fake_rm.argv", argv, name);
  free_argv (argv);
  free (name);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_each_tool_has_its_own_time_limit)
{
  use_fixture ("sleep");
  const char *extra[] = { "read_file_ms", "30s", "shell_ms", "200ms", NULL };
  struct bx_module *m = load (extra);
  struct bx_run_output out;
  const char *sentence;
  struct timespec t0;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  ck_assert_int_eq (run (m, BX_TOOL_SHELL, "{\"command\":\"sleep 60\"}", NULL, &out, &sentence),
                    BX_RUN_FAILED);
  ck_assert_str_eq (sentence, SENT_TIME_LIMIT);
  ck_assert (seconds_since (t0) < 5);
  test_podman_unload (m);
}
END_TEST

/* ---- standard input --------------------------------------------------------------------- */

START_TEST (test_two_mebibytes_of_arguments_reach_standard_input_whole)
{
  use_fixture ("ok");
  struct bx_module *m = load (NULL);
  size_t n = 2 * 1024 * 1024;
  char *json = malloc (n + 64);
  int head = sprintf (json, "{\"path\":\"/srv/big\",\"content\":\"");
  memset (json + head, 'y', n);
  strcpy (json + head + n, "\"}");
  static const char *const rw[] = { "rw:/srv", NULL };
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_WRITE_FILE, json, rw, &out, &sentence), BX_RUN_OK);
  char path[512];
  size_t len;
  snprintf (path, sizeof path, "%s/calls/0.stdin", record_dir);
  char *got = read_file (path, &len);
  ck_assert_uint_eq (len, strlen (json));
  ck_assert (memcmp (got, json, len) == 0);
  free (got);
  free (json);
  bx_run_output_clear (&out);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_a_mount_podman_would_split_is_refused)
{
  use_fixture ("ok");
  struct bx_module *m = load (NULL);
  static const char *const bad[] = { "ro:/srv/a:b", NULL };
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, bad, &out, &sentence), BX_RUN_FAILED);
  ck_assert_str_eq (sentence, SENT_COULD_NOT_RUN);
  char *log = calls_log ();
  ck_assert_str_eq (log, ""); /* podman never ran */
  free (log);
  test_podman_unload (m);
}
END_TEST

/* ---- names ------------------------------------------------------------------------------- */

START_TEST (test_names_differ_across_instances_and_calls)
{
  use_fixture ("ok");
  struct bx_run_output out;
  const char *sentence;
  struct bx_module *a = load (NULL);
  ck_assert_int_eq (run (a, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), BX_RUN_OK);
  bx_run_output_clear (&out);
  ck_assert_int_eq (run (a, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), BX_RUN_OK);
  bx_run_output_clear (&out);
  test_podman_unload (a);
  /* A restarted brokerd: same session, same call, counter from 0 again. */
  struct bx_module *b = load (NULL);
  ck_assert_int_eq (run (b, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), BX_RUN_OK);
  bx_run_output_clear (&out);
  test_podman_unload (b);

  char *n0 = recorded_name (0), *n1 = recorded_name (1), *n2 = recorded_name (2);
  ck_assert_str_ne (n0, n1);
  ck_assert_str_ne (n0, n2);
  ck_assert (strncmp (n0, "boxmaker-s1-c1-0-", 17) == 0);
  ck_assert (strncmp (n1, "boxmaker-s1-c1-1-", 17) == 0);
  ck_assert (strncmp (n2, "boxmaker-s1-c1-0-", 17) == 0);
  free (n0);
  free (n1);
  free (n2);
}
END_TEST

struct thread_arg
{
  struct bx_module *m;
  enum bx_run_status status;
  char *content;
};

static void *
thread_run (void *p)
{
  struct thread_arg *a = p;
  struct bx_run_output out;
  const char *sentence;
  a->status = run (a->m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence);
  a->content = out.content ? strdup (out.content) : NULL;
  bx_run_output_clear (&out);
  return NULL;
}

START_TEST (test_concurrent_calls_each_get_their_own_container)
{
  use_fixture ("ok");
  struct bx_module *m = load (NULL);
  enum
  {
    N = 8
  };
  pthread_t t[N];
  struct thread_arg args[N];
  for (int i = 0; i < N; i++)
    {
      args[i] = (struct thread_arg){ .m = m };
      pthread_create (&t[i], NULL, thread_run, &args[i]);
    }
  for (int i = 0; i < N; i++)
    {
      pthread_join (t[i], NULL);
      ck_assert_int_eq (args[i].status, BX_RUN_OK);
      ck_assert_str_eq (args[i].content, "hello from the tool");
      free (args[i].content);
    }
  char *names[N];
  for (int i = 0; i < N; i++)
    names[i] = recorded_name (i);
  for (int i = 0; i < N; i++)
    for (int j = i + 1; j < N; j++)
      ck_assert_str_ne (names[i], names[j]);
  for (int i = 0; i < N; i++)
    free (names[i]);
  test_podman_unload (m);
}
END_TEST

/* ---- options ------------------------------------------------------------------------------ */

static void
expect_refused (const char *const *options, const char *want)
{
  char *error = NULL;
  struct bx_module *m = test_podman_load (options, home_dir, &log_capture, &error);
  ck_assert_ptr_null (m);
  ck_assert_msg (error != NULL && strstr (error, want) != NULL, "error \"%s\" lacks \"%s\"",
                 error ? error : "(none)", want);
  free (error);
}

START_TEST (test_options_are_checked_at_create)
{
  const char *unknown[] = { "image", "x", "imagee", "y", NULL };
  expect_refused (unknown, "imagee");
  const char *no_image[] = { "podman", FAKE_PODMAN, NULL };
  expect_refused (no_image, "image");
  const char *flag_image[] = { "image", "--privileged", NULL };
  expect_refused (flag_image, "image");
  const char *flag_network[] = { "image", "x", "egress_network", "-host", NULL };
  expect_refused (flag_network, "egress_network");
  const char *bad_cap[] = { "image", "x", "output_cap", "lots", NULL };
  expect_refused (bad_cap, "output_cap");
  const char *bad_memory[] = { "image", "x", "memory", "512q", NULL };
  expect_refused (bad_memory, "memory");
  const char *tiny_memory[] = { "image", "x", "memory", "1k", NULL };
  expect_refused (tiny_memory, "memory");
  const char *bad_pids[] = { "image", "x", "pids", "0", NULL };
  expect_refused (bad_pids, "pids");
  const char *bad_limit[] = { "image", "x", "shell_ms", "soon", NULL };
  expect_refused (bad_limit, "shell_ms");
  const char *huge_limit[] = { "image", "x", "shell_ms", "100000000", NULL };
  expect_refused (huge_limit, "shell_ms");
  /* Gone: it ran sandboxes as brokerd's own user. */
  const char *keep_id[] = { "image", "x", "userns_keep_id", "true", NULL };
  expect_refused (keep_id, "unknown option \"userns_keep_id\"");
  const char *bad_cpus[] = { "image", "x", "cpus", "-1", NULL };
  expect_refused (bad_cpus, "cpus");
  const char *word_cpus[] = { "image", "x", "cpus", "all", NULL };
  expect_refused (word_cpus, "cpus");
  const char *tiny_fsize[] = { "image", "x", "file_size", "1k", NULL };
  expect_refused (tiny_fsize, "file_size");
  const char *bad_base[] = { "image", "x", "uidmap_base", "0", NULL };
  expect_refused (bad_base, "uidmap_base");
  /* Without its seccomp profile a sandbox could reach keyrings: no start. */
  const char *no_profile[] = { "image", "x", "seccomp_profile", "/nonexistent/seccomp.json", NULL };
  expect_refused (no_profile, "option seccomp_profile: cannot read \"/nonexistent/seccomp.json\"");
  const char *relative_profile[] = { "image", "x", "seccomp_profile", "seccomp.json", NULL };
  expect_refused (relative_profile, "not an absolute path");
  const char *relative_toolkit[] = { "image", "x", "toolkit", "bin/toolkit", NULL };
  expect_refused (relative_toolkit, "option toolkit: \"bin/toolkit\" is not an absolute path");
  const char *colon_toolkit[] = { "image", "x", "toolkit", "/a:b/toolkit", NULL };
  expect_refused (colon_toolkit, "option toolkit");
}
END_TEST

/* A fixture of the test's own: SETTINGS (fixture lines) written to the record folder. */
static void
own_fixture (const char *settings)
{
  char path[512];
  snprintf (path, sizeof path, "%s/own.fixture", record_dir);
  FILE *f = fopen (path, "w");
  ck_assert_ptr_nonnull (f);
  fputs (settings, f);
  fclose (f);
  setenv ("FAKE_PODMAN_FIXTURE", path, 1);
}

/* podman info's JSON for a host: VERSION, MANAGER, CONTROLLERS (JSON strings), ROOTLESS,
 * and rootless, SIZE subordinate ids from host id 100000 mapped from 1 on. */
static void
info_fixture (const char *version, const char *manager, const char *controllers, bool rootless,
              int size)
{
  char *text = NULL;
  ck_assert_int_ge (
      asprintf (&text,
                "INFO_JSON='{\"host\":{\"cgroupVersion\":\"%s\",\"cgroupManager\":\"%s\","
                "\"cgroupControllers\":[%s],\"security\":{\"rootless\":%s},\"idMappings\":{"
                "\"uidmap\":[{\"container_id\":0,\"host_id\":1000,\"size\":1},"
                "{\"container_id\":1,\"host_id\":100000,\"size\":%d}],"
                "\"gidmap\":[{\"container_id\":0,\"host_id\":1000,\"size\":1},"
                "{\"container_id\":1,\"host_id\":100000,\"size\":%d}]}}}'\n",
                version, manager, controllers, rootless ? "true" : "false", size, size),
      0);
  own_fixture (text);
  free (text);
}

/* Options for the fake podman and a profile; EXTRA appended (NULL-terminated pairs). */
static char *
load_refused (const char *const *extra)
{
  static char profile[300];
  snprintf (profile, sizeof profile, "%s/seccomp.json", home_dir);
  FILE *f = fopen (profile, "w");
  ck_assert_ptr_nonnull (f);
  fputs ("{}\n", f);
  fclose (f);
  const char *options[32] = { "podman", FAKE_PODMAN, "image", "x", "seccomp_profile", profile };
  size_t n = 6;
  for (size_t i = 0; extra != NULL && extra[i] != NULL; i++)
    options[n++] = extra[i];
  options[n] = NULL;
  char *error = NULL;
  struct bx_module *m = test_podman_load (options, home_dir, &log_capture, &error);
  if (m != NULL)
    test_podman_unload (m);
  ck_assert_msg (m == NULL, "create accepted the host");
  return error;
}

static void
expect_host_refused (const char *const *extra, const char *want1, const char *want2)
{
  char *error = load_refused (extra);
  ck_assert_msg (error != NULL && strstr (error, want1) != NULL && strstr (error, want2) != NULL,
                 "error \"%s\" lacks \"%s\" or \"%s\"", error ? error : "(none)", want1, want2);
  free (error);
}

/* Issue 23 item 1: a sandbox never runs as brokerd's own user.  As root its ids start at
 * 700000000; rootless they are the user's subordinate ids, and keep-id is never passed. */
START_TEST (test_sandboxes_never_run_as_brokerds_user)
{
  use_fixture ("ok");
  struct bx_module *m = load (NULL);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), BX_RUN_OK);
  char **argv = recorded_args (0);
  bool keep_id = false, uidmap = false, gidmap = false;
  const char *want_uid = geteuid () == 0 ? "--uidmap=0:700000000:65536" : "--uidmap=0:1:65536";
  const char *want_gid = geteuid () == 0 ? "--gidmap=0:700000000:65536" : "--gidmap=0:1:65536";
  for (size_t i = 0; argv[i]; i++)
    {
      keep_id |= strstr (argv[i], "keep-id") != NULL;
      uidmap |= strcmp (argv[i], want_uid) == 0;
      gidmap |= strcmp (argv[i], want_gid) == 0;
    }
  ck_assert (!keep_id);
  ck_assert (uidmap && gidmap);
  free_argv (argv);
  bx_run_output_clear (&out);
  test_podman_unload (m);

  /* Rootless: the first subordinate id, named in the log at start. */
  info_fixture ("v2", "systemd", "\"cpu\",\"memory\",\"pids\"", true, 65536);
  test_log_clear (&log_capture);
  const char *base1[] = { "uidmap_base", "1", NULL };
  m = load (base1);
  ck_assert_msg (
      strstr (test_log_text (&log_capture), "sandboxes run as host uid 100000, gid 100000") != NULL,
      "log: %s", test_log_text (&log_capture));
  test_podman_unload (m);
  /* Too few subordinate ids for 65536 from the base on, or none: no start. */
  info_fixture ("v2", "systemd", "\"cpu\",\"memory\",\"pids\"", true, 1000);
  expect_host_refused (base1, "rootless podman has 1000 subordinate uids", "usermod --add-subuids");
  const char *base2[] = { "uidmap_base", "2", NULL };
  info_fixture ("v2", "systemd", "\"cpu\",\"memory\",\"pids\"", true, 65536);
  expect_host_refused (base2, "subordinate uids", "uidmap_base 2");
}
END_TEST

/* Issue 24: a limit the config promises holds, or brokerd does not start (naming what the
 * host lacks and the fix). */
START_TEST (test_a_host_where_the_limits_would_not_hold_stops_brokerd)
{
  const char *base1[] = { "uidmap_base", "1", NULL };
  info_fixture ("v1", "cgroupfs", "", true, 65536);
  expect_host_refused (base1, "rootless podman applies no memory, pids or CPU limit on a cgroup v1",
                       "cgroup_limits: off");
  info_fixture ("v2", "cgroupfs", "\"cpu\",\"memory\",\"pids\"", true, 65536);
  expect_host_refused (base1, "no systemd user session", "loginctl enable-linger");
  info_fixture ("v2", "systemd", "\"memory\",\"pids\"", true, 65536);
  expect_host_refused (base1, "cannot use the cpu cgroup controller",
                       "Delegate=cpu cpuset io memory pids");
  info_fixture ("v1", "cgroupfs", "\"cpu\",\"memory\"", false, 0);
  expect_host_refused (NULL, "podman has no pids cgroup controller", "cgroup_limits: off");
  own_fixture ("INFO_EXIT=125\n");
  expect_host_refused (NULL, "podman info failed (exit 125)", "fake info failure");
  /* Where they hold: rootful on cgroup v1, rootless on v2 with a session and the
   * controllers. */
  info_fixture ("v1", "cgroupfs", "\"cpuset\",\"cpu\",\"cpuacct\",\"memory\",\"pids\"", false, 0);
  test_podman_unload (load (NULL));
  info_fixture ("v2", "systemd", "\"cpu\",\"memory\",\"pids\"", true, 65536);
  test_podman_unload (load (base1));
}
END_TEST

/* cgroup_limits: off runs calls without memory, pids or CPU limits, on a host that could not
 * apply them; an option or a grant that sets one is not given up quietly. */
START_TEST (test_cgroup_limits_off_passes_none_and_refuses_a_promise)
{
  info_fixture ("v1", "cgroupfs", "", true, 65536);
  const char *off[] = { "uidmap_base", "1", "cgroup_limits", "off", NULL };
  struct bx_module *m = load (off);
  ck_assert_msg (strstr (test_log_text (&log_capture), "cgroup_limits is off") != NULL, "log: %s",
                 test_log_text (&log_capture));
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), BX_RUN_OK);
  bx_run_output_clear (&out);
  char **argv = recorded_args (0);
  for (size_t i = 0; argv[i]; i++)
    ck_assert_msg (strncmp (argv[i], "--memory", 8) != 0 && strncmp (argv[i], "--pids", 6) != 0
                       && strncmp (argv[i], "--cpus", 6) != 0,
                   "passed %s", argv[i]);
  free_argv (argv);
  /* A grant's memory limit: the call does not run. */
  bx_run_spec *spec = test_spec (BX_TOOL_SHELL, "{\"command\":\"true\"}", "c2", NULL);
  bx_run_spec_set_limit (spec, BX_LIMIT_MEMORY, 64 << 20);
  ck_assert_int_eq (bx_module_run (m, spec, &out, &sentence), BX_RUN_UNAVAILABLE);
  ck_assert_str_eq (sentence,
                    "the tool runner cannot apply this call's memory, process or CPU limit");
  bx_run_spec_free (spec);
  bx_run_output_clear (&out);
  char *log = calls_log ();
  ck_assert_str_eq (log, "0 run read_file\n");
  free (log);
  test_podman_unload (m);

  const char *memory[] = { "cgroup_limits", "off", "memory", "512m", NULL };
  expect_host_refused (memory, "option memory: no limit applies with cgroup_limits: off", "");
  const char *cpus[] = { "cgroup_limits", "off", "cpus", "2", NULL };
  expect_host_refused (cpus, "option cpus", "cgroup_limits: off");
  const char *bad[] = { "cgroup_limits", "maybe", NULL };
  expect_host_refused (bad, "option cgroup_limits: \"maybe\" is not required or off", "");
}
END_TEST

/* podman installed after brokerd started: the host is checked at the first call, once. */
START_TEST (test_a_podman_missing_at_start_is_checked_at_the_first_call)
{
  use_fixture ("ok");
  char later[512];
  snprintf (later, sizeof later, "%s/podman-later", home_dir);
  const char *extra[] = { "podman", later, NULL };
  struct bx_module *m = load (extra);
  ck_assert_int_ne (access (later, F_OK), 0);
  ck_assert_int_eq (symlink (FAKE_PODMAN, later), 0);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), BX_RUN_OK);
  bx_run_output_clear (&out);
  ck_assert_int_eq (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence), BX_RUN_OK);
  bx_run_output_clear (&out);
  char path[512];
  snprintf (path, sizeof path, "%s/info.log", record_dir);
  char *text = read_file (path, NULL);
  ck_assert_ptr_nonnull (text);
  ck_assert_str_eq (text, "info\n");
  free (text);
  test_podman_unload (m);

  /* One where the limits would not hold: every call is unavailable, saying why in the log. */
  unlink (later);
  info_fixture ("v1", "cgroupfs", "", true, 65536); /* podman's environment is set at create */
  m = load (extra);
  ck_assert_int_eq (symlink (FAKE_PODMAN, later), 0);
  ck_assert_msg (run (m, BX_TOOL_READ_FILE, READ_JSON, notes_ro, &out, &sentence)
                     == BX_RUN_UNAVAILABLE,
                 "log: %s", test_log_text (&log_capture));
  ck_assert_str_eq (sentence, SENT_UNAVAILABLE);
  ck_assert_ptr_nonnull (strstr (test_log_text (&log_capture), "cgroup v1"));
  ck_assert_ptr_nonnull (strstr (test_log_text (&log_capture), POINTER));
  bx_run_output_clear (&out);
  test_podman_unload (m);
}
END_TEST

/* Issue 24 item 5: podman gets no variable systemd meant for brokerd alone (NOTIFY_SOCKET
 * made conmon send READY=1 for every container), and keeps the rest. */
START_TEST (test_podman_gets_none_of_systemds_variables_for_brokerd)
{
  static const char *const names[] = { "NOTIFY_SOCKET",  "LISTEN_FDS",    "LISTEN_PID",
                                       "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID" };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    setenv (names[i], "/run/systemd/notify", 1);
  setenv ("BX_TEST_KEPT", "kept", 1);
  use_fixture ("ok");
  struct bx_module *m = load (NULL);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run_fetch (m, &out, &sentence), BX_RUN_OK);
  bx_run_output_clear (&out);
  test_podman_unload (m);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    unsetenv (names[i]);
  unsetenv ("BX_TEST_KEPT");
  /* info, the proxy, the tool, kill and rm. */
  const char *files[] = { "info.env", "calls/0.env", "calls/1.env", "calls/2.env", "calls/3.env" };
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++)
    {
      char path[512];
      snprintf (path, sizeof path, "%s/%s", record_dir, files[f]);
      char *env = read_file (path, NULL);
      ck_assert_msg (env != NULL, "no %s", files[f]);
      for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        {
          char want[64];
          snprintf (want, sizeof want, "\n%s=", names[i]);
          ck_assert_msg (strstr (env, want) == NULL
                             && strncmp (env, want + 1, strlen (want + 1)) != 0,
                         "%s holds %s", files[f], names[i]);
        }
      ck_assert_msg (strstr (env, "BX_TEST_KEPT=kept") != NULL, "%s lost the rest", files[f]);
      free (env);
    }
}
END_TEST

/* ---- http_fetch: the egress lifecycle ----------------------------------------------------- */

/* The proxy was call 0; MIDDLE are the lines between it and the proxy's kill (call NEXT)
 * and rm (NEXT + 1); the egress folder is gone. */
static void
expect_egress_cleanup (const char *middle, int next)
{
  char *name = recorded_name (0);
  size_t len = strlen (name);
  ck_assert_msg (len > 7 && strcmp (name + len - 7, "-egress") == 0,
                 "first call is not the proxy: %s", name);
  char *want = NULL;
  ck_assert_int_ge (asprintf (&want, "0 run example.com,*.example.org\n%s%d kill %s\n%d rm %s\n",
                              middle, next, name, next + 1, name),
                    0);
  char *log = calls_log ();
  ck_assert_str_eq (log, want);
  free (log);
  free (want);
  free (name);
  ck_assert_int_eq (egress_entries (), 0);
}

START_TEST (test_http_fetch_runs_proxy_then_tool_then_removes_both)
{
  use_fixture ("ok");
  struct bx_module *m = load (NULL);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run_fetch (m, &out, &sentence), BX_RUN_OK);
  ck_assert_str_eq (out.content, "hello from the tool");
  expect_egress_cleanup ("1 run http_fetch\n", 2);

  char *proxy = recorded_name (0);
  char *tool = recorded_name (1);
  char **argv = recorded_args (0);
  golden_check_in ("fake_proxy.argv", argv, tool, home_dir);
  free_argv (argv);
  argv = recorded_args (1);
  golden_check_in ("fake_http_fetch.argv", argv, tool, home_dir);
  /* The egress folder was <home>/run/egress/<name>, made 0700 (it is gone now); the tool
   * sees it read-only. */
  bool mounted = false;
  char *want = NULL;
  ck_assert_int_ge (asprintf (&want,
                              "--mount=type=bind,src=%s/run/egress/%s,dst=/run/egress,"
                              "ro=true,bind-nonrecursive",
                              home_dir, tool),
                    0);
  for (size_t i = 0; argv[i]; i++)
    mounted |= strcmp (argv[i], want) == 0;
  ck_assert (mounted);
  free (want);
  free_argv (argv);
  free (proxy);
  free (tool);
  bx_run_output_clear (&out);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_http_fetch_proxy_that_never_makes_its_socket_is_cleaned_up)
{
  use_fixture ("proxy-nosocket");
  struct bx_module *m = load (NULL);
  struct bx_run_output out;
  const char *sentence;
  struct timespec t0;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  ck_assert_int_eq (run_fetch (m, &out, &sentence), BX_RUN_UNAVAILABLE);
  ck_assert_str_eq (sentence, SENT_UNAVAILABLE);
  double took = seconds_since (t0);
  ck_assert_msg (took >= 5 && took < 9, "waited %.1f s for the socket", took);
  ck_assert_ptr_nonnull (strstr (test_log_text (&log_capture), POINTER));
  expect_egress_cleanup ("", 1);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_http_fetch_proxy_that_fails_to_start_is_cleaned_up)
{
  use_fixture ("proxy-fail");
  struct bx_module *m = load (NULL);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run_fetch (m, &out, &sentence), BX_RUN_UNAVAILABLE);
  ck_assert_str_eq (sentence, SENT_UNAVAILABLE);
  ck_assert_ptr_nonnull (strstr (test_log_text (&log_capture), POINTER));
  ck_assert_ptr_nonnull (strstr (test_log_text (&log_capture), "fake proxy failure"));
  expect_egress_cleanup ("", 1);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_http_fetch_tool_failure_still_removes_the_proxy)
{
  use_fixture ("egress-tool-fails");
  struct bx_module *m = load (NULL);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run_fetch (m, &out, &sentence), BX_RUN_FAILED);
  ck_assert_str_eq (sentence, SENT_COULD_NOT_RUN);
  expect_egress_cleanup ("1 run http_fetch\n", 2);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_http_fetch_tool_past_its_limit_removes_tool_and_proxy)
{
  use_fixture ("egress-tool-sleeps");
  const char *extra[] = { "http_fetch_ms", "300", NULL };
  struct bx_module *m = load (extra);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run_fetch (m, &out, &sentence), BX_RUN_FAILED);
  ck_assert_str_eq (sentence, SENT_TIME_LIMIT);
  char *tool = recorded_name (1);
  char *line = NULL;
  ck_assert_int_ge (
      asprintf (&line, "1 run http_fetch\n2 kill %s\n3 rm %s\n4 rm %s\n", tool, tool, tool), 0);
  expect_egress_cleanup (line, 5);
  free (line);
  free (tool);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_http_fetch_without_podman_leaves_no_folder)
{
  const char *options[] = { "podman", "/nonexistent/podman", "image", "x", NULL };
  char *error = NULL;
  struct bx_module *m = test_podman_load (options, home_dir, &log_capture, &error);
  ck_assert_ptr_nonnull (m);
  struct bx_run_output out;
  const char *sentence;
  ck_assert_int_eq (run_fetch (m, &out, &sentence), BX_RUN_UNAVAILABLE);
  ck_assert_str_eq (sentence, SENT_UNAVAILABLE);
  ck_assert_ptr_nonnull (strstr (test_log_text (&log_capture), POINTER));
  ck_assert_int_eq (egress_entries (), 0);
  test_podman_unload (m);
}
END_TEST

START_TEST (test_http_fetch_without_a_usable_home_is_unavailable)
{
  use_fixture ("ok");
  const char *options[] = { "podman", FAKE_PODMAN, "image", "x", NULL };
  const char *homes[] = { NULL, "/proc/no-such-folder" };
  for (size_t i = 0; i < 2; i++)
    {
      char *error = NULL;
      test_log_clear (&log_capture);
      struct bx_module *m = test_podman_load (options, homes[i], &log_capture, &error);
      ck_assert_ptr_nonnull (m);
      struct bx_run_output out;
      const char *sentence;
      ck_assert_int_eq (run_fetch (m, &out, &sentence), BX_RUN_UNAVAILABLE);
      ck_assert_str_eq (sentence, SENT_UNAVAILABLE);
      ck_assert_ptr_nonnull (strstr (test_log_text (&log_capture), POINTER));
      test_podman_unload (m);
    }
  char *log = calls_log ();
  ck_assert_str_eq (log, ""); /* no proxy was started */
  free (log);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("podman_fake");
  TCase *tc = tcase_create ("fake");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 30);
  tcase_add_test (tc, test_exit_0_answers_the_output_and_feeds_the_arguments);
  tcase_add_test (tc, test_exit_1_is_a_result_the_model_reads);
  tcase_add_test (tc, test_exit_2_is_the_tool_could_not_run);
  tcase_add_test (tc, test_exit_125_is_unavailable_with_the_runbook_pointer);
  tcase_add_test (tc, test_exit_126_is_unavailable_with_the_runbook_pointer);
  tcase_add_test (tc, test_exit_127_is_unavailable_with_the_runbook_pointer);
  tcase_add_test (tc, test_exit_137_is_stopped_and_the_output_is_dropped);
  tcase_add_test (tc, test_exit_153_is_past_the_file_size_limit);
  tcase_add_test (tc, test_another_exit_is_an_unexpected_status);
  tcase_add_test (tc, test_podman_dying_of_a_signal_is_an_unexpected_status);
  tcase_add_test (tc, test_podman_dying_of_a_signal_still_kills_and_removes_the_container);
  tcase_add_test (tc, test_a_flood_on_standard_error_is_drained_and_the_pointer_kept);
  tcase_add_test (tc, test_a_cancelled_call_kills_and_removes_its_container);
  tcase_add_test (tc, test_a_call_cancelled_before_it_starts_runs_nothing);
  tcase_add_test (tc, test_spec_limits_reach_the_arguments);
  tcase_add_test (tc, test_protected_paths_name_podman_storage_and_the_program);
  tcase_add_test (tc, test_podman_missing_is_unavailable_with_the_runbook_pointer);
  tcase_add_test (tc, test_output_past_the_cap_is_truncated_and_the_container_removed);
  tcase_add_test (tc, test_output_of_exactly_the_cap_is_not_truncated);
  tcase_add_test (tc, test_the_largest_output_cap_keeps_the_output);
  tcase_add_test (tc, test_past_the_time_limit_kills_then_removes_by_name);
  tcase_add_test (tc, test_each_tool_has_its_own_time_limit);
  tcase_add_test (tc, test_two_mebibytes_of_arguments_reach_standard_input_whole);
  tcase_add_test (tc, test_a_mount_podman_would_split_is_refused);
  tcase_add_test (tc, test_names_differ_across_instances_and_calls);
  tcase_add_test (tc, test_concurrent_calls_each_get_their_own_container);
  tcase_add_test (tc, test_options_are_checked_at_create);
  tcase_add_test (tc, test_sandboxes_never_run_as_brokerds_user);
  tcase_add_test (tc, test_a_host_where_the_limits_would_not_hold_stops_brokerd);
  tcase_add_test (tc, test_cgroup_limits_off_passes_none_and_refuses_a_promise);
  tcase_add_test (tc, test_a_podman_missing_at_start_is_checked_at_the_first_call);
  tcase_add_test (tc, test_podman_gets_none_of_systemds_variables_for_brokerd);
  tcase_add_test (tc, test_http_fetch_runs_proxy_then_tool_then_removes_both);
  tcase_add_test (tc, test_http_fetch_proxy_that_never_makes_its_socket_is_cleaned_up);
  tcase_add_test (tc, test_http_fetch_proxy_that_fails_to_start_is_cleaned_up);
  tcase_add_test (tc, test_http_fetch_tool_failure_still_removes_the_proxy);
  tcase_add_test (tc, test_http_fetch_tool_past_its_limit_removes_tool_and_proxy);
  tcase_add_test (tc, test_http_fetch_without_podman_leaves_no_folder);
  tcase_add_test (tc, test_http_fetch_without_a_usable_home_is_unavailable);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
