/* See cli_run.h. */
#include <check.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.h"

extern char **environ;

void
cli_run (const char *path, const char *const *args, struct cli_run *run)
{
  const char *argv[32] = { path };
  for (int i = 0; args[i] != NULL && i < 30; i++)
    argv[i + 1] = args[i];
  int out[2], err[2];
  ck_assert_int_eq (pipe2 (out, O_CLOEXEC), 0);
  ck_assert_int_eq (pipe2 (err, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_adddup2 (&fa, out[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, err[1], 2);
  pid_t pid;
  ck_assert_int_eq (posix_spawn (&pid, path, &fa, NULL, (char **)argv, environ), 0);
  posix_spawn_file_actions_destroy (&fa);
  close (out[1]);
  close (err[1]);

  memset (run, 0, sizeof *run);
  size_t err_len = 0;
  struct pollfd pfd[2] = { { .fd = out[0], .events = POLLIN }, { .fd = err[0], .events = POLLIN } };
  int open_fds = 2;
  while (open_fds > 0)
    {
      if (poll (pfd, 2, 10000) <= 0)
        break;
      for (int i = 0; i < 2; i++)
        {
          if (pfd[i].fd < 0 || pfd[i].revents == 0)
            continue;
          char *buf = i == 0 ? run->out + run->out_len : run->err + err_len;
          size_t room = (i == 0 ? sizeof run->out - run->out_len : sizeof run->err - err_len) - 1;
          ssize_t n = read (pfd[i].fd, buf, room);
          if (n <= 0)
            {
              close (pfd[i].fd);
              pfd[i].fd = -1;
              open_fds--;
              continue;
            }
          if (i == 0)
            run->out_len += (size_t)n;
          else
            err_len += (size_t)n;
        }
    }
  int st;
  ck_assert_int_eq (waitpid (pid, &st, 0), pid);
  run->status = WIFEXITED (st) ? WEXITSTATUS (st) : -1;
}
