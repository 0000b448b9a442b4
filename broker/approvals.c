/* SPDX-License-Identifier: Apache-2.0 */
/* Approvals: calls that wait for a person.  See approvals.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"
#include "bx/message.h"
#include "bx/printable.h"

#include "approvals.h"
#include "notify.h"
#include "ops.h"
#include "runner.h"

/* How long a pending frame or a refusal may take to write: the socket buffer of a fresh
 * connection holds it at once, so this only matters for a client that does not read. */
#define SHORT_WRITE_MS 200
/* How long cancelled approved calls get to end once the stop's deadline is over. */
#define CANCEL_WAIT_MS 2000
/* Events kept for the owners' `watch` connections; one that falls further behind skips. */
#define EVENT_RING 256
/* How much of each part a summary shows. */
#define SHOWN_FOLDER  120
#define SHOWN_SUBJECT 200
#define SHOWN_REASON  200

enum state
{
  WAITING,
  APPROVED,
  DECLINED,
  EXPIRED,
  CANCELLED, /* the client left */
  STOPPED,   /* brokerd stopped first */
};

static const char *const state_names[] = {
  [WAITING] = "pending", [APPROVED] = "approved",   [DECLINED] = "declined",
  [EXPIRED] = "expired", [CANCELLED] = "cancelled", [STOPPED] = "stopped",
};

struct entry
{
  struct entry *next;
  struct bx_approvals *owner;
  char approval[BX_APPROVAL_ID_LEN + 1];
  int fd;
  char *id, *call, *session;
  struct bx_decision decision;
  char *arguments; /* the canonical bytes: what the person approves is what runs */
  size_t arguments_len;
  char *summary;
  int64_t uid, pid;  /* the caller's, from SO_PEERCRED; -1 unknown */
  int64_t started;   /* the call's start, monotonic ms */
  int64_t decide_ns; /* from the connection to the decision, for the metrics */
  int64_t since;     /* when it began to wait, monotonic ms */
  int64_t answered;  /* when its wait ended (any way), monotonic ms */
  int64_t since_unix, expires_unix;
  int64_t expires; /* monotonic ms */
  ssize_t content_bytes;
  enum state state;
  int64_t approver_uid;
  char *reason; /* the owner's, made safe; NULL for none */
  bool half_closed;
  bool announced; /* the pending frame is out: until then the waiter leaves it alone */
};

struct bx_approvals
{
  const struct bx_config *config;
  struct bx_module *module;
  struct bx_audit *audit;
  struct bx_ops *ops; /* the metrics, where log lines go, the canceller */
  pthread_mutex_t lock;
  pthread_cond_t changed; /* an event, a run or an owner's connection ended */
  int wake;               /* eventfd: the waiter polls it */
  pthread_t waiter;
  struct entry *entries; /* waiting, or answered and not yet finished by the waiter */
  unsigned count;        /* entries plus those being handed over */
  unsigned running;      /* approved calls running */
  unsigned owners;       /* owners' connections open */
  bool stopping;
  bool finished;        /* stopping, and every waiting call answered: no more events */
  char **approved_keys; /* once_per_session: "GRANT TOOL SESSION", until restart */
  size_t n_approved_keys;
  char *events[EVENT_RING]; /* JSON texts; event number n is events[n % EVENT_RING] */
  uint64_t seq;             /* the number of the last event */
};

/* ---- Small parts. -------------------------------------------------------------------- */

static void
wake_waiter (struct bx_approvals *a)
{
  uint64_t one = 1;
  if (write (a->wake, &one, sizeof one) < 0)
    return; /* the counter is already non-zero: the waiter wakes anyway */
}

static int64_t
unix_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *
bx_approvals_timeout_text (int64_t ms)
{
  int64_t s = ms / 1000;
  if (s % 3600 == 0)
    return bx_xasprintf ("%lldh", (long long)(s / 3600));
  if (s % 60 == 0)
    return bx_xasprintf ("%lldm", (long long)(s / 60));
  return bx_xasprintf ("%llds", (long long)s);
}

static char *
shown (const char *s, size_t max)
{
  return bx_printable (s, strlen (s), max);
}

