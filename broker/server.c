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
#include "bx/tool_args.h"
#include "bx/utf8.h"

#include "approvals.h"
#include "drain.h"
#include "ops.h"
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
/* How often the watcher looks at the leader while it serves: a leader still on the same
 * connection at two looks in a row is taken to be blocked, and another worker leads. */
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
 * answer draining).  A watcher thread looks at the leader every WATCH_TICK_US while it
 * serves; still on the same connection at two looks in a row, the leader is relieved: a
 * follower (or a new worker) takes over accept(), and the old leader finishes its call and
 * becomes a follower.  So a blocked call holds new connections back for at most two ticks,
 * and the number of threads follows the number of blocking calls at once.  The watcher
 * sleeps, with no deadline, once it has found the leader idle at two looks in a row.
 *
 * Workers are started as they are first needed, up to max_connections + 1: with
 * max_connections busy, that one more worker answers "brokerd is busy", so a client past
 * the limit is told at once instead of waiting in the listen backlog.  A follower that is
 * not called within WORKER_IDLE_MS leaves, so a burst's threads, and the memory glibc keeps
 * for each, go again. */
struct server
{
  const struct bx_config *config;
  struct bx_module *module;
  struct bx_audit *audit;
  struct bx_approvals *approvals; /* NULL when no grant asks for approval */
  struct bx_ops *ops;
  int listen_fd;
  pthread_mutex_t lock;
  pthread_cond_t done;  /* signalled when active or workers drop */
  pthread_cond_t turn;  /* followers wait here to lead */
  pthread_cond_t watch; /* the watcher waits here while the leader is not serving */
  unsigned active;      /* connections being served: at most max_connections */
  unsigned workers;     /* worker threads alive */
  unsigned accepting;   /* of which waiting in accept() */
  unsigned followers;   /* of which waiting on `turn` */
  bool led;             /* a worker leads: it accepts, or serves and will accept again */
  uint64_t leader_term; /* counts leaders: the leader knows itself by its term */
  uint64_t taken;       /* connections the leaders took: the watcher's clock */
  bool leader_serving;  /* the leader serves a connection (not in accept()) */
  bool watcher_asleep;  /* the watcher waits on `watch` with no deadline */
  pthread_t watcher;
  struct bx_peers peers;      /* connections being served, per peer uid */
  struct bx_drainer *drainer; /* holds refused connections */
  bool stopping;
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
  /* Bind with a tight umask so the socket never exists with looser permissions than the
   * config asks for, then set the exact mode.  brokerd is single-threaded here. */
  mode_t old = umask (0177);
  int r = bind (fd, (const struct sockaddr *)&addr, sizeof addr);
  int bind_errno = errno;
  umask (old);
  if (r < 0)
    return bx_error_set (err, bind_errno, "socket %s: cannot bind", path);
  if (chmod (path, mode) < 0)
    {
      int e = errno;
      unlink (path);
      return bx_error_set (err, e, "socket %s: cannot set its mode %04o", path, mode);
    }
  if (listen (fd, SOMAXCONN) < 0)
    {
      int e = errno;
      unlink (path);
      return bx_error_set (err, e, "socket %s: cannot listen", path);
    }
  *out = steal_fd (&fd);
  return 0;
}

/* ---- One call. ----------------------------------------------------------------------- */

struct call
{
  struct server *server;
  int fd;
  int64_t started;
  struct bx_audit_record rec;
  int64_t t0_ns;     /* when the connection was taken, for the metrics */
  int64_t decide_ns; /* to the decision; -1 until then */
  int64_t run_ns;    /* the module's run; -1 when nothing ran */
};

/* A call taken on FD from the peer UID, PID: its clocks started, its peer on its audit
 * record, counted. */
static void
call_begin (struct call *c, struct server *s, int fd, uid_t uid, pid_t pid)
{
  *c = (struct call){
    .server = s,
    .fd = fd,
    .started = bx_now_ms (),
    .rec = { .content_bytes = -1 },
    .t0_ns = bx_now_ns (),
    .decide_ns = -1,
    .run_ns = -1,
  };
  bx_audit_set_peer_ids (&c->rec, uid, pid);
  bx_metrics_call_started (s->ops->metrics);
}

static struct bx_log_context
log_context (const struct call *c)
{
  return (struct bx_log_context){
    .call = c->rec.call, .session = c->rec.session, .tool = c->rec.tool, .grant = (long)c->rec.grant
  };
}

