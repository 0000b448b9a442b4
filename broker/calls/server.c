/* SPDX-License-Identifier: Apache-2.0 */
/* The socket server.  See server.h. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <systemd/sd-event.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"
#include "bx/message.h"
#include "bx/printable.h"
#include "bx/proc_stat.h"
#include "bx/tool_args.h"
#include "bx/utf8.h"

#include "approvals.h"
#include "call.h"
#include "drain.h"
#include "daemon.h"
#include "fair.h"
#include "peers.h"
#include "policy.h"
#include "runner.h"
#include "server.h"

/* How long a refusal or an error frame may take to write: the socket buffer of a fresh
 * connection holds it at once, so this only matters for a client that does not read. */
#define SHORT_WRITE_MS 200
/* How long a refused connection is given to deliver its request before it is closed: a
 * client on a loaded machine may write well after connecting, and closing first turns its
 * write into EPIPE instead of the refusal.  A client that reads the refusal and closes ends
 * the wait at once. */
#define BUSY_DRAIN_MS 1000
/* How long a follower waits for its turn to accept before it leaves (when it is not the
 * last worker). */
#define WORKER_IDLE_MS 5000
/* How long the leader may serve one connection before it is taken to be blocked and another
 * worker leads. */
#define BLOCKED_US 1000
/* How long it may serve one while it is runnable (working, or waiting for a CPU): on a busy
 * machine a quick call outlasts BLOCKED_US for want of a CPU, and another worker leading
 * then only adds a thread racing the clients for the same CPUs. */
#define RUNNABLE_US 5000
/* How long the watcher waits before its last look at an idle leader. */
#define WATCH_TICK_US 500
/* How often, at most, systemd hears the number of calls in flight. */
#define STATUS_MS 1000

/* How long cancelled calls get to end once brokerd's grace period is over. */
#define CANCEL_WAIT_MS 2000

static const char busy_detail[] = "brokerd is busy";

/* Connections are served by a pool of worker threads, leader and followers: one worker,
 * the leader, waits in accept() and serves the connection it takes itself, then accepts
 * again; the others wait on a condition variable.  While calls are quick, one thread takes
 * them one after the other from the listen backlog, first come first served, with no
 * hand-over and no thread woken per call: on a busy machine a handful of threads racing for
 * the CPUs makes the slowest calls several times slower than a queue does.
 *
 * A call may block for long (a sandbox run, a client that trickles its request, a "busy"
 * answer draining).  A watcher thread wakes when the connection the leader serves will have
 * held it for BLOCKED_US; still on it then, the leader is relieved: a follower (or a new
 * worker) takes over accept(), and the old leader finishes its call and becomes a follower.
 * A leader found runnable instead (working, or waiting for a CPU other work holds) is not
 * blocked: it is looked at again each BLOCKED_US and relieved once asleep, or once it has
 * held the connection for RUNNABLE_US.  So a blocked call holds new connections back for
 * about BLOCKED_US, and the number of threads follows the number of blocking calls at once.
 * While quick calls follow each other, the watcher wakes about once per BLOCKED_US, each
 * time to find a later connection whose own BLOCKED_US it then waits for.  The watcher
 * sleeps, with no deadline, once it has found the leader idle at two looks in a row.
 *
 * A connection past max_connections, or past max_connections_per_uid for its uid, waits
 * for its turn in the worker that took it (fair.h: the turn goes to the uid holding the
 * fewest connections, the first to come among equals), for queue_ms at most and while its
 * client stays; at most max_connections of them wait (max_connections_per_uid of one uid),
 * so the waiting cost a bounded number of threads and descriptors.  Past those bounds, or
 * past queue_ms, the client is told "brokerd is busy".  Workers are started as they are
 * first needed, up to twice max_connections + 1: with every connection served and every
 * place in the queue taken, that one more worker answers "brokerd is busy", so a client
 * past the bounds is told at once instead of waiting in the listen backlog.  A follower
 * that is not called within WORKER_IDLE_MS leaves, so a burst's threads, and the memory
 * glibc keeps for each, go again. */
