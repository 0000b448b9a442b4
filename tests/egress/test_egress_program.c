/* SPDX-License-Identifier: Apache-2.0 */
/* `toolkit egress-proxy` run as a program: its one form, its error lines and exit 2, a file
 * already at the socket path left alone, and a running proxy that refuses over its socket.
 * TOOLKIT_PATH comes from CMake (the toolkit program, or a small driver of
 * bx_egress_proxy_main when the program is not part of the build). */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "egress_test_util.h"
#include "brokerd_fixture.h"
#include "test_main.h"

extern char **environ;

static char dir[64];
static char sock_path[128];

static void
setup (void)
{
  signal (SIGPIPE, SIG_IGN);
  snprintf (dir, sizeof dir, "/tmp/bx-egress-prog-XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (dir));
  snprintf (sock_path, sizeof sock_path, "%s/egress.sock", dir);
}

static void
teardown (void)
{
  unlink (sock_path);
  rmdir (dir);
}

/* Starts the program with ARGV (argv[0] is filled in); its standard error goes to *ERR_FD. */
static pid_t
start (const char *const *args, int *err_fd)
{
  const char *argv[16] = { TOOLKIT_PATH };
  int n = 1;
  for (; args[n - 1] != NULL; n++)
    argv[n] = args[n - 1];
  argv[n] = NULL;
  int p[2];
  ck_assert_int_eq (pipe2 (p, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_adddup2 (&fa, p[1], 2);
  pid_t pid;
  ck_assert_int_eq (posix_spawn (&pid, TOOLKIT_PATH, &fa, NULL, (char **)argv, environ), 0);
  posix_spawn_file_actions_destroy (&fa);
  close (p[1]);
  *err_fd = p[0];
  return pid;
}

/* Runs the program to its end (at most 10 s); returns its exit status and its standard
 * error in ERR. */
static int
run (const char *const *args, char *err, size_t size)
{
  int err_fd;
  pid_t pid = start (args, &err_fd);
  bool closed;
  size_t n = test_read (err_fd, err, size - 1, 10000, &closed);
  err[n] = '\0';
  close (err_fd);
  int status;
  for (int i = 0; i < 1000; i++)
    {
      if (waitpid (pid, &status, WNOHANG) == pid)
        {
          ck_assert (WIFEXITED (status));
          return WEXITSTATUS (status);
        }
      poll (NULL, 0, 10);
    }
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  ck_abort_msg ("the program did not end: %s", err);
  return -1;
}

START_TEST (test_a_bad_allow_list_is_exit_2_with_its_line)
{
  static const struct
  {
    const char *list, *line;
  } cases[] = {
    { "", "toolkit: egress-proxy: --allow: no host pattern\n" },
    { ",", "toolkit: egress-proxy: --allow: an empty host pattern in \",\"\n" },
    { "a.com,", "toolkit: egress-proxy: --allow: an empty host pattern in \"a.com,\"\n" },
    { "a.com,,b.com",
      "toolkit: egress-proxy: --allow: an empty host pattern in \"a.com,,b.com\"\n" },
    { "bad host", "toolkit: egress-proxy: --allow: not a host pattern: \"bad host\"\n" },
    { "a.com,127.0.0.1", "toolkit: egress-proxy: --allow: not a host pattern: \"127.0.0.1\"\n" },
    { "*", "toolkit: egress-proxy: --allow: not a host pattern: \"*\"\n" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      const char *args[]
          = { "egress-proxy", "--socket", sock_path, "--allow", cases[i].list, NULL };
      char err[512];
      ck_assert_int_eq (run (args, err, sizeof err), 2);
      ck_assert_str_eq (err, cases[i].line);
      /* The list is checked before anything listens. */
      ck_assert_int_ne (access (sock_path, F_OK), 0);
    }
}
END_TEST

START_TEST (test_a_bad_private_range_is_exit_2_with_its_line)
{
  static const struct
  {
    const char *list, *line;
  } cases[] = {
    { "", "toolkit: egress-proxy: --allow-private: not an address range: \"\": an empty range\n" },
    { "10.0.0.0/8,",
      "toolkit: egress-proxy: --allow-private: not an address range: \"\": an empty range\n" },
    { "127.0.0.0/8", "toolkit: egress-proxy: --allow-private: not an address range: "
                     "\"127.0.0.0/8\": it overlaps the loopback range 127.0.0.0/8\n" },
    { "10.0.0.0/8,169.254.169.254",
      "toolkit: egress-proxy: --allow-private: not an address range: \"169.254.169.254\": it "
      "overlaps the link-local range 169.254.0.0/16\n" },
    { "10.0.0.1/8", "toolkit: egress-proxy: --allow-private: not an address range: "
                    "\"10.0.0.1/8\": it has address bits set below its prefix length\n" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      const char *args[] = { "egress-proxy", "--socket",        sock_path,     "--allow",
                             "a.com",        "--allow-private", cases[i].list, NULL };
      char err[512];
      ck_assert_int_eq (run (args, err, sizeof err), 2);
      ck_assert_str_eq (err, cases[i].line);
      ck_assert_int_ne (access (sock_path, F_OK), 0);
    }
}
END_TEST

START_TEST (test_a_file_at_the_socket_path_is_an_error_and_stays)
{
  FILE *f = fopen (sock_path, "w");
  ck_assert_ptr_nonnull (f);
  fputs ("keep", f);
  fclose (f);
  const char *args[] = { "egress-proxy", "--socket", sock_path, "--allow", "example.com", NULL };
  char err[512], want[512];
  ck_assert_int_eq (run (args, err, sizeof err), 2);
  snprintf (want, sizeof want, "toolkit: egress-proxy: cannot listen on %s: %s\n", sock_path,
            strerror (EADDRINUSE));
  ck_assert_str_eq (err, want);
  char buf[8] = "";
  f = fopen (sock_path, "r");
  ck_assert_ptr_nonnull (f);
  ck_assert_ptr_nonnull (fgets (buf, sizeof buf, f));
  fclose (f);
  ck_assert_str_eq (buf, "keep");
}
END_TEST

START_TEST (test_a_socket_path_it_cannot_bind_is_exit_2_with_its_line)
{
  char missing[160], long_path[200], want[512], err[512];
  snprintf (missing, sizeof missing, "%s/no/such/dir.sock", dir);
  memset (long_path, 'x', sizeof long_path - 1);
  long_path[0] = '/';
  long_path[sizeof long_path - 1] = '\0';
  static const int codes[] = { ENOENT, ENAMETOOLONG, ENOENT };
  const char *paths[] = { missing, long_path, "" };
  for (size_t i = 0; i < 3; i++)
    {
      const char *args[] = { "egress-proxy", "--socket", paths[i], "--allow", "a.com", NULL };
      ck_assert_int_eq (run (args, err, sizeof err), 2);
      snprintf (want, sizeof want, "toolkit: egress-proxy: cannot listen on %s: %s\n", paths[i],
                strerror (codes[i]));
      ck_assert_str_eq (err, want);
    }
}
END_TEST

START_TEST (test_another_argument_list_is_not_the_proxy_form)
{
  const char *const forms[][8] = {
    { "egress-proxy", NULL },
    { "egress-proxy", "--socket", sock_path, NULL },
    { "egress-proxy", "--allow", "a.com", "--socket", sock_path, NULL },
    { "egress-proxy", "--socket", sock_path, "--allow", "a.com", "extra", NULL },
    { "egress-proxy", "--socket=", sock_path, "--allow", "a.com", NULL },
    { "egress-proxy", "-s", sock_path, "--allow", "a.com", NULL },
    { "egress-proxy", "--socket", sock_path, "--allow", "a.com", "--allow-private", NULL },
    { "egress-proxy", "--socket", sock_path, "--allow", "a.com", "--private", "10.0.0.0/8", NULL },
    { "egress-proxy", "--socket", sock_path, "--allow-private", "10.0.0.0/8", "--allow", "a.com",
      NULL },
  };
  for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
    {
      char err[512];
      ck_assert_int_eq (run (forms[i], err, sizeof err), 2);
      ck_assert_msg (strncmp (err, "toolkit: ", 9) == 0, "stderr: %s", err);
      ck_assert_int_ne (access (sock_path, F_OK), 0);
    }
}
END_TEST

static int
connect_when_listening (const char *path)
{
  return bx_test_connect_wait (path, 5000);
}

static void
refused (int fd, const uint8_t *req, size_t len, uint8_t code)
{
  const uint8_t hello[] = { 5, 2, 0, 2 };
  ck_assert (test_send (fd, hello, sizeof hello));
  uint8_t answer[2];
  bool closed;
  ck_assert_uint_eq (test_read (fd, answer, 2, 3000, &closed), 2);
  ck_assert_uint_eq (answer[1], 0);
  ck_assert (test_send (fd, req, len));
  uint8_t reply[10];
  ck_assert_uint_eq (test_read (fd, reply, 10, 3000, &closed), 10);
  const uint8_t want[10] = { 5, code, 0, 1, 0, 0, 0, 0, 0, 0 };
  ck_assert_msg (memcmp (reply, want, 10) == 0, "reply %u, expected %u", reply[1], code);
  ck_assert (test_closed_without_bytes (fd, 3000));
  close (fd);
}

/* With the system Dial; every request here is refused before any lookup, so no network. */
START_TEST (test_the_running_proxy_refuses_over_its_socket)
{
  const char *args[]
      = { "egress-proxy", "--socket", sock_path, "--allow", "example.com,*.example.org", NULL };
  int err_fd;
  pid_t pid = start (args, &err_fd);
  uint8_t req[300];
  size_t n = test_request (req, "other.com", 9, 443);
  refused (connect_when_listening (sock_path), req, n, 2);
  n = test_request (req, "example.com", 11, 8443);
  refused (connect_when_listening (sock_path), req, n, 2);
  n = test_request (req, "0x7f000001", 10, 443);
  refused (connect_when_listening (sock_path), req, n, 2);
  const uint8_t ipv4[] = { 5, 1, 0, 1, 127, 0, 0, 1, 1, 187 };
  refused (connect_when_listening (sock_path), ipv4, sizeof ipv4, 8);

  struct stat st;
  ck_assert_int_eq (stat (sock_path, &st), 0);
  ck_assert (S_ISSOCK (st.st_mode));
  kill (pid, SIGTERM);
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFSIGNALED (status));
  char err[256];
  bool closed;
  size_t len = test_read (err_fd, err, sizeof err - 1, 1000, &closed);
  ck_assert_msg (len == 0, "the proxy wrote to standard error: %.*s", (int)len, err);
  close (err_fd);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("egress_program");
  TCase *tc = tcase_create ("program");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_a_bad_allow_list_is_exit_2_with_its_line);
  tcase_add_test (tc, test_a_bad_private_range_is_exit_2_with_its_line);
  tcase_add_test (tc, test_a_file_at_the_socket_path_is_an_error_and_stays);
  tcase_add_test (tc, test_a_socket_path_it_cannot_bind_is_exit_2_with_its_line);
  tcase_add_test (tc, test_another_argument_list_is_not_the_proxy_form);
  tcase_add_test (tc, test_the_running_proxy_refuses_over_its_socket);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