/* The audit line of a call could not be written (fail closed): a result is withheld. */
static json_t *
audit_failed (struct call *c, json_t *frame)
{
  int e = errno;
  struct bx_log_context ctx = log_context (c);
  bx_metrics_audit_failed (c->server->ops->metrics);
  bx_log (c->server->ops->journal, LOG_CRIT, &ctx, "call %s: cannot write the audit log: %s",
          c->rec.call ? c->rec.call : "?", strerror (e));
  if (frame == NULL || c->rec.outcome == NULL || strcmp (c->rec.outcome, "result") != 0)
    return frame;
  json_t *failed
      = bx_msg_failed (json_string_value (json_object_get (frame, "id")), BX_AUDIT_WITHHELD);
  json_decref (frame);
  return failed;
}

/* An allowed call's line before it runs: false when it could not be written, and then the
 * call must not run. */
static bool
audit_running (struct call *c)
{
  c->rec.outcome = "running";
  c->rec.duration_ms = bx_now_ms () - c->started;
  if (bx_audit_write (c->server->audit, &c->rec) == 0)
    return true;
  int e = errno;
  struct bx_log_context ctx = log_context (c);
  bx_metrics_audit_failed (c->server->ops->metrics);
  bx_log (c->server->ops->journal, LOG_CRIT, &ctx,
          "call %s: cannot write the audit log, not running it: %s",
          c->rec.call ? c->rec.call : "?", strerror (e));
  return false;
}

/* Logs the call, then sends FRAME (taking it).  The audit line comes first: it exists even
 * when the client is gone, and once the answer is out the worker has nothing left to do but
 * close, so the client's next call finds it free again. */
static void
finish (struct call *c, json_t *frame, int64_t deadline)
{
  c->rec.duration_ms = bx_now_ms () - c->started;
  if (bx_audit_write (c->server->audit, &c->rec) < 0)
    frame = audit_failed (c, frame);
  if (c->decide_ns < 0)
    c->decide_ns = bx_now_ns () - c->t0_ns;
  bx_metrics_call_ended (c->server->ops->metrics, &c->rec, c->decide_ns, c->run_ns);
  cleanup_error bx_error err = NULL;
  if (frame != NULL && bx_frame_write (c->fd, frame, deadline, &err) < 0
      && bx_error_code (err) == BX_FRAME_TOO_LARGE)
    {
      /* The runner keeps results under the frame limit; this is the last line of defence. */
      struct bx_log_context ctx = log_context (c);
      bx_log (c->server->ops->journal, LOG_ERR, &ctx,
              "call %s: the answer is too large for a frame", c->rec.call ? c->rec.call : "?");
      json_t *failed = bx_msg_failed (json_string_value (json_object_get (frame, "id")),
                                      "the tool's output is too large to send");
      bx_error_free (&err);
      bx_frame_write (c->fd, failed, deadline, &err);
      json_decref (failed);
    }
  json_decref (frame);
}

/* Answers a request brokerd could not take with an `error` frame and logs it. */
static void
refuse (struct call *c, const char *id, const char *detail)
{
  c->rec.decision = "error";
  c->rec.outcome = "error";
  c->rec.reason = detail;
  finish (c, bx_msg_error (id, detail), bx_deadline_in (SHORT_WRITE_MS));
}

/* A request that names a tool we do not have, or arguments the parser refuses: the model
 * wrote them, so the answer is `denied` with the reason, which it can act on. */
static void
deny_request (struct call *c, const char *id, const char *reason)
{
  c->rec.decision = "error";
  c->rec.outcome = "denied";
  c->rec.reason = reason;
  finish (c, bx_msg_denied (id, reason), bx_deadline_in (c->server->config->request_timeout_ms));
}

/* The frame's "id" when it is a valid id, for answering a frame that could not be taken
 * apart; NULL otherwise.  Compared with its JSON length: "c1\u0000x" is not "c1". */
static const char *
usable_id (const json_t *frame)
{
  const json_t *j = json_object_get (frame, "id");
  const char *id = json_string_value (j);
  if (id == NULL || strlen (id) != json_string_length (j) || !bx_valid_id (id))
    return NULL;
  return id;
}

/* Reads and checks one request on C's connection: its frame (*FRAME, which the strings of
 * *ENV point into), the envelope and its ids.  False when it could not be taken; the client
 * has then been answered (or it left without a byte). */
