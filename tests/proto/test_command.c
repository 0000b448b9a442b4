/* SPDX-License-Identifier: Apache-2.0 */
/* The one child-process runner (bx/command.h), against /bin/sh. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/command.h"
#include "bx/deadline.h"
#include "test_main.h"

static void
run_sh (const char *script, const char *input, bool keep, uint64_t cap, int64_t ms,
        struct bx_command_result *r)
{
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  struct bx_command cmd = {
    .argv = argv,
    .input = input,
    .input_len = input ? strlen (input) : 0,
    .keep_output = keep,
    .output_cap = cap,
    .deadline = bx_deadline_in (ms),
  };
  bx_command_run (&cmd, r);
}

START_TEST (test_command_feeds_input_and_keeps_output_and_error_apart)
{
  struct bx_command_result r;
  run_sh ("cat; echo oops >&2; exit 3", "hello", true, 1024, 10000, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_EXITED);
  ck_assert_int_eq (r.exit_code, 3);
  ck_assert_uint_eq (r.out_len, 5);
  ck_assert_str_eq (r.out, "hello");
  ck_assert_str_eq (r.err, "oops\n");
  ck_assert_int_eq (r.pid, -1);
  bx_command_result_clear (&r);
}
END_TEST

START_TEST (test_command_stops_one_byte_past_the_cap)
{
  struct bx_command_result r;
  run_sh ("yes", NULL, true, 1000, 10000, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_CAPPED);
  ck_assert_uint_eq (r.out_len, 1000);
  ck_assert_int_gt (r.pid, 0);
  pid_t pid = r.pid;
  /* Killed, or already ended of SIGPIPE once its pipe was closed: either way reaped. */
  bx_command_reap (&r, 0);
  ck_assert_int_eq (r.pid, -1);
  ck_assert (kill (pid, 0) < 0 && errno == ESRCH);
  bx_command_result_clear (&r);
}
END_TEST

START_TEST (test_command_times_out_and_the_reap_kills_the_whole_group)
{
  /* The shell's child writes its pid, then both sleep: the group kill must reach it. */
  const char *argv[] = { "/bin/sh", "-c", "sleep 30 & echo $!; wait", NULL };
  struct bx_command cmd = {
    .argv = argv,
    .keep_output = true,
    .output_cap = 100,
    .deadline = bx_deadline_in (300),
    .own_group = true,
  };
  struct bx_command_result r;
  int64_t start = bx_now_ms ();
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_TIMED_OUT);
  ck_assert_int_lt (bx_now_ms () - start, 5000);
  pid_t sleeper = (pid_t)atoi (r.out);
  ck_assert_int_gt (sleeper, 0);
  ck_assert (bx_command_reap (&r, 0));
  /* The sleeper was the shell's child: once killed it is reaped by init, soon. */
  int gone = 0;
  for (int i = 0; i < 200 && !gone; i++)
    {
      if (kill (sleeper, 0) < 0 && errno == ESRCH)
        gone = 1;
      else
        usleep (10000);
    }
  ck_assert_msg (gone, "the group's other process outlived the reap");
  bx_command_result_clear (&r);
}
END_TEST

START_TEST (test_command_keeps_only_the_first_bytes_of_error)
{
  const char *argv[] = { "/bin/sh", "-c", "yes 0123456789 | head -c 100000 >&2", NULL };
  struct bx_command cmd = { .argv = argv, .error_keep = 16, .deadline = bx_deadline_in (10000) };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_EXITED);
  ck_assert_uint_eq (r.err_len, 16);
  ck_assert_str_eq (r.err, "0123456789\n01234");
  bx_command_result_clear (&r);
}
END_TEST

START_TEST (test_command_merges_error_into_output_in_order)
{
  const char *argv[] = { "/bin/sh", "-c", "echo a; echo b >&2; echo c", NULL };
  struct bx_command cmd = { .argv = argv,
                            .keep_output = true,
                            .output_cap = 100,
                            .error_to_output = true,
                            .deadline = bx_deadline_in (10000) };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_EXITED);
  ck_assert_str_eq (r.out, "a\nb\nc\n");
  ck_assert_uint_eq (r.err_len, 0);
  bx_command_result_clear (&r);
}
END_TEST

