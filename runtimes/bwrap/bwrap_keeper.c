/* SPDX-License-Identifier: Apache-2.0 */
/* A slot's keeper: a small process that sits in the slot's cgroups from start and forks
 * every sandbox of the slot, so a sandbox is born in its cgroups.
 *
 * Moving a process into a cgroup v1 hierarchy (a write to cgroup.procs) waits for an RCU
 * grace period when no such move happened just before: several milliseconds per
 * controller on an idle machine, more than bubblewrap's whole start.  A child inherits
 * its parent's cgroups at fork for free, so the keeper pays the move once, at start.
 *
 * The keeper is forked from brokerd and runs only async-signal-safe code (brokerd is
 * threaded).  brokerd sends it a request on a SOCK_SEQPACKET socket: the argument list,
 * the uid, gid and file size limit, and the descriptors (standard streams first) as
 * SCM_RIGHTS.  The keeper clones the child with CLONE_PIDFD, waits until it has exec'd (or
 * failed to), and answers with the error number and the pidfd, through which brokerd
 * watches and kills the child.  Children, and orphans of theirs (the keeper is their
 * subreaper), are reaped by the kernel (SIGCHLD ignored);
 * their exit status reaches brokerd as bubblewrap's json status.  The keeper ends when its
 * socket does, that is when brokerd closes it or dies, and its sandboxes with it
 * (--die-with-parent).  Not PR_SET_PDEATHSIG: that follows the thread that forked the
 * keeper, and a keeper started again after a failure is forked by a worker thread that
 * may end long before brokerd.
 *
 * A clone of the keeper costs a few hundred microseconds, which a call that takes a
 * sandbox made ahead (bwrap_pool.c) would pay for its mounter.  So when the keeper starts
 * such a sandbox it also clones that sandbox's mounter ahead (the spare): a child of its
 * own that waits on a socket of its own for the join request, which the keeper passes on
 * to it whole, descriptors and all.  It serves one request; a spare the keeper cannot hand
 * the request to (the slot was emptied, and the spare killed with it) is dropped, and the
 * mounter cloned then, as for any child. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

#include "bwrap.h"

#define MAX_MESSAGE 65536
#define MAX_FDS     (BX_BWRAP_MAX_FDS + 3)
#define MAX_ARGS    2048

struct request
{
  int64_t uid, gid;
  uint64_t file_size;
  uint32_t argc;
  uint32_t mount_first, mount_count; /* among the descriptors after the standard streams */
  bool has_readonly, has_inside;
  bool join; /* bx_bwrap_child's, with its join_pid and deadline */
  int64_t join_pid;
  bool spare_mounter; /* bx_bwrap_child's */
  int64_t deadline;
  bool mount_readonly[BX_BWRAP_MAX_FDS];
  bool mount_inside[BX_BWRAP_MAX_FDS];
  struct bx_bwrap_ucounts ucounts; /* set: the sandbox's shares (bwrap_ucounts.c) */
};