static bool
read_request (struct call *c, json_t **frame, struct bx_envelope *env, const char **id_out)
{
  struct server *s = c->server;
  const struct bx_config *cfg = s->config;
  cleanup_error bx_error err = NULL;
  if (bx_frame_read (c->fd, bx_deadline_in (cfg->request_timeout_ms), frame, &err) < 0)
    {
      cleanup_free char *detail = NULL;
      switch (bx_error_code (err))
        {
        case BX_FRAME_CLOSED:
          /* Connected and left without a byte: a probe (another brokerd checking whether
           * this socket is live), not a call. */
          bx_metrics_call_left (s->ops->metrics);
          return false;
        case BX_FRAME_TIMED_OUT:
          detail = bx_xasprintf ("no complete request within %lld ms",
                                 (long long)cfg->request_timeout_ms);
          break;
        case BX_FRAME_TOO_LARGE:
          detail = bx_xasprintf ("bad frame: %s (at most %u bytes)", bx_error_msg (err),
                                 (unsigned)BX_FRAME_MAX);
          break;
        default:
          detail = bx_xasprintf ("bad frame: %s", bx_error_msg (err));
          break;
        }
      refuse (c, NULL, detail);
      return false;
    }

  /* The version first: a later version may shape its messages differently, and the client
   * deserves to hear that it speaks the wrong one rather than what failed to parse. */
  json_t *v = json_object_get (*frame, "v");
  if (json_is_integer (v) && json_integer_value (v) != BX_PROTOCOL_VERSION)
    {
      cleanup_free char *detail
          = bx_xasprintf ("unsupported protocol version %lld: this brokerd speaks %d",
                          (long long)json_integer_value (v), BX_PROTOCOL_VERSION);
      refuse (c, usable_id (*frame), detail);
      return false;
    }
  if (bx_envelope_parse (*frame, env, &err) < 0)
    {
      /* Answer with the id when there is a usable one, so the client can match it. */
      cleanup_free char *detail = bx_xasprintf ("bad message: %s", bx_error_msg (err));
      refuse (c, usable_id (*frame), detail);
      return false;
    }
  const char *id = bx_valid_id (env->id) ? env->id : NULL;
  const char *detail = NULL;
  if (id == NULL)
    detail = "bad id: expected 1 to 64 of [A-Za-z0-9_.-]";
  else if (env->type != BX_MSG_TOOL_REQUEST)
    detail = "unexpected message: expected a tool_request";
  else if (!env->final)
    detail = "a tool_request must be final";
  else if (!bx_valid_id (env->u.request.call))
    detail = "bad call id: expected 1 to 64 of [A-Za-z0-9_.-]";
  else if (!bx_valid_id (env->u.request.session))
    detail = "bad session id: expected 1 to 64 of [A-Za-z0-9_.-]";
  else if (strcmp (env->id, env->u.request.call) != 0)
    detail = "bad id: the frame's id must equal the request's call";
  if (detail != NULL)
    {
      refuse (c, id, detail);
      return false;
    }
  *id_out = id;
  return true;
}