char *
bx_approvals_summary (const struct bx_decision *d)
{
  const struct bx_tool_args *args = &d->args;
  const struct bx_grant *g = d->grant;
  cleanup_free char *where = NULL;
  cleanup_free char *what = NULL;
  switch (args->tool)
    {
    case BX_TOOL_READ_FILE:
      where = shown (d->folder ? d->folder : "?", SHOWN_FOLDER);
      what = shown (args->path, SHOWN_SUBJECT);
      return bx_xasprintf ("read_file in %s: %s", where, what);
    case BX_TOOL_WRITE_FILE:
      where = shown (d->folder ? d->folder : "?", SHOWN_FOLDER);
      what = shown (args->path, SHOWN_SUBJECT);
      return bx_xasprintf ("write_file in %s: %s (%zu bytes)", where, what,
                           args->content ? strlen (args->content) : 0);
    case BX_TOOL_SHELL:
      {
        where = shown (g && g->n_paths ? g->paths[0] : "?", SHOWN_FOLDER);
        what = shown (args->command, SHOWN_SUBJECT);
        cleanup_free char *more
            = g && g->n_paths > 1 ? bx_xasprintf (" (+%zu more)", g->n_paths - 1) : bx_xstrdup ("");
        cleanup_free char *cwd = args->cwd ? shown (args->cwd, SHOWN_FOLDER) : NULL;
        return bx_xasprintf ("shell in %s%s: %s%s%s%s", where, more, what, cwd ? " (cwd " : "",
                             cwd ? cwd : "", cwd ? ")" : "");
      }
    case BX_TOOL_HTTP_FETCH:
      where = shown (d->host ? d->host : "?", SHOWN_FOLDER);
      what = shown (args->url, SHOWN_SUBJECT);
      return bx_xasprintf ("http_fetch from %s: %s", where, what);
    }
  return bx_xstrdup ("?");
}

/* 128 bits from the kernel's generator, as 32 lowercase hex digits. */
static int
new_approval_id (char out[BX_APPROVAL_ID_LEN + 1])
{
  unsigned char raw[BX_APPROVAL_ID_LEN / 2];
  size_t got = 0;
  while (got < sizeof raw)
    {
      ssize_t n = getrandom (raw + got, sizeof raw - got, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      got += (size_t)n;
    }
  for (size_t i = 0; i < sizeof raw; i++)
    snprintf (out + 2 * i, 3, "%02x", raw[i]);
  return 0;
}

/* Compares two ids in time independent of where they differ: an id must not be found
 * byte by byte. */
static bool
same_id (const char *a, const char *b)
{
  size_t n = strlen (b);
  if (n != BX_APPROVAL_ID_LEN)
    return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < BX_APPROVAL_ID_LEN; i++)
    diff |= (unsigned char)(a[i] ^ b[i]);
  return diff == 0;
}

static char *
session_key (const struct bx_decision *d, const char *session)
{
  return bx_xasprintf ("%zu %s %s", d->grant_index, bx_tool_name (d->args.tool), session);
}

/* Lock held. */
static bool
session_approved (struct bx_approvals *a, const char *key)
{
  for (size_t i = 0; i < a->n_approved_keys; i++)
    if (strcmp (a->approved_keys[i], key) == 0)
      return true;
  return false;
}

static json_t *
entry_json (const struct entry *e)
{
  json_t *o = json_pack (
      "{s:s, s:s, s:s, s:s, s:I, s:s, s:s%, s:o, s:o, s:I, s:I}", "approval", e->approval,
      "session", e->session, "call", e->call, "tool", bx_tool_name (e->decision.args.tool), "grant",
      (json_int_t)e->decision.grant_index + 1, "summary", e->summary, "arguments", e->arguments,
      e->arguments_len, "uid", e->uid >= 0 ? json_integer (e->uid) : json_null (), "pid",
      e->pid >= 0 ? json_integer (e->pid) : json_null (), "since", (json_int_t)e->since_unix,
      "expires", (json_int_t)e->expires_unix);
  if (o == NULL)
    abort ();
  return o;
}

