/* SPDX-License-Identifier: Apache-2.0 */
/* The watcher: a process forked when the instance is created, which outlives brokerd by
 * the time it takes to clean up.  brokerd tells it each container it starts and ends
 * (one datagram each on a SOCK_SEQPACKET pair, so a message is never split or merged);
 * when its end of the pair reads EOF, brokerd has ended, however it ended (SIGKILL, or
 * exiting with calls still running past grace_ms), and the watcher kills and removes the
 * containers still listed and the egress folders of their calls.  If the watcher dies
 * too, each container still ends at its own --timeout, and the next brokerd's sweep
 * removes what is left.
 *
 * It is forked while brokerd has a single thread (create runs before the server starts),
 * so its copy of every lock is free. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "podman.h"

#define MESSAGE_MAX 1024

struct names
{
  char **items;
  size_t len, cap;
};

static void
names_apply (struct names *n, const char *msg)
{
  if (msg[0] == '+')
    {
      if (n->len == n->cap)
        {
          n->cap = n->cap ? n->cap * 2 : 16;
          n->items = bx_xrealloc (n->items, n->cap * sizeof *n->items);
        }
      n->items[n->len++] = bx_xstrdup (msg + 1);
      return;
    }
  for (size_t i = 0; i < n->len; i++)
    if (strcmp (n->items[i], msg + 1) == 0)
      {
        free (n->items[i]);
        n->items[i] = n->items[--n->len];
        return;
      }
}

static void __attribute__ ((noreturn)) watcher_main (struct bx_podman_instance *inst, int fd)
{
  prctl (PR_SET_NAME, "bx-podman-watch");
  /* Nothing of brokerd's but this socket and the instance lock (held until the clean-up
   * is done, so a brokerd starting meanwhile leaves these containers to it). */
  for (int i = 3; i < 1024; i++)
    if (i != fd && i != inst->lock_fd)
      close (i);
  struct names live = { 0 };
  char msg[MESSAGE_MAX + 1];
  for (;;)
    {
      ssize_t r = recv (fd, msg, MESSAGE_MAX, 0);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      msg[r] = '\0';
      names_apply (&live, msg);
    }
  if (live.len > 0)
    fprintf (stderr,
             "brokerd: podman: brokerd ended with %zu container(s) running; "
             "killing them\n",
             live.len);
  for (size_t i = 0; i < live.len; i++)
    bx_podman_kill_and_remove (inst, live.items[i]);
  int root = inst->egress_root ? open (inst->egress_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  for (size_t i = 0; root >= 0 && i < live.len; i++)
    bx_podman_remove_tree_at (root, live.items[i]);
  if (inst->lock_fd >= 0 && inst->lock_path != NULL)
    unlink (inst->lock_path);
  _exit (0);
}

int
bx_podman_watch_start (struct bx_podman_instance *inst)
{
  int pair[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return -1;
  pid_t pid = fork ();
  if (pid < 0)
    {
      int saved = errno;
      close (pair[0]);
      close (pair[1]);
      errno = saved;
      return -1;
    }
  if (pid == 0)
    {
      close (pair[0]);
      /* Signals sent to brokerd's whole group (a terminal's Ctrl-C, systemd's SIGTERM)
       * must not stop the clean-up before it starts: it ends when brokerd does. */
      signal (SIGINT, SIG_IGN);
      signal (SIGTERM, SIG_IGN);
      signal (SIGHUP, SIG_IGN);
      signal (SIGPIPE, SIG_IGN);
      watcher_main (inst, pair[1]);
    }
  close (pair[1]);
  inst->watch_fd = pair[0];
  inst->watch_pid = pid;
  return 0;
}

void
bx_podman_watch (struct bx_podman_instance *inst, const char *name, bool running)
{
  if (inst->watch_fd < 0)
    return;
  char msg[MESSAGE_MAX];
  int n = snprintf (msg, sizeof msg, "%c%s", running ? '+' : '-', name);
  if (n > 0 && (size_t)n < sizeof msg)
    send (inst->watch_fd, msg, (size_t)n, MSG_NOSIGNAL);
}

void
bx_podman_watch_stop (struct bx_podman_instance *inst)
{
  if (inst->watch_fd < 0)
    return;
  close (inst->watch_fd);
  inst->watch_fd = -1;
  while (waitpid (inst->watch_pid, NULL, 0) < 0 && errno == EINTR)
    ;
}