struct server
{
  const struct bx_config *config;
  struct brokerd *brokerd;
  int listen_fd;
  pthread_mutex_t lock;
  pthread_cond_t done;   /* signalled when active or workers drop (and the loop woken, once
                          * stopping) */
  pthread_cond_t turn;   /* followers wait here to lead */
  pthread_cond_t watch;  /* the watcher waits here while the leader is not serving */
  unsigned active;       /* connections being served: at most max_connections */
  unsigned workers;      /* worker threads alive */
  unsigned accepting;    /* of which waiting in accept() */
  unsigned followers;    /* of which waiting on `turn` */
  bool led;              /* a worker leads: it accepts, or serves and will accept again */
  uint64_t leader_term;  /* counts leaders: the leader knows itself by its term */
  bool leader_serving;   /* the leader serves a connection (not in accept()) */
  pid_t leader_tid;      /* the leader's thread */
  int64_t serving_since; /* when it took that connection (bx_now_ns) */
  bool watcher_asleep;   /* the watcher waits on `watch` with no deadline */
  pthread_t watcher;
  struct bx_fair *conns;      /* connections being served and waiting, per peer uid */
  struct bx_drainer *drainer; /* holds refused connections */
  bool stopping;
  unsigned told;           /* the calls in flight systemd last heard of */
  sd_event_source *status; /* the status tick, until brokerd stops */
};

/* ---- The socket. --------------------------------------------------------------------- */

static int
fill_addr (const char *path, struct sockaddr_un *addr, bx_error *err)
{
  memset (addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  if (strlen (path) >= sizeof addr->sun_path)
    return bx_error_setc (err, ENAMETOOLONG, "socket %s: the path is too long", path);
  strcpy (addr->sun_path, path);
  return 0;
}

/* A socket file at PATH: refuse when a brokerd answers on it, remove it when nobody does. */
static int
clear_stale (const char *path, const struct sockaddr_un *addr, bx_error *err)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    {
      if (errno == ENOENT)
        return 0;
      return bx_error_set (err, errno, "socket %s", path);
    }
  if (!S_ISSOCK (st.st_mode))
    return bx_error_setc (err, EEXIST,
                          "socket %s: the path exists and is not a socket; "
                          "refusing to replace it",
                          path);
  cleanup_close int probe = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0)
    return bx_error_set (err, errno, "socket %s: cannot make a probe socket", path);
  if (connect (probe, (const struct sockaddr *)addr, sizeof *addr) == 0)
    return bx_error_setc (err, EADDRINUSE, "socket %s: another brokerd is already listening on it",
                          path);
  if (errno != ECONNREFUSED)
    return bx_error_set (err, errno, "socket %s: cannot tell whether it is in use", path);
  /* Nobody listens: a brokerd that died without cleaning up left it. */
  if (unlink (path) < 0 && errno != ENOENT)
    return bx_error_set (err, errno, "socket %s: cannot remove the stale socket", path);
  return 0;
}

int
bx_server_listen (const struct bx_config *cfg, int *out, bx_error *err)
{
  return bx_server_listen_at (cfg->socket, cfg->socket_mode, out, err);
}