/* Decides and runs the request ENV (answered with ID), and answers it. */
static void
run_request (struct call *c, const struct bx_envelope *env, const char *id)
{
  struct server *s = c->server;
  const struct bx_config *cfg = s->config;
  cleanup_error bx_error err = NULL;
  c->rec.call = env->u.request.call;
  c->rec.session = env->u.request.session;
  c->rec.tool = env->u.request.tool;
  enum bx_tool tool;
  if (bx_tool_from_name (env->u.request.tool, &tool) < 0)
    {
      /* The name as sent, made safe and cut: it reaches the model and the operator's
       * terminal, so no control byte of it may pass. */
      const char *name = env->u.request.tool;
      size_t len = strlen (name);
      cleanup_free char *quoted = bx_printable (name, len, BX_SHOWN_NAME_MAX);
      cleanup_free char *reason = bx_xasprintf (
          "unknown tool \"%s\": expected read_file, write_file, shell or http_fetch", quoted);
      /* The audit line gets the same cut (it is JSON, which escapes the rest): the whole
       * name could make it megabytes long. */
      cleanup_free char *shown = bx_xstrndup (name, bx_utf8_cut (name, len, BX_SHOWN_NAME_MAX));
      c->rec.tool = shown;
      deny_request (c, id, reason);
      return;
    }
  struct bx_tool_args args = { 0 };
  if (bx_tool_args_from_json (tool, env->u.request.arguments, &args, &err) < 0)
    {
      bx_tool_args_clear (&args);
      deny_request (c, id, bx_error_msg (err));
      return;
    }
  if (tool == BX_TOOL_WRITE_FILE && args.content != NULL)
    c->rec.content_bytes = (ssize_t)strlen (args.content);
  bx_audit_set_args (&c->rec, &args);

  /* The grants of the config serving now, held until the call ends (a reload may replace
   * them meanwhile; the decision points into these). */
  const struct bx_config *grants = NULL;
  struct bx_config_hold *hold = bx_live_config_get (s->ops->live, &grants);
  struct bx_decision d;
  bx_policy_decide (grants, &args, &d);
  c->decide_ns = bx_now_ns () - c->t0_ns;
  /* A call that waits for the owner leaves this worker: approvals.c answers it, writes its
   * audit lines and counts its end in the metrics.  Its decision points into GRANTS: a
   * reloaded config it was decided with stays held for the rest of the run (the first
   * config lives that long anyway). */
  if (bx_approvals_take (s->approvals, c->fd, id, env->u.request.call, env->u.request.session, &d,
                         c->started, c->decide_ns, c->rec.content_bytes))
    {
      if (grants == s->config)
        bx_live_config_put (s->ops->live, hold);
      bx_audit_record_clear (&c->rec);
      return;
    }
  c->rec.decision = d.verdict == BX_ALLOWED ? "allowed" : "denied";
  c->rec.grant = d.verdict == BX_ALLOWED ? (ssize_t)d.grant_index + 1 : 0;
  c->rec.reason = d.reason;
  struct bx_run_report report = { .outcome = "failed" };
  json_t *answer;
  if (d.verdict == BX_ALLOWED && !audit_running (c))
    answer = bx_msg_failed (id, BX_AUDIT_NOT_RUN);
  else
    {
      int64_t t = bx_now_ns ();
      answer = bx_runner_respond (s->module, &d, id, env->u.request.call, env->u.request.session,
                                  s->ops->canceller, c->fd, &report);
      if (d.verdict == BX_ALLOWED)
        c->run_ns = bx_now_ns () - t;
      if (report.problem != NULL)
        {
          struct bx_log_context ctx = log_context (c);
          bx_log (s->ops->journal, LOG_ERR, &ctx, "call %s: %s", c->rec.call, report.problem);
        }
    }
  c->rec.outcome = report.outcome;
  c->rec.egress = report.egress;
  c->rec.output_bytes = report.output_bytes;
  c->rec.truncated = report.truncated;
  /* Only a client that asked reads "refused": a 1.0 client refuses a field it does not know. */
  if (report.refused && env->u.request.refusals)
    bx_msg_mark_refused (answer);
  if (d.verdict == BX_ALLOWED)
    bx_audit_grant_reach (&c->rec, d.grant, d.args.tool);
  /* The client may read a large answer slowly; it gets a fresh deadline of its own. */
  finish (c, answer, bx_deadline_in (cfg->request_timeout_ms));
  bx_audit_record_clear (&c->rec);
  json_decref (report.egress);
  free (report.problem);
  bx_decision_clear (&d);
  bx_live_config_put (s->ops->live, hold);
}

/* One connection: its request read and checked, then decided and run. */
static void
serve_call (struct server *s, int fd, uid_t uid, pid_t pid)
{
  struct call c;
  call_begin (&c, s, fd, uid, pid);
  /* The envelope's strings point into the frame: it lives until the call is answered. */
  json_auto_t *frame = NULL;
  struct bx_envelope env;
  const char *id = NULL;
  if (read_request (&c, &frame, &env, &id))
    run_request (&c, &env, id);
}

/* Past max_connections: say so at once and close, so the client never hangs.  The client
 * writes its request right after connecting; the request is read and dropped for a moment
 * (BUSY_DRAIN_MS) before closing, so its write does not fail with EPIPE and it reads the
 * refusal instead of "cannot send".  That moment is spent by the drainer, not by this
 * worker: a client that stays silent would otherwise hold up accept() for all the others.
 * Closes FD. */
static void
refuse_busy (struct server *s, int fd, uid_t uid, pid_t pid)
{
  struct call c;
  call_begin (&c, s, fd, uid, pid);
  refuse (&c, NULL, busy_detail);
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
    bx_log (s->ops->journal, LOG_ERR, NULL, "cannot start a worker thread: %s", strerror (r));
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
  else if (s->workers <= s->config->max_connections)
    spawn_worker (s);
  /* else every worker serves: the next to finish its call leads. */
}