static int
send_with_fds (int sock, const void *bytes, size_t len, const int *fds, size_t count)
{
  char control[CMSG_SPACE (MAX_FDS * sizeof (int))];
  memset (control, 0, sizeof control);
  struct iovec iov = { (void *)bytes, len };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (count > 0)
    {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE (count * sizeof (int));
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (count * sizeof (int));
      memcpy (CMSG_DATA (c), fds, count * sizeof (int));
    }
  ssize_t n;
  while ((n = sendmsg (sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
    ;
  return n == (ssize_t)len ? 0 : -1;
}

/* Receives one message; the descriptors land in FDS (close-on-exec), their number in
 * *COUNT.  The length, or -1. */
static ssize_t
receive_with_fds (int sock, void *bytes, size_t len, int *fds, size_t *count)
{
  char control[CMSG_SPACE (MAX_FDS * sizeof (int))];
  struct iovec iov = { bytes, len };
  struct msghdr msg = {
    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control
  };
  ssize_t n;
  while ((n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
    ;
  *count = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); n >= 0 && c != NULL; c = CMSG_NXTHDR (&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      {
        size_t k = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        memcpy (fds + *count, CMSG_DATA (c), k * sizeof (int));
        *count += k;
      }
  if (n >= 0 && (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0)
    {
      for (size_t i = 0; i < *count; i++)
        close (fds[i]);
      *count = 0;
      errno = EMSGSIZE;
      return -1;
    }
  return n;
}

/* Whether the child's report pipe REPORT is readable (its word, or its end at exec) before
 * DEADLINE (bx_now_ms's clock; 0: no bound). */
static bool
reported (int report, int64_t deadline)
{
  for (;;)
    {
      int wait = deadline > 0 ? bx_deadline_left (deadline) : -1;
      if (wait == 0)
        return false;
      struct pollfd p = { .fd = report, .events = POLLIN };
      int n = poll (&p, 1, wait);
      if (n > 0)
        return true;
      if (n < 0 && errno != EINTR)
        return true; /* the read says what happened */
    }
}

/* The request in BUF (LEN bytes, COUNT descriptors in FDS, the standard streams first) into
 * *REQ, ARGV (MAX_ARGS + 1 entries; pointers into BUF) and *C.  False when it is malformed. */
static bool
parse (char *buf, ssize_t len, const int *fds, size_t count, struct request *req, char **argv,
       struct bx_bwrap_child *c)
{
  if (len < 0 || (size_t)len < sizeof *req || count < 3)
    return false;
  memcpy (req, buf, sizeof *req);
  char *p = buf + sizeof *req, *end = buf + len;
  uint32_t i = 0;
  for (; i < req->argc && i < MAX_ARGS && p < end; i++)
    {
      argv[i] = p;
      char *nul = memchr (p, '\0', (size_t)(end - p));
      if (nul == NULL)
        break;
      p = nul + 1;
    }
  argv[i] = NULL;
  if (i != req->argc || i == 0)
    return false;
  *c = (struct bx_bwrap_child){
    .uid = req->uid,
    .gid = req->gid,
    .file_size = req->file_size,
    .fds = fds + 3,
    .fd_count = count - 3,
    .mount_first = req->mount_first,
    .mount_count = req->mount_count,
    .mount_readonly = req->has_readonly ? req->mount_readonly : NULL,
    .mount_inside = req->has_inside ? req->mount_inside : NULL,
    .ucounts = req->ucounts.set ? &req->ucounts : NULL,
    .join = req->join,
    .join_pid = (pid_t)req->join_pid,
    .deadline = req->deadline,
  };
  return true;
}

/* The spare mounter, in the keeper: its socket, pidfd and the read end of its report pipe,
 * or -1 each. */
static int spare_sock = -1, spare_pidfd = -1, spare_report = -1;

static void
spare_drop (void)
{
  /* Its socket closed, a spare still waiting reads the end and exits. */
  int *fds[] = { &spare_sock, &spare_pidfd, &spare_report };
  for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
    if (*fds[i] >= 0)
      {
        close (*fds[i]);
        *fds[i] = -1;
      }
}

static void __attribute__ ((noreturn)) spare_main (int sock, int report)
{
  static char buf[MAX_MESSAGE];
  int fds[MAX_FDS];
  size_t count;
  struct request req;
  char *argv[MAX_ARGS + 1];
  struct bx_bwrap_child c;
  ssize_t n = receive_with_fds (sock, buf, sizeof buf, fds, &count);
  /* Only a mounter's request: anything else is the keeper's to clone. */
  if (n <= 0 || !parse (buf, n, fds, count, &req, argv, &c) || !c.join)
    _exit (0);
  close (sock);
  bx_bwrap_child_exec (argv, &c, fds[0], fds[1], fds[2], report);
}

/* Clones the spare, after the keeper has answered: nothing waits on it. */
static void
spare_make (int keeper_sock)
{
  spare_drop ();
  int pair[2], report[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return;
  if (pipe2 (report, O_CLOEXEC) < 0)
    {
      close (pair[0]);
      close (pair[1]);
      return;
    }
  int pidfd = -1;
  long pid = syscall (SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
  if (pid == 0)
    {
      /* Not the keeper's socket: brokerd must see the keeper's end when the keeper ends. */
      close (keeper_sock);
      close (pair[0]);
      close (report[0]);
      spare_main (pair[1], report[1]);
    }
  close (pair[1]);
  close (report[1]);
  if (pid < 0)
    {
      close (pair[0]);
      close (report[0]);
      return;
    }
  spare_sock = pair[0];
  spare_pidfd = pidfd;
  spare_report = report[0];
}

/* Hands a mounter's request (BUF, LEN, with FDS) to the spare: true with its pidfd and report
 * pipe in *PIDFD and *REPORT, the spare then used up; false when there is none to take it. */
static bool
spare_take (const char *buf, ssize_t len, const int *fds, size_t count, int *pidfd, int *report)
{
  if (spare_sock < 0)
    return false;
  bool sent = send_with_fds (spare_sock, buf, (size_t)len, fds, count) == 0;
  if (!sent)
    {
      spare_drop ();
      return false;
    }
  *pidfd = spare_pidfd;
  *report = spare_report;
  spare_pidfd = spare_report = -1;
  spare_drop ();
  return true;
}

/* One request, in the keeper: clone (or hand to the spare), and answer with the error and
 * the pidfd. */
static void
serve (int sock, char *buf, ssize_t len, int *fds, size_t count)
{
  struct request req;
  char *argv[MAX_ARGS + 1];
  struct bx_bwrap_child c;
  int answer = EINVAL;
  int pidfd = -1;
  bool spare_next = false;
  if (parse (buf, len, fds, count, &req, argv, &c))
    {
      int report[2] = { -1, -1 };
      bool started = false;
      if (req.join && spare_take (buf, len, fds, count, &pidfd, &report[0]))
        {
          started = true;
          answer = 0;
        }
      else if (pipe2 (report, O_CLOEXEC) < 0)
        answer = errno;
      else
        {
          long pid = syscall (SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
          if (pid == 0)
            {
              /* Not the spare's ends: the child turns dumpable as the sandbox's uid before
               * its exec closes them, and a live spare takes a root mounter's request. */
              spare_drop ();
              bx_bwrap_child_exec (argv, &c, fds[0], fds[1], fds[2], report[1]);
            }
          started = pid > 0;
          answer = started ? 0 : errno;
          close (report[1]);
        }
      if (report[0] >= 0)
        {
          int child_errno;
          ssize_t got = -1;
          if (started && !reported (report[0], req.deadline))
            {
              /* Stopped, or stuck: the call must not wait on it for ever. */
              syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
              answer = ETIMEDOUT;
              close (pidfd);
              pidfd = -1;
            }
          else
            while ((got = read (report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR)
              ;
          close (report[0]);
          if (started && got == (ssize_t)sizeof child_errno)
            answer = child_errno;
          else if (req.join)
            answer = EIO; /* a mounter says it is done: ended without a word, it failed */
        }
      spare_next = req.spare_mounter && answer == 0;
    }
  for (size_t i = 0; i < count; i++)
    close (fds[i]);
  send_with_fds (sock, &answer, sizeof answer, &pidfd, answer == 0 && pidfd >= 0 ? 1 : 0);
  if (pidfd >= 0)
    close (pidfd);
  if (spare_next)
    spare_make (sock);
}

static void __attribute__ ((noreturn)) keeper_main (int sock, const int *procs, size_t procs_count)
{
  /* So that ps tells it from brokerd, whose name it would otherwise keep. */
  prctl (PR_SET_NAME, "bwrap-keeper");
  /* A sandbox's inner bubblewrap outlives the outer one when the slot is killed: orphaned,
   * it would go to the host's init, which may never reap it (the init of a container or a
   * VM), and each such zombie would count against the slot's pids limit until calls could
   * no longer start.  As their subreaper the keeper takes them, and with SIGCHLD ignored
   * the kernel reaps them at once. */
  if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
    _exit (1);
  for (size_t i = 0; i < procs_count; i++)
    if (write (procs[i], "0", 1) != 1)
      _exit (1);
  /* A sandbox over its memory limit is the one to go, never the keeper. */
  int adj = open ("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (adj >= 0)
    {
      ssize_t ignored = write (adj, "-1000", 5);
      (void)ignored;
      close (adj);
    }
  bx_bwrap_signals_default (SIGCHLD);
  /* Nothing of brokerd's stays open in the keeper but its socket. */
  if (dup2 (sock, 3) < 0)
    _exit (1);
  sock = 3;
  if (syscall (SYS_close_range, 4u, ~0u, 0) < 0)
    for (int fd = 4; fd < 65536; fd++)
      close (fd);
  int devnull = open ("/dev/null", O_RDWR);
  if (devnull >= 0)
    {
      dup2 (devnull, 0);
      dup2 (devnull, 1);
      dup2 (devnull, 2);
      if (devnull > 3)
        close (devnull);
    }

  static char buf[MAX_MESSAGE];
  int fds[MAX_FDS];
  for (;;)
    {
      size_t count;
      ssize_t n = receive_with_fds (sock, buf, sizeof buf, fds, &count);
      if (n == 0)
        _exit (0); /* brokerd closed the socket */
      if (n < 0)
        {
          if (errno == EMSGSIZE)
            {
              int answer = EMSGSIZE;
              send_with_fds (sock, &answer, sizeof answer, NULL, 0);
              continue;
            }
          _exit (1);
        }
      serve (sock, buf, n, fds, count);
    }
}

/* clone3 with CLONE_INTO_CGROUP (Linux 5.7): a child born in the cgroup v2 folder CGROUP,
 * or -1 with errno (ENOSYS, E2BIG or EINVAL where the kernel cannot).  Like fork, the
 * child returns 0 on the caller's stack. */
static pid_t
clone_into (int cgroup)
{
  struct clone_args args = {
    .flags = CLONE_INTO_CGROUP,
    .exit_signal = SIGCHLD,
    .cgroup = (uint64_t)cgroup,
  };
  return (pid_t)syscall (SYS_clone3, &args, sizeof args);
}

int
bx_bwrap_keeper_start (int cgroup, const int *procs, size_t procs_count, pid_t *pid)
{
  int pair[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return -1;
  pid_t child = cgroup >= 0 ? clone_into (cgroup) : -1;
  if (child == 0)
    keeper_main (pair[1], NULL, 0);
  if (child < 0)
    {
      /* Not born there: forked, it moves itself in. */
      child = fork ();
      if (child == 0)
        keeper_main (pair[1], procs, procs_count);
    }
  int saved = errno;
  close (pair[1]);
  if (child < 0)
    {
      close (pair[0]);
      errno = saved;
      return -1;
    }
  *pid = child;
  return pair[0];
}

int
bx_bwrap_keeper_spawn (int sock, char *const argv[], const struct bx_bwrap_child *c, int in,
                       int out, int err)
{
  size_t len = sizeof (struct request), argc = 0;
  for (; argv[argc] != NULL; argc++)
    len += strlen (argv[argc]) + 1;
  if (len > MAX_MESSAGE || argc > MAX_ARGS || c->fd_count + 3 > MAX_FDS)
    {
      errno = E2BIG;
      return -1;
    }
  cleanup_free char *buf = bx_xmalloc (len);
  struct request req = { .uid = c->uid,
                         .gid = c->gid,
                         .file_size = c->file_size,
                         .argc = (uint32_t)argc,
                         .mount_first = (uint32_t)c->mount_first,
                         .mount_count = (uint32_t)c->mount_count,
                         .join = c->join,
                         .join_pid = c->join_pid,
                         .spare_mounter = c->spare_mounter,
                         .deadline = c->deadline };
  if ((c->mount_readonly != NULL || c->mount_inside != NULL) && c->mount_count > BX_BWRAP_MAX_FDS)
    {
      errno = E2BIG;
      return -1;
    }
  /* Never sent without: a mount bubblewrap does not bind itself would stay writable, and its
   * descriptor open in the sandbox. */
  if (c->mount_readonly != NULL)
    {
      req.has_readonly = true;
      memcpy (req.mount_readonly, c->mount_readonly, c->mount_count * sizeof (bool));
    }
  if (c->mount_inside != NULL)
    {
      req.has_inside = true;
      memcpy (req.mount_inside, c->mount_inside, c->mount_count * sizeof (bool));
    }
  if (c->ucounts != NULL)
    req.ucounts = *c->ucounts;
  memcpy (buf, &req, sizeof req);
  char *p = buf + sizeof req;
  for (size_t i = 0; i < argc; i++)
    {
      size_t n = strlen (argv[i]) + 1;
      memcpy (p, argv[i], n);
      p += n;
    }
  int fds[MAX_FDS] = { in, out, err };
  memcpy (fds + 3, c->fds, c->fd_count * sizeof (int));
  if (send_with_fds (sock, buf, len, fds, c->fd_count + 3) < 0)
    return -1;
  int answer;
  int pidfd[MAX_FDS];
  size_t count;
  ssize_t n = receive_with_fds (sock, &answer, sizeof answer, pidfd, &count);
  if (n != (ssize_t)sizeof answer)
    {
      for (size_t i = 0; i < count; i++)
        close (pidfd[i]);
      errno = n < 0 ? errno : EPROTO;
      return -1;
    }
  if (answer != 0 || count != 1)
    {
      for (size_t i = 0; i < count; i++)
        close (pidfd[i]);
      errno = answer != 0 ? answer : EPROTO;
      return -1;
    }
  return pidfd[0];
}