int
bx_server_listen_at (const char *path, unsigned mode, int *out, bx_error *err)
{
  struct sockaddr_un addr;
  if (fill_addr (path, &addr, err) < 0)
    return -1;
  /* The folder: systemd's RuntimeDirectory makes it; by hand, one missing level is made. */
  cleanup_free char *dir = bx_xstrdup (path);
  char *slash = strrchr (dir, '/');
  if (slash != NULL && slash != dir)
    {
      *slash = '\0';
      if (mkdir (dir, 0755) < 0 && errno != EEXIST)
        return bx_error_set (err, errno, "socket %s: cannot make its folder %s", path, dir);
    }
  if (clear_stale (path, &addr, err) < 0)
    return -1;
  cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return bx_error_set (err, errno, "socket %s: cannot make a socket", path);
  /* Bound, given its mode and listening under a name of its own, then linked into place:
   * a client that finds the socket's file never finds it refusing (bound, not yet
   * listening), whatever the scheduler does between the steps.  Where the path leaves no
   * room for that name, it is bound in place. */
  cleanup_free char *staged = bx_xasprintf ("%s.%ld.new", path, (long)getpid ());
  struct sockaddr_un at = addr;
  const char *at_path = path;
  if (strlen (staged) < sizeof at.sun_path)
    {
      strcpy (at.sun_path, staged);
      at_path = staged;
      unlink (staged); /* one a brokerd of this pid left */
    }
  /* Bind with a tight umask so the socket never exists with looser permissions than the
   * config asks for, then set the exact mode.  brokerd is single-threaded here. */
  mode_t old = umask (0177);
  int r = bind (fd, (const struct sockaddr *)&at, sizeof at);
  int bind_errno = errno;
  umask (old);
  if (r < 0)
    return bx_error_set (err, bind_errno, "socket %s: cannot bind", at_path);
  if (chmod (at_path, mode) < 0)
    {
      int e = errno;
      unlink (at_path);
      return bx_error_set (err, e, "socket %s: cannot set its mode %04o", path, mode);
    }
  const char *failed = NULL;
  if (listen (fd, SOMAXCONN) < 0)
    failed = "cannot listen";
  /* A link, not a rename: like bind, it never takes the place of a socket another brokerd
   * made meanwhile. */
  else if (at_path != path && link (at_path, path) < 0)
    failed = errno == EEXIST ? "another brokerd made it meanwhile" : "cannot move it into place";
  if (failed != NULL)
    {
      int e = errno;
      unlink (at_path);
      return bx_error_set (err, e, "socket %s: %s", path, failed);
    }
  if (at_path != path)
    unlink (at_path);
  *out = steal_fd (&fd);
  return 0;
}

/* ---- One call (call.h tells its steps). ------------------------------------------------ */

/* One connection: read, decided, then parked for approval or run, and finished. */
static void
serve_call (struct server *s, int fd, uid_t uid, pid_t pid)
{
  struct bx_call *c = bx_call_new (s->brokerd, fd, uid, pid);
  if (bx_call_read (c) && bx_call_decide (c))
    {
      /* A call that waits for the owner leaves this worker: approvals.c finishes it. */
      if (bx_approvals_take (s->brokerd->approvals, c))
        return;
      bx_call_run (c);
    }
  bx_call_finish (c);
  bx_call_free (c);
}

/* Past the queue's bounds or its time: say so and close, so the client never hangs.  The client
 * writes its request right after connecting; the request is read and dropped for a moment
 * (BUSY_DRAIN_MS) before closing, so its write does not fail with EPIPE and it reads the
 * refusal instead of "cannot send".  That moment is spent by the drainer, not by this
 * worker: a client that stays silent would otherwise hold up accept() for all the others.
 * Closes FD. */
static void
refuse_busy (struct server *s, int fd, uid_t uid, pid_t pid)
{
  struct bx_call *c = bx_call_new (s->brokerd, fd, uid, pid);
  c->rec.decision = BX_DECISION_ERROR;
  bx_call_end (c, BX_OUTCOME_ERROR, busy_detail, SHORT_WRITE_MS);
  bx_call_finish (c);
  fd = bx_call_take_fd (c);
  bx_call_free (c);
  shutdown (fd, SHUT_WR);
  bx_drainer_add (s->drainer, fd, BUSY_DRAIN_MS, BX_FRAME_MAX + 4);
}

static void *worker_main (void *arg);

/* Connects to PATH N times and leaves at once: each connection wakes one worker waiting in
 * accept(), which sees that the server is stopping and closes it. */
static void
wake_acceptors (const char *path, unsigned n)
{
  struct sockaddr_un addr;
  cleanup_error bx_error err = NULL;
  if (fill_addr (path, &addr, &err) < 0)
    return;
  for (unsigned i = 0; i < n; i++)
    {
      cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0 || connect (fd, (const struct sockaddr *)&addr, sizeof addr) < 0)
        return;
    }
}