/* Waits on S's watch condition for a tick; S's lock is held. */
static void
watch_tick (struct server *s)
{
  struct timespec until;
  clock_gettime (CLOCK_MONOTONIC, &until);
  until.tv_nsec += WATCH_TICK_US * 1000L;
  if (until.tv_nsec >= 1000000000)
    {
      until.tv_sec++;
      until.tv_nsec -= 1000000000;
    }
  pthread_cond_timedwait (&s->watch, &s->lock, &until);
}

static void *
watcher_main (void *arg)
{
  struct server *s = arg;
  uint64_t seen = 0;
  bool looked = false;      /* SEEN is from the last look, at a serving leader */
  bool idle_looked = false; /* the last look found the leader not serving */
  pthread_mutex_lock (&s->lock);
  while (!s->stopping)
    {
      if (!s->led || !s->leader_serving)
        {
          looked = false;
          if (!idle_looked)
            {
              /* Look once more a tick later before sleeping without a deadline: on a busy
               * brokerd the leader is back serving by then, and a watcher that slept at
               * each gap between calls would be woken for each. */
              idle_looked = true;
              watch_tick (s);
              continue;
            }
          s->watcher_asleep = true;
          pthread_cond_wait (&s->watch, &s->lock);
          s->watcher_asleep = false;
          idle_looked = false;
          continue;
        }
      idle_looked = false;
      if (looked && s->taken == seen)
        {
          relieve_leader (s);
          looked = false;
          continue;
        }
      seen = s->taken;
      looked = true;
      watch_tick (s);
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
              bx_log (s->ops->journal, LOG_ERR, NULL, "cannot accept a connection: %s",
                      strerror (e));
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
          s->taken++;
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
      if (s->active >= s->config->max_connections
          || !bx_peers_take (&s->peers, uid, s->config->max_connections_per_uid))
        {
          pthread_mutex_unlock (&s->lock);
          refuse_busy (s, fd, uid, pid);
          pthread_mutex_lock (&s->lock);
        }
      else
        {
          s->active++;
          pthread_mutex_unlock (&s->lock);
          serve_call (s, fd, uid, pid);
          close (fd);
          pthread_mutex_lock (&s->lock);
          bx_peers_drop (&s->peers, uid);
          s->active--;
          pthread_cond_broadcast (&s->done);
        }
      if (s->led && s->leader_term == term)
        s->leader_serving = false;
    }
  s->workers--;
  pthread_cond_broadcast (&s->done);
  pthread_mutex_unlock (&s->lock);
  return NULL;
}

