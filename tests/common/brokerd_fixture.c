/* SPDX-License-Identifier: Apache-2.0 */
/* See brokerd.h. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/deadline.h"
#include "brokerd_fixture.h"
#include "tree.h"

int
bx_test_connect (const char *path)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  ck_assert_msg (strlen (path) < sizeof addr.sun_path, "%s is too long for sun_path", path);
  memcpy (addr.sun_path, path, strlen (path) + 1);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge (fd, 0);
  if (connect (fd, (struct sockaddr *)&addr, sizeof addr) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

int
bx_test_connect_wait (const char *path, int ms)
{
  int64_t deadline = bx_deadline_in (ms);
  for (;;)
    {
      int fd = bx_test_connect (path);
      if (fd >= 0)
        return fd;
      ck_assert_msg (bx_now_ms () < deadline, "nothing listened on %s within %d ms", path, ms);
      usleep (10 * 1000);
    }
}

pid_t
bx_test_daemon_spawn (const char *const *argv, const char *log)
{
  pid_t parent = getpid ();
  pid_t pid = fork ();
  ck_assert_int_ge (pid, 0);
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      /* The parent may have died before the line above: then nobody would ever kill us. */
      if (getppid () != parent)
        _exit (127);
      int fd = open (log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fd < 0 || dup2 (fd, 1) < 0 || dup2 (fd, 2) < 0)
        _exit (127);
      execv (argv[0], (char *const *)argv);
      _exit (127);
    }
  return pid;
}

void
bx_test_daemon_wait_listening (pid_t pid, const char *sock, const char *log)
{
  int64_t deadline = bx_deadline_in (30000);
  for (;;)
    {
      int status;
      if (waitpid (pid, &status, WNOHANG) == pid)
        {
          char *out = read_bytes (log, NULL);
          ck_abort_msg ("%s exited (status %d) before listening:\n%s", sock, status,
                        out ? out : "");
        }
      struct stat st;
      if (stat (sock, &st) == 0 && S_ISSOCK (st.st_mode))
        {
          int fd = bx_test_connect (sock);
          if (fd >= 0)
            {
              close (fd);
              return;
            }
        }
      ck_assert_msg (bx_now_ms () < deadline, "nothing listened on %s within 30 s", sock);
      usleep (10 * 1000);
    }
}

/* The folders this process made, removed when it exits. */
enum
{
  MADE_MAX = 8
};
static char made[MADE_MAX][64];
static int n_made;

static void
remove_made (void)
{
  for (int i = 0; i < n_made; i++)
    remove_tree (made[i]);
}

void
bx_test_brokerd_init_with (struct bx_test_brokerd *b, const char *program, const char *runtimedir)
{
  *b = (struct bx_test_brokerd){ .program = program, .runtimedir = runtimedir };
  strcpy (b->dir, "/tmp/bx-brokerd-XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (b->dir));
  ck_assert_int_eq (chmod (b->dir, 0755), 0);
  ck_assert_msg (n_made < MADE_MAX, "more than %d brokerd folders in one test", MADE_MAX);
  if (n_made == 0)
    atexit (remove_made);
  strcpy (made[n_made++], b->dir);
  snprintf (b->config, sizeof b->config, "%s/brokerd.yaml", b->dir);
  snprintf (b->sock, sizeof b->sock, "%s/b.sock", b->dir);
  snprintf (b->admin, sizeof b->admin, "%s/admin.sock", b->dir);
  snprintf (b->audit, sizeof b->audit, "%s/audit.log", b->dir);
  snprintf (b->out, sizeof b->out, "%s/out", b->dir);
}

pid_t
bx_test_brokerd_spawn (const struct bx_test_brokerd *b, const char *mode)
{
  const char *argv[] = { b->program, mode, b->config, "--runtimedir", b->runtimedir, NULL };
  return bx_test_daemon_spawn (argv, b->out);
}

void
bx_test_brokerd_start (struct bx_test_brokerd *b)
{
  b->pid = bx_test_brokerd_spawn (b, "--config");
  bx_test_daemon_wait_listening (b->pid, b->sock, b->out);
}

static int
exit_status (pid_t pid)
{
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

int
bx_test_brokerd_stop (struct bx_test_brokerd *b)
{
  ck_assert_int_gt (b->pid, 0);
  kill (b->pid, SIGTERM);
  int status = exit_status (b->pid);
  b->pid = 0;
  return status;
}

int
bx_test_brokerd_run (const struct bx_test_brokerd *b, const char *mode)
{
  return exit_status (bx_test_brokerd_spawn (b, mode));
}