START_TEST (test_command_tells_a_missing_program_and_a_missing_folder_apart)
{
  const char *missing[] = { "/nonexistent/program", NULL };
  struct bx_command cmd = { .argv = missing, .deadline = bx_deadline_in (10000) };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_NOT_RUN);
  ck_assert_int_eq (r.spawn_errno, ENOENT);
  ck_assert (!r.failed_chdir);
  bx_command_result_clear (&r);

  const char *sh[] = { "/bin/sh", "-c", "pwd", NULL };
  cmd = (struct bx_command){ .argv = sh,
                             .cwd = "/nonexistent",
                             .deadline = bx_deadline_in (10000) };
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_NOT_RUN);
  ck_assert_int_eq (r.spawn_errno, ENOENT);
  ck_assert (r.failed_chdir);
  bx_command_result_clear (&r);

  cmd = (struct bx_command){ .argv = sh,
                             .cwd = "/",
                             .keep_output = true,
                             .output_cap = 100,
                             .deadline = bx_deadline_in (10000) };
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_EXITED);
  ck_assert_str_eq (r.out, "/\n");
  bx_command_result_clear (&r);
}
END_TEST

START_TEST (test_command_survives_a_program_that_reads_no_input)
{
  /* Far more input than a socket buffer holds, to a program that never reads it. */
  size_t len = 8u << 20;
  char *big = malloc (len + 1);
  memset (big, 'x', len);
  big[len] = '\0';
  struct bx_command_result r;
  run_sh ("exit 0", big, false, 0, 10000, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_EXITED);
  ck_assert_int_eq (r.exit_code, 0);
  bx_command_result_clear (&r);
  free (big);
}
END_TEST

START_TEST (test_command_reports_a_signal)
{
  struct bx_command_result r;
  run_sh ("kill -9 $$", NULL, false, 0, 10000, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_SIGNALED);
  ck_assert_int_eq (r.signal, SIGKILL);
  bx_command_result_clear (&r);
}
END_TEST

START_TEST (test_command_resets_sigpipe_and_keeps_other_ignored_signals)
{
  /* A daemon ignores SIGPIPE, a sandbox may ignore SIGXFSZ (here SIGUSR1 stands for it). */
  signal (SIGPIPE, SIG_IGN);
  signal (SIGUSR1, SIG_IGN);
  struct bx_command_result r;
  run_sh ("kill -USR1 $$; echo alive", NULL, true, 100, 10000, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_EXITED);
  ck_assert_str_eq (r.out, "alive\n");
  bx_command_result_clear (&r);
  run_sh ("kill -PIPE $$; echo alive", NULL, true, 100, 10000, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_SIGNALED);
  ck_assert_int_eq (r.signal, SIGPIPE);
  bx_command_result_clear (&r);
}
END_TEST

START_TEST (test_command_streams_output_and_stops_when_nobody_reads)
{
  int p[2];
  ck_assert_int_eq (pipe2 (p, O_CLOEXEC), 0);
  const char *argv[] = { "/bin/sh", "-c", "echo one; echo two >&2", NULL };
  struct bx_command cmd = { .argv = argv,
                            .stream_output = true,
                            .output_fd = p[1],
                            .error_to_output = true,
                            .deadline = bx_deadline_in (10000) };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_EXITED);
  ck_assert_uint_eq (r.out_len, 8);
  ck_assert_ptr_null (r.out);
  char buf[16] = "";
  ck_assert_int_eq (read (p[0], buf, sizeof buf - 1), 8);
  ck_assert_str_eq (buf, "one\ntwo\n");
  bx_command_result_clear (&r);

  /* The reader is gone: the program is stopped, not left to run. */
  close (p[0]);
  signal (SIGPIPE, SIG_IGN);
  const char *yes[] = { "yes", NULL };
  cmd = (struct bx_command){
    .argv = yes, .stream_output = true, .output_fd = p[1], .deadline = bx_deadline_in (10000)
  };
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_CAPPED);
  ck_assert_int_eq (r.output_errno, EPIPE);
  /* It may already have died of SIGPIPE on its own pipe, or still be running: either way
   * it is left for bx_command_reap, which leaves nothing behind. */
  pid_t yes_pid = r.pid;
  ck_assert_int_gt (yes_pid, 0);
  bx_command_reap (&r, 0);
  ck_assert_int_eq (r.pid, -1);
  ck_assert_int_eq (waitpid (yes_pid, NULL, WNOHANG), -1);
  ck_assert_int_eq (errno, ECHILD);
  bx_command_result_clear (&r);
  close (p[1]);
}
END_TEST

