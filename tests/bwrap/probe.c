/* SPDX-License-Identifier: Apache-2.0 */
/* Runs inside a bwrap.so sandbox (from a granted folder, by a sandboxed shell) and prints,
 * one line each, what became of what a sandbox must never do: NAME=ERRNO-NAME, or
 * NAME=allowed when the kernel let it through. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void
report (const char *name, long r)
{
  if (r >= 0)
    printf ("%s=allowed\n", name);
  else
    printf ("%s=%s\n", name, strerrorname_np (errno));
}

int
main (void)
{
  report ("keyctl", syscall (SYS_keyctl, 0 /* GET_KEYRING_ID */, -3 /* session */, 0));
  report ("add_key", syscall (SYS_add_key, "user", "bx", "x", 1, -3));
  report ("request_key", syscall (SYS_request_key, "user", "bx", NULL, -3));
  report ("ptrace", ptrace (PTRACE_ATTACH, getppid (), 0, 0));
  report ("unshare_user", unshare (CLONE_NEWUSER));
  report ("unshare_mount", unshare (CLONE_NEWNS));
  report ("unshare_net", unshare (CLONE_NEWNET));
  long pid = syscall (SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0)
    _exit (0);
  if (pid > 0)
    waitpid ((pid_t)pid, NULL, 0);
  report ("clone_newpid", pid);
  int s = socket (AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (443) };
  inet_pton (AF_INET, "1.1.1.1", &a.sin_addr);
  report ("connect", s < 0 ? -1 : connect (s, (struct sockaddr *)&a, sizeof a));
  printf ("uid=%u euid=%u\n", getuid (), geteuid ());
  return 0;
}