/* Starts one more worker; S's lock is held. */
static void
spawn_worker (struct server *s)
{
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  int r = pthread_create (&t, &attr, worker_main, s);
  pthread_attr_destroy (&attr);
  if (r != 0)
    /* The workers there are go on; the next to finish a call leads again. */
    bx_log (LOG_ERR, NULL, "cannot start a worker thread: %s", strerror (r));
  else
    s->workers++;
}

/* Leaves the lead to another worker (the leader is blocked); S's lock is held. */
static void
relieve_leader (struct server *s)
{
  s->led = false;
  if (s->followers > 0)
    pthread_cond_signal (&s->turn);
  else if (s->workers <= 2 * s->config->max_connections)
    spawn_worker (s);
  /* else every worker serves: the next to finish its call leads. */
}

/* Waits on S's watch condition until AT_NS (bx_now_ns's clock); S's lock is held. */
static void
watch_until (struct server *s, int64_t at_ns)
{
  struct timespec until
      = { .tv_sec = (time_t)(at_ns / 1000000000), .tv_nsec = (long)(at_ns % 1000000000) };
  pthread_cond_timedwait (&s->watch, &s->lock, &until);
}

/* Whether thread TID of this process is running or waiting for a CPU (state R), rather than
 * asleep in a system call: a leader held up for want of a CPU is not blocked.  A state that
 * cannot be read counts as blocked. */
static bool
thread_runnable (pid_t tid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
  struct bx_proc_stat st;
  return bx_proc_stat_read (path, &st) && st.state == 'R';
}

static void *
watcher_main (void *arg)
{
  struct server *s = arg;
  bool idle_looked = false; /* the last look found the leader not serving */
  pthread_mutex_lock (&s->lock);
  while (!s->stopping)
    {
      if (!s->led || !s->leader_serving)
        {
          if (!idle_looked)
            {
              /* Look once more a tick later before sleeping without a deadline: on a busy
               * brokerd the leader is back serving by then, and a watcher that slept at
               * each gap between calls would be woken for each. */
              idle_looked = true;
              watch_until (s, bx_now_ns () + WATCH_TICK_US * 1000LL);
              continue;
            }
          s->watcher_asleep = true;
          pthread_cond_wait (&s->watch, &s->lock);
          s->watcher_asleep = false;
          idle_looked = false;
          continue;
        }
      idle_looked = false;
      int64_t now = bx_now_ns ();
      int64_t due = s->serving_since + BLOCKED_US * 1000LL;
      if (now < due)
        watch_until (s, due);
      else if (now < s->serving_since + RUNNABLE_US * 1000LL && thread_runnable (s->leader_tid))
        /* Look again a tick later: it may be asleep by then (a sandbox's run). */
        watch_until (s, now + BLOCKED_US * 1000LL);
      else
        relieve_leader (s);
    }
  pthread_mutex_unlock (&s->lock);
  return NULL;
}

/* Waits as a follower until this worker may lead; false when it should leave instead (idle
 * for WORKER_IDLE_MS while another leads, or stopping).  S's lock is held. */
static bool
await_turn (struct server *s)
{
  struct timespec until = bx_deadline_timespec (bx_deadline_in (WORKER_IDLE_MS));
  s->followers++;
  int r = 0;
  while (s->led && !s->stopping && r != ETIMEDOUT)
    r = pthread_cond_timedwait (&s->turn, &s->lock, &until);
  s->followers--;
  return !s->led && !s->stopping;
}