/* A spawn hook as a module's keeper would be: it starts the program itself, with the status
 * pipe's write end as descriptor 3, and hands back a pidfd. */
struct hook_data
{
  int status_w;
  pid_t pid;
};

static int
hook_spawn (const struct bx_command *cmd, int in, int out, int err, void *data)
{
  struct hook_data *h = data;
  int pidfd = -1;
  long pid = syscall (SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
  if (pid == 0)
    {
      if (dup2 (in, 0) < 0 || dup2 (out, 1) < 0 || dup2 (err, 2) < 0
          || (h->status_w >= 0 && dup2 (h->status_w, 3) < 0))
        _exit (126);
      execv (cmd->argv[0], (char *const *)cmd->argv);
      _exit (127);
    }
  if (pid < 0)
    return -1;
  h->pid = (pid_t)pid;
  return pidfd;
}

START_TEST (test_command_runs_through_a_spawn_hook_and_reads_its_status)
{
  int status[2];
  ck_assert_int_eq (pipe2 (status, O_CLOEXEC), 0);
  struct hook_data h = { .status_w = status[1], .pid = -1 };
  const char *argv[]
      = { "/bin/sh", "-c", "cat; echo '{\"exit-code\": 3}' >&3; echo oops >&2", NULL };
  struct bx_command cmd = {
    .argv = argv,
    .input = "hello",
    .input_len = 5,
    .keep_output = true,
    .output_cap = 1024,
    .deadline = bx_deadline_in (10000),
    .spawn = hook_spawn,
    .spawn_data = &h,
    .status_fd = status[0],
    .status_keep = 8,
  };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_EXITED);
  /* The hook's process is watched through its pidfd alone: its exit status is not known. */
  ck_assert_int_eq (r.exit_code, -1);
  ck_assert_str_eq (r.out, "hello");
  ck_assert_str_eq (r.err, "oops\n");
  ck_assert_str_eq (r.status, "{\"exit-c");
  ck_assert_uint_eq (r.status_len, 8);
  ck_assert_int_eq (r.pidfd, -1);
  ck_assert_int_eq (waitpid (h.pid, NULL, 0), h.pid);
  bx_command_result_clear (&r);
  close (status[0]);
  close (status[1]);
}
END_TEST

START_TEST (test_command_kills_a_hooked_process_through_its_pidfd)
{
  struct hook_data h = { .status_w = -1, .pid = -1 };
  const char *argv[] = { "/bin/sh", "-c", "exec sleep 60", NULL };
  struct bx_command cmd = {
    .argv = argv,
    .deadline = bx_deadline_in (100),
    .spawn = hook_spawn,
    .spawn_data = &h,
  };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_TIMED_OUT);
  ck_assert_int_eq (r.pid, -1);
  ck_assert_int_ge (r.pidfd, 0);
  ck_assert (r.status == NULL);
  ck_assert (bx_command_reap (&r, 0));
  ck_assert_int_eq (r.pidfd, -1);
  int st;
  ck_assert_int_eq (waitpid (h.pid, &st, 0), h.pid);
  ck_assert (WIFSIGNALED (st) && WTERMSIG (st) == SIGKILL);
  bx_command_result_clear (&r);
}
END_TEST