int
bx_server_run (const struct bx_config *cfg, struct bx_module *module, struct bx_audit *audit,
               struct bx_approvals *approvals, struct bx_ops *ops, int listen_fd, int signal_fd,
               int64_t *grace_end)
{
  /* On the heap: when calls outlive the grace period, their threads still point at it. */
  struct server *s = bx_xzalloc (sizeof *s);
  s->config = cfg;
  s->module = module;
  s->audit = audit;
  s->approvals = approvals;
  s->ops = ops;
  s->listen_fd = listen_fd;
  pthread_mutex_init (&s->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (&s->done, &ca);
  pthread_cond_init (&s->turn, &ca);
  pthread_cond_init (&s->watch, &ca);
  pthread_condattr_destroy (&ca);

  cleanup_error bx_error err = NULL;
  int r = bx_drainer_start (ops->journal, &s->drainer, &err);
  if (r == 0 && (r = pthread_create (&s->watcher, NULL, watcher_main, s)) != 0)
    {
      bx_drainer_stop (s->drainer);
      bx_error_set (&err, r, "cannot start the workers' watcher");
    }
  if (r != 0)
    {
      bx_log (ops->journal, LOG_CRIT, NULL, "%s; stopping", bx_error_msg (err));
      pthread_cond_destroy (&s->done);
      pthread_cond_destroy (&s->turn);
      pthread_cond_destroy (&s->watch);
      pthread_mutex_destroy (&s->lock);
      free (s);
      return -1;
    }
  pthread_mutex_lock (&s->lock);
  spawn_worker (s);
  pthread_mutex_unlock (&s->lock);

  /* This thread only waits for signals, and tells systemd the calls in flight when they
   * change (at most every STATUS_MS). */
  int signo = 0;
  unsigned told = 0;
  while (signo == 0)
    {
      struct pollfd p = { .fd = signal_fd, .events = POLLIN };
      if (poll (&p, 1, STATUS_MS) == 0)
        {
          unsigned now = bx_metrics_in_flight (ops->metrics);
          if (now != told)
            bx_notify_in_flight (now);
          told = now;
          continue;
        }
      struct signalfd_siginfo si;
      ssize_t n = read (signal_fd, &si, sizeof si);
      if (n < 0 && errno == EINTR)
        continue;
      if (n != (ssize_t)sizeof si)
        {
          bx_log (ops->journal, LOG_CRIT, NULL, "reading signals: %s",
                  n < 0 ? strerror (errno) : "short read");
          break;
        }
      signo = (int)si.ssi_signo;
      if (signo == SIGHUP)
        {
          bx_ops_reload (ops, audit);
          signo = 0;
        }
    }

  /* Stop accepting and remove the socket at once: a client now gets "connection refused"
   * rather than waiting, and a new brokerd started during the grace period keeps its
   * socket.  shutdown() wakes the workers waiting in accept(); the descriptor itself is
   * closed only when no worker can be using it. */
  bx_notify_stopping ();
  /* One grace period for every call, from now: approved calls share it (brokerd.c). */
  int64_t deadline = bx_deadline_in (cfg->grace_ms);
  *grace_end = deadline;
  pthread_mutex_lock (&s->lock);
  s->stopping = true;
  unsigned waiting = s->accepting;
  pthread_cond_broadcast (&s->turn);
  pthread_cond_signal (&s->watch);
  pthread_mutex_unlock (&s->lock);
  pthread_join (s->watcher, NULL);
  if (ops->socket_activated)
    /* systemd's socket stays open for the next start: shutting it down would break it for
     * good.  The workers in accept() are woken by connections of our own instead. */
    wake_acceptors (cfg->socket, waiting);
  else
    {
      shutdown (listen_fd, SHUT_RDWR);
      if (unlink (cfg->socket) < 0 && errno != ENOENT)
        bx_log (ops->journal, LOG_WARNING, NULL, "cannot remove %s: %s", cfg->socket,
                strerror (errno));
    }
  bx_log (ops->journal, signo ? LOG_NOTICE : LOG_CRIT, NULL, "%s: stopping",
          signo ? strsignal (signo) : "error");
  /* Calls waiting for their owner are answered now; no call is taken for approval again. */
  bx_approvals_stop_waiting (approvals);

  struct timespec until = bx_deadline_timespec (deadline);
  /* Running calls finish, the other workers leave; then nothing uses the server. */
  pthread_mutex_lock (&s->lock);
  while (s->active > 0 || s->workers > 0)
    if (pthread_cond_timedwait (&s->done, &s->lock, &until) == ETIMEDOUT)
      break;
  if (s->active > 0 && ops->canceller != NULL)
    {
      /* Past the grace period: the calls still running are cancelled, and their modules
       * get a moment to remove what they started. */
      bx_log (ops->journal, LOG_WARNING, NULL,
              "%u call(s) still running after %lld ms; cancelling them", s->active,
              (long long)cfg->grace_ms);
      pthread_mutex_unlock (&s->lock);
      bx_canceller_cancel_all (ops->canceller);
      pthread_mutex_lock (&s->lock);
      until.tv_sec += CANCEL_WAIT_MS / 1000;
      while (s->active > 0)
        if (pthread_cond_timedwait (&s->done, &s->lock, &until) == ETIMEDOUT)
          break;
    }
  unsigned left = s->active;
  bool clear = s->workers == 0;
  pthread_mutex_unlock (&s->lock);
  if (left > 0)
    {
      bx_log (ops->journal, LOG_ERR, NULL, "%u call(s) still running after %lld ms; exiting anyway",
              left, (long long)cfg->grace_ms);
      /* The threads still use the server: it is left allocated, and the process is about
       * to end. */
      return (int)left;
    }
  if (!clear)
    /* A worker has not left yet (it may have accepted a last connection as the grace
     * period ended): keep everything it could touch, the process ends first. */
    return 1;
  close (listen_fd);
  bx_drainer_stop (s->drainer);
  pthread_cond_destroy (&s->done);
  pthread_cond_destroy (&s->turn);
  pthread_cond_destroy (&s->watch);
  pthread_mutex_destroy (&s->lock);
  bx_peers_clear (&s->peers);
  free (s);
  return 0;
}