/* Lock held.  Takes EVENT. */
static void
post_event (struct bx_approvals *a, json_t *event)
{
  char *text = json_dumps (event, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref (event);
  if (text == NULL)
    abort ();
  a->seq++;
  free (a->events[a->seq % EVENT_RING]);
  a->events[a->seq % EVENT_RING] = text;
  pthread_cond_broadcast (&a->changed);
}

static void
entry_free (struct entry *e)
{
  if (e == NULL)
    return;
  if (e->fd >= 0)
    close (e->fd);
  free (e->id);
  free (e->call);
  free (e->session);
  bx_decision_clear (&e->decision);
  free (e->arguments);
  free (e->summary);
  free (e->reason);
  free (e);
}

static struct bx_log_context
entry_context (const struct entry *e)
{
  return (struct bx_log_context){ .call = e->call,
                                  .session = e->session,
                                  .tool = bx_tool_name (e->decision.args.tool),
                                  .grant = (long)e->decision.grant_index + 1 };
}

/* An audit line that could not be written: counted and logged in the server's words (the
 * line before a call waits or runs: then it does not). */
static void
audit_failed (struct bx_approvals *a, const struct bx_log_context *ctx, const char *outcome)
{
  int e = errno;
  bx_metrics_audit_failed (a->ops->metrics);
  bool before = strcmp (outcome, "pending") == 0 || strcmp (outcome, "running") == 0;
  bx_log (a->ops->journal, LOG_CRIT, ctx, "call %s: cannot write the audit log%s: %s", ctx->call,
          before ? ", not running it" : "", strerror (e));
}

/* Writes ENTRY's audit line with OUTCOME; FINAL: it is the call's last line, and the call's
 * end is counted in the metrics (RUN_NS: how long the module ran, -1 when nothing ran).
 * 0, or -1 when the line could not be written (audit.h: fail closed). */
static int
audit_entry (struct bx_approvals *a, const struct entry *e, const char *outcome, const char *reason,
             const struct bx_run_report *report, bool final, int64_t run_ns)
{
  int64_t now = bx_now_ms ();
  /* The wait alone: a final line after the run must not count the run as waiting. */
  struct bx_audit_approval ap = {
    .id = e->approval,
    .state = state_names[e->state],
    .approver_uid = e->approver_uid,
    .waited_ms = e->state == WAITING ? 0 : e->answered - e->since,
  };
  struct bx_audit_record rec = {
    .session = e->session,
    .call = e->call,
    .tool = bx_tool_name (e->decision.args.tool),
    .grant = (ssize_t)e->decision.grant_index + 1,
    .decision = "allowed",
    .reason = reason,
    .outcome = outcome,
    .duration_ms = now - e->started,
    .output_bytes = report ? report->output_bytes : 0,
    .truncated = report ? report->truncated : false,
    .content_bytes = e->content_bytes,
    .approval = &ap,
    .uid = -1,
    .pid = -1,
    .egress = report ? report->egress : NULL,
  };
  if (e->fd >= 0)
    bx_audit_set_peer (&rec, e->fd);
  bx_audit_set_args (&rec, &e->decision.args);
  int r = bx_audit_write (a->audit, &rec);
  if (r < 0)
    {
      struct bx_log_context ctx = entry_context (e);
      audit_failed (a, &ctx, outcome);
    }
  if (final)
    bx_metrics_call_ended (a->ops->metrics, &rec, e->decide_ns, run_ns);
  bx_audit_record_clear (&rec);
  return r;
}

/* Sends FRAME (taking it); an answer over the frame limit becomes `failed`. */
static void
send_final (int fd, json_t *frame, const char *id, int64_t deadline)
{
  cleanup_error bx_error err = NULL;
  if (bx_frame_write (fd, frame, deadline, &err) < 0 && bx_error_code (err) == BX_FRAME_TOO_LARGE)
    {
      json_t *failed = bx_msg_failed (id, "the tool's output is too large to send");
      bx_error_free (&err);
      bx_frame_write (fd, failed, deadline, &err);
      json_decref (failed);
    }
  json_decref (frame);
}

/* ---- An approved call runs. ---------------------------------------------------------- */

static void *
run_main (void *arg)
{
  struct entry *e = arg;
  struct bx_approvals *a = e->owner;
  /* What runs is rebuilt from the decision; it must be the very bytes the person saw. */
  size_t len = 0;
  cleanup_free char *now = bx_tool_args_to_json (&e->decision.args, &len);
  struct bx_run_report report = { .outcome = "failed" };
  int64_t run_ns = -1;
  json_t *answer;
  if (now == NULL || len != e->arguments_len || memcmp (now, e->arguments, len) != 0)
    answer = bx_msg_failed (e->id, "brokerd could not run the approved call as approved");
  /* Like any allowed call: a line before it runs, or it does not run. */
  else if (audit_entry (a, e, "running", NULL, NULL, false, -1) < 0)
    answer = bx_msg_failed (e->id, BX_AUDIT_NOT_RUN);
  else
    {
      /* Cancelled like any call when its client hangs up, or when brokerd stops past its
       * grace period. */
      int64_t t0 = bx_now_ns ();
      answer = bx_runner_respond (a->module, &e->decision, e->id, e->call, e->session,
                                  a->ops->canceller, e->fd, &report);
      run_ns = bx_now_ns () - t0;
      if (report.problem != NULL)
        {
          struct bx_log_context ctx = entry_context (e);
          bx_log (a->ops->journal, LOG_ERR, &ctx, "call %s: %s", e->call, report.problem);
        }
    }
  if (audit_entry (a, e, report.outcome, NULL, &report, true, run_ns) < 0
      && strcmp (report.outcome, "result") == 0)
    {
      /* Fail closed: a result whose line is not in the log is withheld. */
      json_decref (answer);
      answer = bx_msg_failed (e->id, BX_AUDIT_WITHHELD);
    }
  json_decref (report.egress);
  free (report.problem);
  send_final (e->fd, answer, e->id, bx_deadline_in (a->config->request_timeout_ms));
  entry_free (e);
  pthread_mutex_lock (&a->lock);
  a->running--;
  pthread_cond_broadcast (&a->changed);
  pthread_mutex_unlock (&a->lock);
  return NULL;
}

/* ---- The waiter. --------------------------------------------------------------------- */

/* The final answer of an entry the waiter took off the list. */
static void
finish (struct bx_approvals *a, struct entry *e)
{
  if (e->state == APPROVED)
    {
      pthread_attr_t attr;
      pthread_attr_init (&attr);
      pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
      pthread_t t;
      pthread_mutex_lock (&a->lock);
      a->running++;
      pthread_mutex_unlock (&a->lock);
      int r = pthread_create (&t, &attr, run_main, e);
      pthread_attr_destroy (&attr);
      if (r == 0)
        return;
      pthread_mutex_lock (&a->lock);
      a->running--;
      pthread_mutex_unlock (&a->lock);
      struct bx_log_context ctx = entry_context (e);
      bx_log (a->ops->journal, LOG_ERR, &ctx, "cannot start a thread for an approved call: %s",
              strerror (r));
      const char *msg = "brokerd cannot run the approved call now";
      audit_entry (a, e, "failed", msg, NULL, true, -1);
      send_final (e->fd, bx_msg_failed (e->id, msg), e->id, bx_deadline_in (SHORT_WRITE_MS));
      entry_free (e);
      return;
    }
  cleanup_free char *reason = NULL;
  switch (e->state)
    {
    case DECLINED:
      reason = e->reason ? bx_xasprintf ("the owner declined: %s", e->reason)
                         : bx_xstrdup ("the owner declined");
      break;
    case EXPIRED:
      {
        cleanup_free char *t = bx_approvals_timeout_text (e->decision.grant->approval_timeout_ms);
        reason = bx_xasprintf ("the owner did not answer within the approval timeout (%s); "
                               "the call was not run",
                               t);
      }
      break;
    case STOPPED:
      reason = bx_xstrdup ("brokerd stopped before the owner answered; the call was not run");
      break;
    default:
      break;
    }
  if (reason == NULL)
    {
      /* The client left: nobody to answer. */
      audit_entry (a, e, "cancelled", "the client left before the owner answered", NULL, true, -1);
      entry_free (e);
      return;
    }
  audit_entry (a, e, "denied", reason, NULL, true, -1);
  send_final (e->fd, bx_msg_denied (e->id, reason), e->id, bx_deadline_in (SHORT_WRITE_MS));
  entry_free (e);
}

/* Lock held: ENTRY's answer is settled; the watchers hear it. */
static void
settle (struct bx_approvals *a, struct entry *e, enum state state)
{
  e->state = state;
  e->answered = bx_now_ms ();
  post_event (a, json_pack ("{s:s, s:s, s:s, s:o}", "type", "resolved", "approval", e->approval,
                            "state", state_names[state], "approver_uid",
                            e->approver_uid >= 0 ? json_integer (e->approver_uid) : json_null ()));
}

/* Lock held: what a waiting connection's poll said.  The client sends nothing after its
 * request; a hang-up is the client leaving, more bytes are a client that does not follow
 * the protocol, and both cancel the call.  A half-close (shutdown of the client's writing
 * side) is not leaving: it may still read the answer. */
static void
check_connection (struct bx_approvals *a, struct entry *e, short revents)
{
  if (e->state != WAITING)
    return;
  if (revents & (POLLHUP | POLLERR | POLLNVAL))
    {
      settle (a, e, CANCELLED);
      return;
    }
  if (revents & POLLIN)
    {
      char c;
      ssize_t n = recv (e->fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
      if (n == 0)
        e->half_closed = true;
      else if (n > 0 || (errno != EAGAIN && errno != EINTR))
        settle (a, e, CANCELLED);
    }
}

static void *
waiter_main (void *arg)
{
  struct bx_approvals *a = arg;
  struct pollfd *fds = bx_xzalloc ((BX_APPROVALS_MAX_PENDING + 1) * sizeof *fds);
  struct entry **polled = bx_xzalloc ((BX_APPROVALS_MAX_PENDING + 1) * sizeof *polled);
  pthread_mutex_lock (&a->lock);
  for (;;)
    {
      /* Settle what expired or what the stop ends; take the settled off the list. */
      int64_t now = bx_now_ms ();
      struct entry *done = NULL;
      struct entry **link = &a->entries;
      int64_t next = BX_NO_DEADLINE;
      size_t n = 1;
      while (*link != NULL)
        {
          struct entry *e = *link;
          if (!e->announced)
            {
              link = &e->next;
              continue;
            }
          if (e->state == WAITING && now >= e->expires)
            settle (a, e, EXPIRED);
          else if (e->state == WAITING && a->stopping)
            settle (a, e, STOPPED);
          if (e->state != WAITING)
            {
              *link = e->next;
              e->next = done;
              done = e;
              a->count--;
              continue;
            }
          if (e->expires < next)
            next = e->expires;
          fds[n] = (struct pollfd){ .fd = e->fd, .events = e->half_closed ? 0 : POLLIN };
          polled[n++] = e;
          link = &e->next;
        }
      bool leave = a->stopping && a->entries == NULL && a->count == 0;
      pthread_mutex_unlock (&a->lock);
      while (done != NULL)
        {
          struct entry *e = done;
          done = e->next;
          finish (a, e);
        }
      if (leave)
        {
          pthread_mutex_lock (&a->lock);
          a->finished = true;
          pthread_cond_broadcast (&a->changed);
          pthread_mutex_unlock (&a->lock);
          break;
        }
      fds[0] = (struct pollfd){ .fd = a->wake, .events = POLLIN };
      int timeout = next == BX_NO_DEADLINE ? -1 : bx_deadline_left (next) + 1;
      int r = poll (fds, n, timeout);
      pthread_mutex_lock (&a->lock);
      if (r < 0)
        continue;
      if (fds[0].revents & POLLIN)
        {
          uint64_t v;
          if (read (a->wake, &v, sizeof v) < 0)
            {
              /* EAGAIN: another read took it */
            }
        }
      for (size_t i = 1; i < n; i++)
        if (fds[i].revents != 0)
          check_connection (a, polled[i], fds[i].revents);
    }
  free (fds);
  free (polled);
  return NULL;
}

/* ---- Taking a call. ------------------------------------------------------------------ */

/* A call answered at once, before it waits: OUTCOME "denied" (a refusal, REASON) or
 * "failed" (REASON the message); its final audit line and its end in the metrics. */
static void
answer_now (struct bx_approvals *a, int fd, const char *id, const char *outcome, const char *reason,
            const struct bx_decision *d, const char *call, const char *session, int64_t started,
            int64_t decide_ns, ssize_t content_bytes)
{
  struct bx_audit_record rec = {
    .session = session,
    .call = call,
    .tool = bx_tool_name (d->args.tool),
    .grant = (ssize_t)d->grant_index + 1,
    .decision = "allowed",
    .reason = reason,
    .outcome = outcome,
    .duration_ms = bx_now_ms () - started,
    .content_bytes = content_bytes,
    .uid = -1,
    .pid = -1,
  };
  bx_audit_set_peer (&rec, fd);
  bx_audit_set_args (&rec, &d->args);
  if (bx_audit_write (a->audit, &rec) < 0)
    {
      struct bx_log_context ctx
          = { .call = call, .session = session, .tool = rec.tool, .grant = (long)rec.grant };
      audit_failed (a, &ctx, outcome);
    }
  bx_metrics_call_ended (a->ops->metrics, &rec, decide_ns, -1);
  bx_audit_record_clear (&rec);
  json_t *frame
      = strcmp (outcome, "failed") == 0 ? bx_msg_failed (id, reason) : bx_msg_denied (id, reason);
  send_final (fd, frame, id, bx_deadline_in (SHORT_WRITE_MS));
}

bool
bx_approvals_take (struct bx_approvals *a, int fd, const char *id, const char *call,
                   const char *session, struct bx_decision *d, int64_t started, int64_t decide_ns,
                   ssize_t content_bytes)
{
  if (a == NULL || d->verdict != BX_ALLOWED || d->grant == NULL
      || d->grant->approval == BX_APPROVAL_NEVER)
    return false;
  cleanup_free char *key = session_key (d, session);
  const char *refusal = NULL;
  pthread_mutex_lock (&a->lock);
  if (d->grant->approval == BX_APPROVAL_ONCE_PER_SESSION && session_approved (a, key))
    {
      pthread_mutex_unlock (&a->lock);
      return false;
    }
  if (a->stopping)
    refusal = "brokerd is stopping; the call was not run";
  else if (a->count >= BX_APPROVALS_MAX_PENDING)
    refusal = "too many calls are waiting for the owner's approval; the call was not run";
  else
    a->count++;
  pthread_mutex_unlock (&a->lock);
  if (refusal != NULL)
    {
      answer_now (a, fd, id, "denied", refusal, d, call, session, started, decide_ns,
                  content_bytes);
      bx_decision_clear (d);
      return true;
    }

  struct entry *e = bx_xzalloc (sizeof *e);
  e->owner = a;
  e->fd = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  e->id = bx_xstrdup (id);
  e->call = bx_xstrdup (call);
  e->session = bx_xstrdup (session);
  e->decision = *d;
  memset (d, 0, sizeof *d);
  e->arguments = bx_tool_args_to_json (&e->decision.args, &e->arguments_len);
  e->summary = bx_approvals_summary (&e->decision);
  e->uid = e->pid = e->approver_uid = -1;
  e->started = started;
  e->decide_ns = decide_ns;
  e->since = bx_now_ms ();
  e->since_unix = unix_now_ms ();
  e->expires = e->since + e->decision.grant->approval_timeout_ms;
  e->expires_unix = e->since_unix + e->decision.grant->approval_timeout_ms;
  e->content_bytes = content_bytes;
  e->state = WAITING;
  struct ucred cred;
  socklen_t cl = sizeof cred;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0)
    {
      e->uid = cred.uid;
      e->pid = cred.pid;
    }
  const char *trouble = NULL;
  if (e->fd < 0)
    trouble = "brokerd is out of descriptors; the call was not run";
  else if (e->arguments == NULL || new_approval_id (e->approval) < 0)
    trouble = "brokerd cannot ask for approval now; the call was not run";
  /* The line that says the call waits comes first; without it, it does not wait. */
  const char *outcome = "denied";
  if (trouble == NULL && audit_entry (a, e, "pending", NULL, NULL, false, -1) < 0)
    {
      outcome = "failed";
      trouble = BX_AUDIT_NOT_RUN;
    }
  if (trouble != NULL)
    {
      answer_now (a, fd, id, outcome, trouble, &e->decision, call, session, started, decide_ns,
                  content_bytes);
      entry_free (e);
      pthread_mutex_lock (&a->lock);
      a->count--;
      pthread_mutex_unlock (&a->lock);
      wake_waiter (a);
      return true;
    }

  /* The call is listed (owners may answer at once), but the waiter leaves it alone until its
   * pending frame is out: the final answer always comes second. */
  pthread_mutex_lock (&a->lock);
  e->next = a->entries;
  a->entries = e;
  json_t *ev = entry_json (e);
  json_object_set_new (ev, "type", json_string ("pending"));
  post_event (a, ev);
  pthread_mutex_unlock (&a->lock);

  cleanup_free char *shown_text = bx_xasprintf ("%s: %s", e->approval, e->summary);
  json_t *pending = bx_msg_pending_approval (id, shown_text, e->expires_unix);
  cleanup_error bx_error err = NULL;
  int w = bx_frame_write (e->fd, pending, bx_deadline_in (SHORT_WRITE_MS), &err);
  json_decref (pending);
  pthread_mutex_lock (&a->lock);
  e->announced = true;
  if (w < 0 && e->state == WAITING)
    /* The client is gone already (or does not read): logged as cancelled. */
    settle (a, e, CANCELLED);
  pthread_mutex_unlock (&a->lock);
  wake_waiter (a);
  return true;
}

/* ---- The owners' side. --------------------------------------------------------------- */

json_t *
bx_approvals_list (struct bx_approvals *a, uint64_t *seq)
{
  json_t *list = json_array ();
  pthread_mutex_lock (&a->lock);
  int64_t now = bx_now_ms ();
  for (const struct entry *e = a->entries; e != NULL; e = e->next)
    if (e->state == WAITING && now < e->expires)
      json_array_append_new (list, entry_json (e));
  if (seq != NULL)
    *seq = a->seq;
  pthread_mutex_unlock (&a->lock);
  return list;
}

int
bx_approvals_answer (struct bx_approvals *a, const char *approval, bool approve, const char *reason,
                     uid_t approver, const char **why)
{
  pthread_mutex_lock (&a->lock);
  int64_t now = bx_now_ms ();
  struct entry *found = NULL;
  for (struct entry *e = a->entries; e != NULL; e = e->next)
    if (same_id (e->approval, approval))
      found = e;
  if (found == NULL || found->state != WAITING || now >= found->expires)
    {
      pthread_mutex_unlock (&a->lock);
      *why = "no call waits for approval with that id";
      return -1;
    }
  found->approver_uid = approver;
  if (!approve && reason != NULL && *reason != '\0')
    found->reason = bx_printable (reason, strlen (reason), SHOWN_REASON);
  if (approve && found->decision.grant->approval == BX_APPROVAL_ONCE_PER_SESSION)
    {
      char *key = session_key (&found->decision, found->session);
      if (session_approved (a, key))
        free (key);
      else
        {
          a->approved_keys
              = bx_xrealloc (a->approved_keys, (a->n_approved_keys + 1) * sizeof (char *));
          a->approved_keys[a->n_approved_keys++] = key;
        }
    }
  settle (a, found, approve ? APPROVED : DECLINED);
  pthread_mutex_unlock (&a->lock);
  wake_waiter (a);
  return 0;
}

json_t *
bx_approvals_events (struct bx_approvals *a, uint64_t *seq, int timeout_ms)
{
  struct timespec until = bx_deadline_timespec (bx_deadline_in (timeout_ms));
  pthread_mutex_lock (&a->lock);
  while (!a->finished && a->seq == *seq)
    if (pthread_cond_timedwait (&a->changed, &a->lock, &until) == ETIMEDOUT)
      break;
  /* The last events (each waiting call stopped) still go out before the end. */
  if (a->finished && a->seq == *seq)
    {
      pthread_mutex_unlock (&a->lock);
      return NULL;
    }
  json_t *list = json_array ();
  uint64_t from = *seq + 1;
  if (a->seq >= EVENT_RING && from <= a->seq - EVENT_RING)
    from = a->seq - EVENT_RING + 1; /* fell behind: what is gone is gone */
  for (uint64_t n = from; n <= a->seq; n++)
    {
      json_t *ev = json_loads (a->events[n % EVENT_RING], 0, NULL);
      if (ev != NULL)
        json_array_append_new (list, ev);
    }
  *seq = a->seq;
  pthread_mutex_unlock (&a->lock);
  return list;
}

bool
bx_approvals_enter (struct bx_approvals *a)
{
  pthread_mutex_lock (&a->lock);
  bool ok = !a->stopping;
  if (ok)
    a->owners++;
  pthread_mutex_unlock (&a->lock);
  return ok;
}

void
bx_approvals_leave (struct bx_approvals *a)
{
  pthread_mutex_lock (&a->lock);
  a->owners--;
  pthread_cond_broadcast (&a->changed);
  pthread_mutex_unlock (&a->lock);
}

/* ---- Life. --------------------------------------------------------------------------- */

int
bx_approvals_start (const struct bx_config *config, struct bx_module *module,
                    struct bx_audit *audit, struct bx_ops *ops, struct bx_approvals **out,
                    bx_error *err)
{
  struct bx_approvals *a = bx_xzalloc (sizeof *a);
  a->config = config;
  a->module = module;
  a->audit = audit;
  a->ops = ops;
  a->wake = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (a->wake < 0)
    {
      int e = errno;
      free (a);
      return bx_error_set (err, e, "approvals: cannot make an eventfd");
    }
  pthread_mutex_init (&a->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (&a->changed, &ca);
  pthread_condattr_destroy (&ca);
  int r = pthread_create (&a->waiter, NULL, waiter_main, a);
  if (r != 0)
    {
      close (a->wake);
      pthread_cond_destroy (&a->changed);
      pthread_mutex_destroy (&a->lock);
      free (a);
      return bx_error_set (err, r, "approvals: cannot start the waiter thread");
    }
  *out = a;
  return 0;
}

void
bx_approvals_stop_waiting (struct bx_approvals *a)
{
  if (a == NULL)
    return;
  pthread_mutex_lock (&a->lock);
  bool first = !a->stopping;
  a->stopping = true;
  pthread_cond_broadcast (&a->changed);
  pthread_mutex_unlock (&a->lock);
  if (!first)
    return;
  wake_waiter (a);
  /* The waiter answers every waiting call, then leaves. */
  pthread_join (a->waiter, NULL);
}

unsigned
bx_approvals_stop (struct bx_approvals *a, int64_t deadline)
{
  if (a == NULL)
    return 0;
  bx_approvals_stop_waiting (a);

  struct timespec until = bx_deadline_timespec (deadline);
  pthread_mutex_lock (&a->lock);
  while (a->running > 0 || a->owners > 0)
    if (pthread_cond_timedwait (&a->changed, &a->lock, &until) == ETIMEDOUT)
      break;
  if (a->running > 0 && a->ops->canceller != NULL)
    {
      /* Past the deadline: approved calls still running are cancelled like the others, and
       * their modules get a moment to remove what they started. */
      bx_log (a->ops->journal, LOG_WARNING, NULL,
              "%u approved call(s) still running; cancelling them", a->running);
      pthread_mutex_unlock (&a->lock);
      bx_canceller_cancel_all (a->ops->canceller);
      pthread_mutex_lock (&a->lock);
      until.tv_sec += CANCEL_WAIT_MS / 1000;
      while (a->running > 0)
        if (pthread_cond_timedwait (&a->changed, &a->lock, &until) == ETIMEDOUT)
          break;
    }
  unsigned left = a->running + a->owners;
  pthread_mutex_unlock (&a->lock);
  return left;
}

void
bx_approvals_free (struct bx_approvals *a)
{
  if (a == NULL)
    return;
  close (a->wake);
  for (size_t i = 0; i < a->n_approved_keys; i++)
    free (a->approved_keys[i]);
  free (a->approved_keys);
  for (size_t i = 0; i < EVENT_RING; i++)
    free (a->events[i]);
  pthread_cond_destroy (&a->changed);
  pthread_mutex_destroy (&a->lock);
  free (a);
}