static void *
worker_main (void *arg)
{
  struct server *s = arg;
  uint64_t term = 0; /* this worker's, while it leads */
  pthread_mutex_lock (&s->lock);
  while (!s->stopping)
    {
      bool leading = s->led && s->leader_term == term;
      if (!leading)
        {
          if (s->led && !await_turn (s))
            break;
          if (s->stopping)
            break;
          s->led = true;
          term = ++s->leader_term;
          s->leader_tid = gettid ();
          s->leader_serving = false;
        }
      s->accepting++;
      pthread_mutex_unlock (&s->lock);
      int fd = accept4 (s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
      int e = errno;
      pthread_mutex_lock (&s->lock);
      s->accepting--;
      if (fd < 0)
        {
          if (!s->stopping && (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM))
            {
              pthread_mutex_unlock (&s->lock);
              bx_log (LOG_ERR, NULL, "cannot accept a connection: %s", strerror (e));
              /* Out of descriptors: wait a little rather than spin. */
              struct timespec ts = { 0, 50 * 1000 * 1000 };
              nanosleep (&ts, NULL);
              pthread_mutex_lock (&s->lock);
            }
          continue;
        }
      if (s->stopping)
        {
          /* A wake-up connection (or a client racing the stop): not served. */
          close (fd);
          continue;
        }
      /* Serving: the watcher relieves this worker if the connection holds it up. */
      if (s->led && s->leader_term == term)
        {
          s->leader_serving = true;
          s->serving_since = bx_now_ns ();
          if (s->watcher_asleep)
            pthread_cond_signal (&s->watch);
        }
      /* A peer whose uid the kernel cannot tell counts as one uid of its own. */
      uid_t uid;
      pid_t pid;
      if (bx_peer_cred (fd, &uid, &pid) < 0)
        {
          uid = (uid_t)-1;
          pid = (pid_t)-1;
        }
      pthread_mutex_unlock (&s->lock);
      const struct bx_config *cfg = s->config;
      enum bx_fair_wait turn = bx_fair_queue (s->conns, uid, fd, bx_deadline_in (cfg->queue_ms),
                                              cfg->max_connections, cfg->max_connections_per_uid);
      if (turn == BX_FAIR_HUNG_UP)
        {
          /* Nobody is left to answer: the connection goes, and the place it waited for
           * goes to the next in turn. */
          close (fd);
          pthread_mutex_lock (&s->lock);
        }
      else if (turn != BX_FAIR_ADMITTED)
        {
          refuse_busy (s, fd, uid, pid);
          pthread_mutex_lock (&s->lock);
        }
      else
        {
          pthread_mutex_lock (&s->lock);
          s->active++;
          pthread_mutex_unlock (&s->lock);
          serve_call (s, fd, uid, pid);
          bx_fair_leave (s->conns, uid);
          pthread_mutex_lock (&s->lock);
          s->active--;
          pthread_cond_broadcast (&s->done);
          if (s->stopping)
            bx_brokerd_wake (s->brokerd);
        }
      if (s->led && s->leader_term == term)
        s->leader_serving = false;
    }
  s->workers--;
  pthread_cond_broadcast (&s->done);
  if (s->stopping)
    bx_brokerd_wake (s->brokerd);
  pthread_mutex_unlock (&s->lock);
  return NULL;
}

/* SIGTERM and SIGINT stop brokerd; SIGHUP is a reload.  Once brokerd stops, the loop still
 * serves (the metrics, the calls' ends) but signals are left alone, as they were before it
 * stopped: a second SIGTERM does not cut the grace period short. */
static int
on_signal (sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
  (void)src;
  struct server *s = userdata;
  if (s->brokerd->signo != 0)
    return 0;
  if (si->ssi_signo == SIGHUP)
    bx_brokerd_reload (s->brokerd);
  else
    s->brokerd->signo = (int)si->ssi_signo;
  return 0;
}

static bool
signalled (void *ctx)
{
  const struct brokerd *b = ctx;
  return b->signo != 0;
}

/* Whether every call ended and every worker left (or, with CALLS_ONLY, every call ended). */
struct drained
{
  struct server *s;
  bool calls_only;
};

static bool
server_drained (void *ctx)
{
  const struct drained *d = ctx;
  pthread_mutex_lock (&d->s->lock);
  bool done = d->s->active == 0 && (d->calls_only || d->s->workers == 0);
  pthread_mutex_unlock (&d->s->lock);
  return done;
}

/* Every STATUS_MS: systemd hears the calls in flight when their number changed. */
static int
on_status_tick (sd_event_source *src, uint64_t usec, void *userdata)
{
  (void)usec;
  struct server *s = userdata;
  unsigned now = bx_metrics_in_flight (s->brokerd->metrics);
  if (now != s->told)
    bx_notify_in_flight (now);
  s->told = now;
  sd_event_source_set_time_relative (src, STATUS_MS * 1000ULL);
  return sd_event_source_set_enabled (src, SD_EVENT_ONESHOT);
}

/* The loop's sources of the server: the signals (blocked in every thread: sd-event reads
 * them from a signalfd) and the status tick.  The signals are removed with the loop, the
 * status tick when brokerd stops.  0, or -1 (logged). */
static int
watch_signals (struct server *s)
{
  sd_event *loop = s->brokerd->loop;
  static const int signals[] = { SIGTERM, SIGINT, SIGHUP };
  int r = 0;
  for (size_t i = 0; i < sizeof signals / sizeof signals[0] && r >= 0; i++)
    r = sd_event_add_signal (loop, NULL, signals[i], on_signal, s);
  if (r >= 0)
    r = sd_event_add_time_relative (loop, &s->status, CLOCK_MONOTONIC, STATUS_MS * 1000ULL, 0,
                                    on_status_tick, s);
  if (r >= 0)
    return 0;
  bx_log (LOG_CRIT, NULL, "cannot watch signals: %s", strerror (-r));
  return -1;
}

/* Until D is drained or DEADLINE: on the loop, so that what it serves goes on, or, when the
 * loop failed, on the workers' condition alone. */
static void
wait_server (struct brokerd *brokerd, bool loop_ok, struct drained *d, int64_t deadline)
{
  if (loop_ok && bx_brokerd_run_until (brokerd, server_drained, d, deadline) >= 0)
    return;
  struct server *s = d->s;
  struct timespec until = bx_deadline_timespec (deadline);
  pthread_mutex_lock (&s->lock);
  while (s->active > 0 || (!d->calls_only && s->workers > 0))
    if (pthread_cond_timedwait (&s->done, &s->lock, &until) == ETIMEDOUT)
      break;
  pthread_mutex_unlock (&s->lock);
}

int
bx_server_run (struct brokerd *brokerd, int64_t *grace_end)
{
  int listen_fd = brokerd->listen_fd;
  const struct bx_config *cfg = brokerd->config;
  /* On the heap: when calls outlive the grace period, their threads still point at it. */
  struct server *s = bx_xzalloc (sizeof *s);
  s->config = cfg;
  s->brokerd = brokerd;
  s->listen_fd = listen_fd;
  s->conns = bx_fair_new (cfg->max_connections, cfg->max_connections_per_uid);
  pthread_mutex_init (&s->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (&s->done, &ca);
  pthread_cond_init (&s->turn, &ca);
  pthread_cond_init (&s->watch, &ca);
  pthread_condattr_destroy (&ca);

  cleanup_error bx_error err = NULL;
  int r = bx_drainer_start (brokerd->loop, &s->drainer, &err);
  if (r == 0 && (r = pthread_create (&s->watcher, NULL, watcher_main, s)) != 0)
    {
      bx_drainer_stop (s->drainer);
      bx_error_set (&err, r, "cannot start the workers' watcher");
    }
  if (r != 0)
    {
      bx_log (LOG_CRIT, NULL, "%s; stopping", bx_error_msg (err));
      pthread_cond_destroy (&s->done);
      pthread_cond_destroy (&s->turn);
      pthread_cond_destroy (&s->watch);
      pthread_mutex_destroy (&s->lock);
      bx_fair_free (s->conns);
      free (s);
      return -1;
    }
  pthread_mutex_lock (&s->lock);
  spawn_worker (s);
  pthread_mutex_unlock (&s->lock);

  /* This thread runs brokerd's loop: it waits for signals, tells systemd the calls in
   * flight when they change (at most every STATUS_MS), and serves the loop's other sources.
   * SIGTERM or SIGINT ends this part with the signal's number; a failing loop ends it with
   * an error (0). */
  int signo = 0;
  bool loop_ok = watch_signals (s) == 0;
  if (loop_ok)
    {
      int r = bx_brokerd_run_until (brokerd, signalled, brokerd, BX_NO_DEADLINE);
      if (r < 0)
        {
          bx_log (LOG_CRIT, NULL, "brokerd's loop: %s", strerror (-r));
          loop_ok = false;
        }
      signo = brokerd->signo;
    }

  /* Stop accepting and remove the socket at once: a client now gets "connection refused"
   * rather than waiting, and a new brokerd started during the grace period keeps its
   * socket.  shutdown() wakes the workers waiting in accept(); the descriptor itself is
   * closed only when no worker can be using it. */
  bx_notify_stopping ();
  s->status = sd_event_source_disable_unref (s->status);
  /* One grace period for every call, from now: approved calls share it (brokerd.c). */
  int64_t deadline = bx_deadline_in (cfg->grace_ms);
  *grace_end = deadline;
  pthread_mutex_lock (&s->lock);
  s->stopping = true;
  unsigned waiting = s->accepting;
  pthread_cond_broadcast (&s->turn);
  pthread_cond_signal (&s->watch);
  pthread_mutex_unlock (&s->lock);
  /* Connections waiting for their turn are told "brokerd is busy" now. */
  bx_fair_close (s->conns);
  pthread_join (s->watcher, NULL);
  if (brokerd->socket_activated)
    /* systemd's socket stays open for the next start: shutting it down would break it for
     * good.  The workers in accept() are woken by connections of our own instead. */
    wake_acceptors (brokerd->wake_path, waiting);
  else
    {
      shutdown (listen_fd, SHUT_RDWR);
      brokerd->socket_ours = false;
      if (unlink (cfg->socket) < 0 && errno != ENOENT)
        bx_log (LOG_WARNING, NULL, "cannot remove %s: %s", cfg->socket, strerror (errno));
    }
  bx_log (signo ? LOG_NOTICE : LOG_CRIT, NULL, "%s: stopping", signo ? strsignal (signo) : "error");
  /* Calls waiting for their owner are answered now; no call is taken for approval again. */
  bx_approvals_stop_waiting (brokerd->approvals);

  /* Running calls finish, the other workers leave; then nothing uses the server.  The loop
   * goes on meanwhile (a failed one is not run again: the waits are then plain sleeps). */
  struct drained all = { s, false }, calls = { s, true };
  wait_server (brokerd, loop_ok, &all, deadline);
  pthread_mutex_lock (&s->lock);
  if (s->active > 0 && brokerd->canceller != NULL)
    {
      /* Past the grace period: the calls still running are cancelled, and their modules
       * get a moment to remove what they started. */
      bx_log (LOG_WARNING, NULL, "%u call(s) still running after %lld ms; cancelling them",
              s->active, (long long)cfg->grace_ms);
      pthread_mutex_unlock (&s->lock);
      bx_canceller_cancel_all (brokerd->canceller);
      wait_server (brokerd, loop_ok, &calls, deadline + CANCEL_WAIT_MS);
      pthread_mutex_lock (&s->lock);
    }
  unsigned left = s->active;
  bool clear = s->workers == 0;
  pthread_mutex_unlock (&s->lock);
  if (left > 0)
    {
      bx_log (LOG_ERR, NULL, "%u call(s) still running after %lld ms; exiting anyway", left,
              (long long)cfg->grace_ms);
      /* The threads still use the server: it is left allocated, and the process is about
       * to end. */
      return (int)left;
    }
  if (!clear)
    /* A worker has not left yet (it may have accepted a last connection as the grace
     * period ended): keep everything it could touch, the process ends first. */
    return 1;
  bx_drainer_stop (s->drainer);
  pthread_cond_destroy (&s->done);
  pthread_cond_destroy (&s->turn);
  pthread_cond_destroy (&s->watch);
  pthread_mutex_destroy (&s->lock);
  bx_fair_free (s->conns);
  free (s);
  return 0;
}