static int
refusing_spawn (const struct bx_command *cmd, int in, int out, int err, void *data)
{
  (void)cmd, (void)in, (void)out, (void)err, (void)data;
  errno = EPROTO;
  return -1;
}

START_TEST (test_command_reports_a_hook_that_cannot_start)
{
  const char *argv[] = { "/bin/true", NULL };
  struct bx_command cmd = {
    .argv = argv,
    .deadline = bx_deadline_in (10000),
    .spawn = refusing_spawn,
  };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_NOT_RUN);
  ck_assert_int_eq (r.spawn_errno, EPROTO);
  ck_assert_int_eq (r.pidfd, -1);
  bx_command_result_clear (&r);
}
END_TEST

/* A process started before the run, as bwrap.so's pool starts its sandboxes: the run
 * feeds the input it was waiting for and keeps what it says after that. */
START_TEST (test_command_runs_a_process_started_ahead)
{
  int in[2], out[2], err[2];
  ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in), 0);
  ck_assert_int_eq (pipe2 (out, O_CLOEXEC), 0);
  ck_assert_int_eq (pipe2 (err, O_CLOEXEC), 0);
  struct hook_data h = { .status_w = -1, .pid = -1 };
  const char *argv[]
      = { "/bin/sh", "-c", "echo ready; read line; echo \"got $line\"; echo bad >&2", NULL };
  struct bx_command started = { .argv = argv };
  int pidfd = hook_spawn (&started, in[1], out[1], err[1], &h);
  ck_assert_int_ge (pidfd, 0);
  close (in[1]);
  close (out[1]);
  close (err[1]);
  char ready[6];
  ck_assert_int_eq (read (out[0], ready, sizeof ready), 6);
  struct bx_command_attach attach = { pidfd, in[0], out[0], err[0] };
  struct bx_command cmd = {
    .input = "call\n",
    .input_len = 5,
    .keep_output = true,
    .output_cap = 1024,
    .deadline = bx_deadline_in (10000),
    .attach = &attach,
  };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  ck_assert_int_eq (r.end, BX_COMMAND_EXITED);
  ck_assert_str_eq (r.out, "got call\n");
  ck_assert_str_eq (r.err, "bad\n");
  ck_assert_int_eq (r.pidfd, -1);
  /* The run closed what it took over. */
  ck_assert_int_eq (fcntl (in[0], F_GETFD), -1);
  ck_assert_int_eq (fcntl (pidfd, F_GETFD), -1);
  ck_assert_int_eq (waitpid (h.pid, NULL, 0), h.pid);
  bx_command_result_clear (&r);
}
END_TEST

static Suite *
command_suite (void)
{
  Suite *s = suite_create ("base_command");
  TCase *tc = tcase_create ("command");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_command_feeds_input_and_keeps_output_and_error_apart);
  tcase_add_test (tc, test_command_stops_one_byte_past_the_cap);
  tcase_add_test (tc, test_command_times_out_and_the_reap_kills_the_whole_group);
  tcase_add_test (tc, test_command_keeps_only_the_first_bytes_of_error);
  tcase_add_test (tc, test_command_merges_error_into_output_in_order);
  tcase_add_test (tc, test_command_tells_a_missing_program_and_a_missing_folder_apart);
  tcase_add_test (tc, test_command_survives_a_program_that_reads_no_input);
  tcase_add_test (tc, test_command_reports_a_signal);
  tcase_add_test (tc, test_command_streams_output_and_stops_when_nobody_reads);
  tcase_add_test (tc, test_command_resets_sigpipe_and_keeps_other_ignored_signals);
  tcase_add_test (tc, test_command_runs_through_a_spawn_hook_and_reads_its_status);
  tcase_add_test (tc, test_command_kills_a_hooked_process_through_its_pidfd);
  tcase_add_test (tc, test_command_reports_a_hook_that_cannot_start);
  tcase_add_test (tc, test_command_runs_a_process_started_ahead);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (command_suite)
