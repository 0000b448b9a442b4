/* SPDX-License-Identifier: Apache-2.0 */
/* Approvals: calls that wait for a person.  See approvals.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
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
#include "call.h"
#include "notify.h"
#include "daemon.h"
#include "loop.h"
#include "runner.h"

/* How long a pending frame or a refusal may take to write: the socket buffer of a fresh
 * connection holds it at once, so this only matters for a client that does not read. */
#define SHORT_WRITE_MS 200
/* How long cancelled approved calls get to end once the stop's deadline is over. */
#define CANCEL_WAIT_MS 2000
/* Events kept for the owners' `watch` connections; one that falls further behind skips. */
#define EVENT_RING 256
/* How many bytes each part of a summary takes once made safe, "..." included; and an
 * owner's reason, as the model reads it. */
#define SHOWN_FOLDER  120
#define SHOWN_SUBJECT 200
#define SHOWN_REASON  200

struct entry
{
  struct entry *next;
  struct bx_approvals *owner;
  /* The call, parked: its connection, request, decision and audit record. */
  struct bx_call *parked;
  char approval[BX_APPROVAL_ID_LEN + 1];
  char *arguments; /* the canonical bytes: what the person approves is what runs */
  size_t arguments_len;
  char *summary;
  char *grant_text;    /* the grant's canonical text (bx_grant_canonical) */
  uint64_t generation; /* the approvals' generation when it began to wait */
  int64_t since;       /* when it began to wait, monotonic ms */
  int64_t answered;    /* when its wait ended (any way), monotonic ms */
  int64_t since_unix, expires_unix;
  int64_t expires; /* monotonic ms */
  enum bx_approval_state state;
  int64_t approver_uid;
  char *reason; /* the owner's, made safe; NULL for none */
  bool half_closed;
  bool announced; /* the pending frame is out: until then the waiter leaves it alone */
  /* What the same call asked again must match to take this approval over once its client
   * left (retry_key); NULL when it cannot be (the caller's uid is unknown). */
  char *retry_key;
  bool left;     /* its client left; the waiter ends its call (a final line) */
  bool detached; /* and that is done: the approval waits for the same call asked again */
  /* Its connection as a source of brokerd's loop, while it is watched. */
  sd_event_source *watch;
  int watched_fd;
};

/* A once_per_session approval, kept until brokerd stops or a reload changes its grant. */
struct remembered
{
  char *key;   /* remember_key: the caller's uid, the session, the tool, where, the grant */
  char *grant; /* the grant's canonical text, to forget it when the grant changes */
  char approval[BX_APPROVAL_ID_LEN + 1];
  int64_t approver_uid;
  int64_t approved_unix; /* ms */
};

/* Calls of one uid waiting (or being handed over to wait). */
struct uid_waiting
{
  int64_t uid;
  unsigned n;
};

struct bx_approvals
{
  struct brokerd *brokerd; /* where log lines go, the canceller, the request timeout */
  pthread_mutex_t lock;
  pthread_cond_t changed; /* an event, a run or an owner's connection ended */
  /* The waiter is brokerd's loop: an eventfd that other threads write when something
   * changed, each waiting connection, and a timer for the next expiry are its sources. */
  int wake;
  sd_event_source *wake_source;
  sd_event_source *timer;
  struct entry *entries; /* waiting, or answered and not yet finished by the waiter */
  unsigned count;        /* entries plus those being handed over */
  unsigned running;      /* approved calls running */
  unsigned owners;       /* owners' connections open */
  bool stopping;
  bool finished;                 /* stopping, and every waiting call answered: no more events */
  struct remembered *remembered; /* once_per_session approvals */
  size_t n_remembered;
  /* Counts reloads that forgot approvals: a call that began to wait before one is not
   * remembered when approved after it (its grant may be gone). */
  uint64_t generation;
  struct uid_waiting by_uid[BX_APPROVALS_MAX_PENDING]; /* the uids with calls counted in COUNT */
  size_t n_uids;
  char *events[EVENT_RING]; /* JSON texts; event number n is events[n % EVENT_RING] */
  uint64_t seq;             /* the number of the last event */
  /* The owners' watchers (admin.c), told on the loop after events or the end. */
  void (*notify) (void *ctx);
  void *notify_ctx;
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

/* One part of a summary: printable ASCII only (a person must read exactly what runs: no
 * bidirectional controls, invisible or look-alike characters), at most MAX bytes with its
 * "..." when cut; *CUT is set when it was. */
/* An mcp_call's SERVER.TOOL, from toolkit's input (brokerd's own JSON).  Newly allocated. */
static char *
mcp_tool_name (const struct bx_tool_args *args)
{
  json_t *req = args->request ? json_loads (args->request, 0, NULL) : NULL;
  const char *tool = json_string_value (json_object_get (json_object_get (req, "params"), "name"));
  char *name = bx_xasprintf ("%s.%s", args->server ? args->server : "?", tool ? tool : "?");
  json_decref (req);
  return name;
}

/* An mcp_call's arguments for the tool, as compact JSON.  Newly allocated. */
static char *
mcp_arguments_text (const struct bx_tool_args *args)
{
  json_t *req = args->request ? json_loads (args->request, 0, NULL) : NULL;
  json_t *arguments = json_object_get (json_object_get (req, "params"), "arguments");
  char *text = arguments ? json_dumps (arguments, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  json_decref (req);
  if (text == NULL)
    return bx_xstrdup ("{}");
  char *copy = bx_xstrdup (text);
  free (text);
  return copy;
}

static char *
shown (const char *s, size_t max, bool *cut)
{
  bool this_cut = false;
  char *t = bx_printable_fit (s, strlen (s), max, true, &this_cut);
  *cut = *cut || this_cut;
  return t;
}

/* The summary from its parts: the subject (path, command or URL) last, so that its cut is
 * where the eye ends; when an earlier part was cut and the subject was not, "..." is added
 * at the end all the same.  Newly allocated. */
static char *
summary_text (const char *head, bool head_cut, const char *subject, bool subject_cut)
{
  return bx_xasprintf ("%s: %s%s", head, subject, head_cut && !subject_cut ? "..." : "");
}

char *
bx_approvals_summary (const struct bx_decision *d)
{
  const struct bx_tool_args *args = &d->args;
  const struct bx_grant *g = d->grant;
  bool head_cut = false, subject_cut = false;
  cleanup_free char *where = NULL;
  cleanup_free char *what = NULL;
  cleanup_free char *head = NULL;
  switch (args->tool)
    {
    case BX_TOOL_READ_FILE:
      where = shown (d->folder ? d->folder : "?", SHOWN_FOLDER, &head_cut);
      what = shown (args->path, SHOWN_SUBJECT, &subject_cut);
      head = bx_xasprintf ("read_file in %s", where);
      break;
    case BX_TOOL_WRITE_FILE:
      where = shown (d->folder ? d->folder : "?", SHOWN_FOLDER, &head_cut);
      what = shown (args->path, SHOWN_SUBJECT, &subject_cut);
      head = bx_xasprintf ("write_file in %s (%zu bytes)", where,
                           args->content ? strlen (args->content) : 0);
      break;
    case BX_TOOL_SHELL:
      {
        where = shown (g && g->n_paths ? g->paths[0] : "?", SHOWN_FOLDER, &head_cut);
        what = shown (args->command, SHOWN_SUBJECT, &subject_cut);
        cleanup_free char *more
            = g && g->n_paths > 1 ? bx_xasprintf (" (+%zu more)", g->n_paths - 1) : bx_xstrdup ("");
        cleanup_free char *cwd = args->cwd ? shown (args->cwd, SHOWN_FOLDER, &head_cut) : NULL;
        head = bx_xasprintf ("shell in %s%s%s%s", where, more, cwd ? ", cwd " : "", cwd ? cwd : "");
      }
      break;
    case BX_TOOL_HTTP_FETCH:
      where = shown (d->host ? d->host : "?", SHOWN_FOLDER, &head_cut);
      what = shown (args->url, SHOWN_SUBJECT, &subject_cut);
      head = bx_xasprintf ("http_fetch from %s", where);
      break;
    case BX_TOOL_MCP_CALL:
      {
        /* The server's tool and the arguments the model chose, not toolkit's whole input:
         * that starts with the owner's own command, which would crowd them out. */
        cleanup_free char *tool = mcp_tool_name (args);
        cleanup_free char *arguments = mcp_arguments_text (args);
        where = shown (tool, SHOWN_FOLDER, &head_cut);
        what = shown (arguments, SHOWN_SUBJECT, &subject_cut);
        head = bx_xasprintf ("MCP tool %s", where);
      }
      break;
    }
  if (head == NULL)
    return bx_xstrdup ("?");
  return summary_text (head, head_cut, what, subject_cut);
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

/* What a once_per_session approval covers: the caller's UID (never a session id alone,
 * which any client may send), the SESSION, the tool, the folder (read_file, write_file),
 * host and port (http_fetch) or server's tool (an MCP server's, SERVER.TOOL) the owner saw, and the
 * grant by its content GRANT_TEXT, not its place in the file.  NULL when the uid is unknown: such a
 * call is always asked. */
static char *
remember_key (const struct bx_decision *d, int64_t uid, const char *session, const char *grant_text)
{
  if (uid < 0)
    return NULL;
  cleanup_free char *where
      = d->args.tool == BX_TOOL_HTTP_FETCH && d->host ? bx_xasprintf ("%s:%u", d->host, d->port)
        : d->args.tool == BX_TOOL_MCP_CALL
            ? mcp_tool_name (&d->args)
            : bx_xstrdup (d->args.tool != BX_TOOL_SHELL && d->folder ? d->folder : "");
  /* Lengths before texts: no two keys read the same. */
  return bx_xasprintf ("%lld %zu:%s %s %zu:%s %s", (long long)uid, strlen (session), session,
                       bx_tool_name (d->args.tool), strlen (where), where, grant_text);
}

/* What a call asked again must match to take over the approval of one whose client left
 * (docs/config.md, "Approvals"): the caller's UID, the SESSION, the canonical ARGUMENTS
 * (the tool, and the folder or cwd and subject exactly as they would run) and the grant by
 * its content GRANT_TEXT.  NULL when the uid is unknown. */
static char *
retry_key (int64_t uid, const char *session, const char *tool, const char *arguments,
           size_t arguments_len, const char *grant_text)
{
  if (uid < 0 || arguments == NULL)
    return NULL;
  /* Lengths before texts: no two keys read the same. */
  return bx_xasprintf ("%lld %zu:%s %s %zu:%.*s %s", (long long)uid, strlen (session), session,
                       tool, arguments_len, (int)arguments_len, arguments, grant_text);
}

/* Lock held: the detached approval KEY matches, still waiting or approved and not yet
 * expired; NULL when there is none. */
static struct entry *
find_detached (struct bx_approvals *a, const char *key, int64_t now)
{
  for (struct entry *e = a->entries; key != NULL && e != NULL; e = e->next)
    if (e->detached && e->retry_key != NULL && now < e->expires
        && (e->state == BX_APPROVAL_PENDING || e->state == BX_APPROVAL_APPROVED)
        && strcmp (e->retry_key, key) == 0)
      return e;
  return NULL;
}

/* Lock held. */
static const struct remembered *
find_remembered (struct bx_approvals *a, const char *key)
{
  for (size_t i = 0; key != NULL && i < a->n_remembered; i++)
    if (strcmp (a->remembered[i].key, key) == 0)
      return &a->remembered[i];
  return NULL;
}

/* Lock held: counts one more call of UID waiting, unless UID has its share already. */
static bool
uid_take (struct bx_approvals *a, int64_t uid)
{
  for (size_t i = 0; i < a->n_uids; i++)
    if (a->by_uid[i].uid == uid)
      {
        if (a->by_uid[i].n >= BX_APPROVALS_MAX_PENDING_PER_UID)
          return false;
        a->by_uid[i].n++;
        return true;
      }
  /* COUNT < BX_APPROVALS_MAX_PENDING was checked first: there is a free row. */
  a->by_uid[a->n_uids++] = (struct uid_waiting){ .uid = uid, .n = 1 };
  return true;
}

/* Lock held: one call of UID waits no more. */
static void
uid_give (struct bx_approvals *a, int64_t uid)
{
  for (size_t i = 0; i < a->n_uids; i++)
    if (a->by_uid[i].uid == uid)
      {
        if (--a->by_uid[i].n == 0)
          a->by_uid[i] = a->by_uid[--a->n_uids];
        return;
      }
}

static json_t *
entry_json (const struct entry *e)
{
  const struct bx_call *c = e->parked;
  json_t *o = json_pack ("{s:s, s:s, s:s, s:s, s:I, s:s, s:s%, s:o, s:o, s:I, s:I}", "approval",
                         e->approval, "session", c->rec.session, "call", c->rec.call, "tool",
                         c->rec.tool, "grant", (json_int_t)c->decision.grant_index + 1, "summary",
                         e->summary, "arguments", e->arguments, e->arguments_len, "uid",
                         c->uid >= 0 ? json_integer (c->uid) : json_null (), "pid",
                         c->pid >= 0 ? json_integer (c->pid) : json_null (), "since",
                         (json_int_t)e->since_unix, "expires", (json_int_t)e->expires_unix);
  if (o == NULL)
    abort ();
  json_object_set_new (o, "client_left", json_boolean (e->detached));
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
  /* The loop tells the watchers (tell_watchers), whichever thread posted. */
  wake_waiter (a);
}

static void
entry_free (struct entry *e)
{
  if (e == NULL)
    return;
  bx_call_free (e->parked);
  free (e->arguments);
  free (e->summary);
  free (e->grant_text);
  free (e->reason);
  free (e->retry_key);
  free (e);
}

/* The approval ENTRY's call's audit lines carry, as it stands now.  The wait alone: a final
 * line after the run must not count the run as waiting. */
static void
entry_approval (struct entry *e)
{
  struct bx_call *c = e->parked;
  c->approval = (struct bx_audit_approval){
    .id = e->approval,
    .state = e->state,
    .approver_uid = e->approver_uid,
    .waited_ms = e->state == BX_APPROVAL_PENDING ? 0 : e->answered - e->since,
  };
  c->rec.approval = &c->approval;
}

/* Ends ENTRY's call without running it (call.h, bx_call_end) and frees ENTRY. */
static void
entry_end (struct entry *e, enum bx_outcome outcome, const char *reason)
{
  entry_approval (e);
  bx_call_end (e->parked, outcome, reason, SHORT_WRITE_MS);
  bx_call_finish (e->parked);
  entry_free (e);
}

/* ---- An approved call runs. ---------------------------------------------------------- */

static void *
run_main (void *arg)
{
  struct entry *e = arg;
  struct bx_approvals *a = e->owner;
  struct bx_call *c = e->parked;
  /* What runs is rebuilt from the decision; it must be the very bytes the person saw. */
  size_t len = 0;
  cleanup_free char *now = bx_decision_arguments (&c->decision, &len);
  entry_approval (e);
  if (now == NULL || len != e->arguments_len || memcmp (now, e->arguments, len) != 0)
    bx_call_end (c, BX_OUTCOME_FAILED, "brokerd could not run the approved call as approved",
                 a->brokerd->config->request_timeout_ms);
  else
    /* Like any allowed call: a line before it runs, or it does not run. */
    bx_call_run (c);
  bx_call_finish (c);
  entry_free (e);
  pthread_mutex_lock (&a->lock);
  a->running--;
  pthread_cond_broadcast (&a->changed);
  if (a->stopping)
    bx_brokerd_wake (a->brokerd);
  pthread_mutex_unlock (&a->lock);
  return NULL;
}

/* ---- The waiter. --------------------------------------------------------------------- */

/* The final answer of an entry the waiter took off the list. */
static void
finish (struct bx_approvals *a, struct entry *e)
{
  if (e->detached)
    {
      /* Its call ended when its client left, and nobody asked again in time: nothing runs
       * and nobody is left to answer. */
      entry_free (e);
      return;
    }
  if (e->state == BX_APPROVAL_APPROVED)
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
      const struct bx_audit_record *rec = &e->parked->rec;
      struct bx_log_context ctx = {
        .call = rec->call, .session = rec->session, .tool = rec->tool, .grant = (long)rec->grant
      };
      bx_log (LOG_ERR, &ctx, "cannot start a thread for an approved call: %s", strerror (r));
      entry_end (e, BX_OUTCOME_FAILED, "brokerd cannot run the approved call now");
      return;
    }
  cleanup_free char *reason = NULL;
  switch (e->state)
    {
    case BX_APPROVAL_DECLINED:
      reason = e->reason ? bx_xasprintf ("the owner declined: %s", e->reason)
                         : bx_xstrdup ("the owner declined");
      break;
    case BX_APPROVAL_EXPIRED:
      {
        cleanup_free char *t
            = bx_approvals_timeout_text (e->parked->decision.grant->approval_timeout_ms);
        reason = bx_xasprintf ("the owner did not answer within the approval timeout (%s); "
                               "the call was not run",
                               t);
      }
      break;
    case BX_APPROVAL_STOPPED:
      reason = bx_xstrdup ("brokerd stopped before the owner answered; the call was not run");
      break;
    default:
      break;
    }
  if (reason == NULL)
    {
      /* The client left: nobody to answer. */
      entry_end (e, BX_OUTCOME_CANCELLED, "the client left before the owner answered");
      return;
    }
  entry_end (e, BX_OUTCOME_DENIED, reason);
}

/* Ends the call of ENTRY, whose client left while it waited: its final line (outcome and
 * state cancelled, as when a client leaves for good) and its connection.  The call stays
 * in ENTRY for the listing and for a reload's remembering; a call asked again replaces it.
 * Only the waiter, without the lock: nothing else touches a call whose client left before
 * it is detached. */
static void
end_left_call (struct entry *e)
{
  struct bx_call *c = e->parked;
  c->approval = (struct bx_audit_approval){ .id = e->approval,
                                            .state = BX_APPROVAL_CANCELLED,
                                            .approver_uid = -1,
                                            .waited_ms = bx_now_ms () - e->since };
  c->rec.approval = &c->approval;
  bx_call_end (c, BX_OUTCOME_CANCELLED, "the client left before the owner answered", 0);
  bx_call_finish (c);
  int fd = bx_call_take_fd (c);
  if (fd >= 0)
    close (fd);
}

/* Lock held: ENTRY's answer is settled; the watchers hear it. */
static void
settle (struct bx_approvals *a, struct entry *e, enum bx_approval_state state)
{
  e->state = state;
  e->answered = bx_now_ms ();
  post_event (a, json_pack ("{s:s, s:s, s:s, s:o}", "type", "resolved", "approval", e->approval,
                            "state", bx_approval_state_name (state), "approver_uid",
                            e->approver_uid >= 0 ? json_integer (e->approver_uid) : json_null ()));
}

/* Lock held: what a waiting connection's poll said.  The client sends nothing after its
 * request.  A hang-up is the client leaving: its call ends, and the approval waits on for
 * the same call asked again (a client that gave up before the owner answered), unless it
 * cannot be matched.  More bytes are a client that does not follow the protocol: the call
 * is cancelled.  A half-close (shutdown of the client's writing side) is not leaving: it
 * may still read the answer. */
static void
check_connection (struct bx_approvals *a, struct entry *e, short revents)
{
  if (e->state != BX_APPROVAL_PENDING)
    return;
  if (revents & (POLLHUP | POLLERR | POLLNVAL))
    {
      if (e->retry_key != NULL && !a->stopping)
        e->left = true;
      else
        settle (a, e, BX_APPROVAL_CANCELLED);
      return;
    }
  if (revents & POLLIN)
    {
      char c;
      ssize_t n = recv (e->parked->fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
      if (n == 0)
        e->half_closed = true;
      else if (n > 0 || (errno != EAGAIN && errno != EINTR))
        settle (a, e, BX_APPROVAL_CANCELLED);
    }
}

/* Lock held, on the loop: ENTRY's connection is no longer watched (its call is finished,
 * or its client left and its connection is about to close). */
static void
unwatch (struct entry *e)
{
  e->watch = sd_event_source_disable_unref (e->watch);
}

static int on_connection (sd_event_source *src, int fd, uint32_t revents, void *userdata);

/* Lock held, on the loop: ENTRY's connection is watched, for a hang-up and, unless the
 * client half-closed, for bytes.  The fd is the parked call's, which changes when the same
 * call asked again took ENTRY over. */
static void
watch (struct bx_approvals *a, struct entry *e)
{
  uint32_t events = e->half_closed ? 0 : EPOLLIN;
  if (e->watch != NULL && e->watched_fd == e->parked->fd)
    {
      sd_event_source_set_io_events (e->watch, events);
      return;
    }
  unwatch (e);
  e->watched_fd = e->parked->fd;
  int r = sd_event_add_io (a->brokerd->loop, &e->watch, e->watched_fd, events, on_connection, e);
  if (r < 0)
    {
      /* Not watchable (out of memory): it waits on for its answer or its expiry. */
      bx_log (LOG_ERR, NULL, "watching a call waiting for approval: %s", strerror (-r));
      e->watch = NULL;
    }
}

/* Settles what expired or what the stop ends, takes the settled off the list and finishes
 * them, ends the calls whose clients left, and watches the others; then sets the timer for
 * the next expiry.  On the loop, whenever something may have changed: an answer or a call
 * taken (the eventfd), a connection, the timer. */
static void
look (struct bx_approvals *a)
{
  struct entry *leaving[BX_APPROVALS_MAX_PENDING];
  for (;;)
    {
      pthread_mutex_lock (&a->lock);
      int64_t now = bx_now_ms ();
      struct entry *done = NULL;
      struct entry **link = &a->entries;
      int64_t next = BX_NO_DEADLINE;
      size_t n_leaving = 0;
      while (*link != NULL)
        {
          struct entry *e = *link;
          if (!e->announced)
            {
              link = &e->next;
              continue;
            }
          if (e->left && !e->detached)
            {
              /* Its call ends below, outside the lock; then it is detached. */
              unwatch (e);
              leaving[n_leaving++] = e;
              link = &e->next;
              continue;
            }
          if (e->state == BX_APPROVAL_PENDING && now >= e->expires)
            settle (a, e, BX_APPROVAL_EXPIRED);
          else if (e->state == BX_APPROVAL_PENDING && a->stopping)
            settle (a, e, BX_APPROVAL_STOPPED);
          /* Approved after its client left: kept for the same call asked again until it
           * expires. */
          bool held
              = e->detached && e->state == BX_APPROVAL_APPROVED && now < e->expires && !a->stopping;
          if (e->state != BX_APPROVAL_PENDING && !held)
            {
              unwatch (e);
              *link = e->next;
              e->next = done;
              done = e;
              a->count--;
              uid_give (a, e->parked->uid);
              continue;
            }
          if (e->expires < next)
            next = e->expires;
          if (!e->detached)
            watch (a, e);
          link = &e->next;
        }
      bool leave = a->stopping && a->entries == NULL && a->count == 0;
      pthread_mutex_unlock (&a->lock);
      if (n_leaving > 0)
        {
          for (size_t i = 0; i < n_leaving; i++)
            end_left_call (leaving[i]);
          pthread_mutex_lock (&a->lock);
          for (size_t i = 0; i < n_leaving; i++)
            leaving[i]->detached = true;
          pthread_mutex_unlock (&a->lock);
        }
      while (done != NULL)
        {
          struct entry *e = done;
          done = e->next;
          finish (a, e);
        }
      if (n_leaving > 0)
        continue; /* look again at once: what changed meanwhile is seen there */
      if (leave)
        {
          pthread_mutex_lock (&a->lock);
          a->finished = true;
          pthread_cond_broadcast (&a->changed);
          pthread_mutex_unlock (&a->lock);
          sd_event_source_set_enabled (a->timer, SD_EVENT_OFF);
          return;
        }
      if (next == BX_NO_DEADLINE)
        sd_event_source_set_enabled (a->timer, SD_EVENT_OFF);
      else
        {
          /* A millisecond past it: the expiry is then seen as passed. */
          sd_event_source_set_time (a->timer, (uint64_t)(next + 1) * 1000);
          sd_event_source_set_enabled (a->timer, SD_EVENT_ONESHOT);
        }
      return;
    }
}

/* On the loop, after it looked: the owners' watchers read what is new (or the end). */
static void
tell_watchers (struct bx_approvals *a)
{
  if (a->notify != NULL)
    a->notify (a->notify_ctx);
}

void
bx_approvals_on_events (struct bx_approvals *a, void (*notify) (void *ctx), void *ctx)
{
  a->notify = notify;
  a->notify_ctx = ctx;
}

/* What a waiting connection's client did: bytes, a half-close or a hang-up. */
static int
on_connection (sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
  (void)src;
  (void)fd;
  struct entry *e = userdata;
  struct bx_approvals *a = e->owner;
  pthread_mutex_lock (&a->lock);
  check_connection (a, e, (short)revents);
  pthread_mutex_unlock (&a->lock);
  look (a);
  tell_watchers (a);
  return 0;
}

static int
on_wake (sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
  (void)src;
  (void)revents;
  uint64_t count;
  (void)TEMP_FAILURE_RETRY (read (fd, &count, sizeof count));
  look (userdata);
  tell_watchers (userdata);
  return 0;
}

static int
on_expiry (sd_event_source *src, uint64_t usec, void *userdata)
{
  (void)src;
  (void)usec;
  look (userdata);
  tell_watchers (userdata);
  return 0;
}

/* ---- Taking a call. ------------------------------------------------------------------ */

/* A call answered at once, before it waits: OUTCOME denied (a refusal, REASON) or failed
 * (REASON the message). */
static void
answer_now (struct bx_call *c, enum bx_outcome outcome, const char *reason)
{
  c->rec.approval = NULL;
  bx_call_end (c, outcome, reason, SHORT_WRITE_MS);
  bx_call_finish (c);
  bx_call_free (c);
}

/* Lock held: takes ENTRY off the list of waiting calls. */
static void
unlink_entry (struct bx_approvals *a, struct entry *e)
{
  for (struct entry **link = &a->entries; *link != NULL; link = &(*link)->next)
    if (*link == e)
      {
        *link = e->next;
        e->next = NULL;
        a->count--;
        uid_give (a, e->parked->uid);
        return;
      }
}

/* ENTRY's call starts to wait: its pending line, then ENTRY is listed (owners may answer
 * at once), then the pending frame; from then on the waiter watches it (until then it
 * leaves ENTRY alone: the final answer always comes second).  NEW_ENTRY: ENTRY was made for
 * this call and is not listed yet; otherwise it was taken over from a call whose client
 * left, and is listed already. */
static void
announce (struct bx_approvals *a, struct entry *e, bool new_entry)
{
  struct bx_call *c = e->parked;
  /* The line that says the call waits comes first; without it, it does not wait.  (A
   * taken-over entry's approval was read under the lock: owners may answer it now.) */
  if (new_entry)
    entry_approval (e);
  if (bx_call_log (c, BX_OUTCOME_PENDING) < 0)
    {
      pthread_mutex_lock (&a->lock);
      if (new_entry)
        {
          a->count--;
          uid_give (a, c->uid);
        }
      else
        {
          settle (a, e, BX_APPROVAL_CANCELLED);
          unlink_entry (a, e);
        }
      pthread_mutex_unlock (&a->lock);
      e->parked = NULL;
      answer_now (c, BX_OUTCOME_FAILED, BX_AUDIT_NOT_RUN);
      entry_free (e);
      wake_waiter (a);
      return;
    }
  pthread_mutex_lock (&a->lock);
  if (new_entry)
    {
      e->next = a->entries;
      a->entries = e;
    }
  json_t *ev = entry_json (e);
  json_object_set_new (ev, "type", json_string ("pending"));
  post_event (a, ev);
  pthread_mutex_unlock (&a->lock);

  cleanup_free char *shown_text = bx_xasprintf ("%s: %s", e->approval, e->summary);
  json_t *pending = bx_msg_pending_approval (c->id, shown_text, e->expires_unix);
  cleanup_error bx_error err = NULL;
  int w = bx_frame_write (c->fd, pending, bx_deadline_in (SHORT_WRITE_MS), &err);
  json_decref (pending);
  pthread_mutex_lock (&a->lock);
  e->announced = true;
  if (w < 0 && e->state == BX_APPROVAL_PENDING)
    /* The client is gone already (or does not read): logged as cancelled. */
    settle (a, e, BX_APPROVAL_CANCELLED);
  pthread_mutex_unlock (&a->lock);
  wake_waiter (a);
}

/* The same call asked again takes over ENTRY, detached (lock held, released here): CALL
 * replaces the call whose client left.  Approved, it runs now on that approval; still
 * waiting, it waits on with the same id and expiry. */
static void
take_over (struct bx_approvals *a, struct entry *e, struct bx_call *call)
{
  struct bx_call *gone = e->parked;
  e->parked = call;
  e->left = e->detached = e->half_closed = false;
  bool approved = e->state == BX_APPROVAL_APPROVED;
  if (approved)
    unlink_entry (a, e);
  else
    {
      e->announced = false; /* the waiter leaves it alone until its new frame is out */
      entry_approval (e);   /* the pending line's, as the approval stands now */
    }
  pthread_mutex_unlock (&a->lock);
  bx_call_free (gone);
  if (approved)
    finish (a, e);
  else
    announce (a, e, false);
}

bool
bx_approvals_take (struct bx_approvals *a, struct bx_call *c)
{
  struct bx_decision *d = &c->decision;
  if (a == NULL || d->verdict != BX_ALLOWED || d->grant == NULL
      || d->grant->approval == BX_APPROVAL_NEVER)
    return false;
  int64_t uid = c->uid;
  char *grant_text = bx_grant_canonical (d->grant);
  cleanup_free char *key = d->grant->approval == BX_APPROVAL_ONCE_PER_SESSION
                               ? remember_key (d, uid, c->rec.session, grant_text)
                               : NULL;
  size_t arguments_len = 0;
  char *arguments = bx_decision_arguments (d, &arguments_len);
  char *again = retry_key (uid, c->rec.session, bx_tool_name (d->args.tool), arguments,
                           arguments_len, grant_text);
  const char *refusal = NULL;
  pthread_mutex_lock (&a->lock);
  const struct remembered *r = find_remembered (a, key);
  if (r != NULL)
    {
      /* The call runs as usual, on this approval: its audit lines say which. */
      memcpy (c->approval_id, r->approval, sizeof c->approval_id);
      c->approval = (struct bx_audit_approval){ .id = c->approval_id,
                                                .state = BX_APPROVAL_REMEMBERED,
                                                .approver_uid = r->approver_uid,
                                                .approved_at_ms = r->approved_unix };
      c->rec.approval = &c->approval;
      pthread_mutex_unlock (&a->lock);
      free (grant_text);
      free (arguments);
      free (again);
      return false;
    }
  struct entry *earlier = a->stopping ? NULL : find_detached (a, again, bx_now_ms ());
  if (earlier != NULL)
    {
      free (grant_text);
      free (arguments);
      free (again);
      take_over (a, earlier, c);
      return true;
    }
  if (a->stopping)
    refusal = "brokerd is stopping; the call was not run";
  else if (a->count >= BX_APPROVALS_MAX_PENDING)
    refusal = "too many calls are waiting for the owner's approval; the call was not run";
  else if (!uid_take (a, uid))
    refusal = "too many of your calls are waiting for the owner's approval; the call was not "
              "run";
  else
    a->count++;
  uint64_t generation = a->generation;
  pthread_mutex_unlock (&a->lock);
  if (refusal != NULL)
    {
      answer_now (c, BX_OUTCOME_DENIED, refusal);
      free (grant_text);
      free (arguments);
      free (again);
      return true;
    }

  struct entry *e = bx_xzalloc (sizeof *e);
  e->owner = a;
  e->parked = c;
  e->arguments = arguments;
  e->arguments_len = arguments_len;
  e->retry_key = again;
  e->summary = bx_approvals_summary (d);
  e->approver_uid = -1;
  e->since = bx_now_ms ();
  e->since_unix = unix_now_ms ();
  e->expires = e->since + d->grant->approval_timeout_ms;
  e->expires_unix = e->since_unix + d->grant->approval_timeout_ms;
  e->state = BX_APPROVAL_PENDING;
  e->grant_text = grant_text;
  e->generation = generation;
  if (e->arguments == NULL || new_approval_id (e->approval) < 0)
    {
      e->parked = NULL;
      answer_now (c, BX_OUTCOME_DENIED,
                  "brokerd cannot ask for approval now; the call was not run");
      pthread_mutex_lock (&a->lock);
      a->count--;
      uid_give (a, uid);
      pthread_mutex_unlock (&a->lock);
      entry_free (e);
      wake_waiter (a);
      return true;
    }

  announce (a, e, true);
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
    if (e->state == BX_APPROVAL_PENDING && now < e->expires)
      json_array_append_new (list, entry_json (e));
  if (seq != NULL)
    *seq = a->seq;
  pthread_mutex_unlock (&a->lock);
  return list;
}

int
bx_approvals_answer (struct bx_approvals *a, const char *approval, bool approve, const char *reason,
                     uid_t approver, bx_error *err)
{
  pthread_mutex_lock (&a->lock);
  int64_t now = bx_now_ms ();
  struct entry *found = NULL;
  for (struct entry *e = a->entries; e != NULL; e = e->next)
    if (same_id (e->approval, approval))
      found = e;
  if (found == NULL || found->state != BX_APPROVAL_PENDING || now >= found->expires)
    {
      pthread_mutex_unlock (&a->lock);
      return bx_error_setc (err, ENOENT, "no call waits for approval with that id");
    }
  found->approver_uid = approver;
  if (!approve && reason != NULL && *reason != '\0')
    found->reason = bx_printable_fit (reason, strlen (reason), SHOWN_REASON, false, NULL);
  const struct bx_call *c = found->parked;
  if (approve && c->decision.grant->approval == BX_APPROVAL_ONCE_PER_SESSION
      && found->generation == a->generation)
    {
      char *key = remember_key (&c->decision, c->uid, c->rec.session, found->grant_text);
      if (key == NULL || find_remembered (a, key) != NULL)
        free (key);
      else
        {
          a->remembered
              = bx_xrealloc (a->remembered, (a->n_remembered + 1) * sizeof *a->remembered);
          struct remembered *r = &a->remembered[a->n_remembered++];
          *r = (struct remembered){ .key = key,
                                    .grant = bx_xstrdup (found->grant_text),
                                    .approver_uid = approver,
                                    .approved_unix = unix_now_ms () };
          memcpy (r->approval, found->approval, sizeof r->approval);
        }
    }
  settle (a, found, approve ? BX_APPROVAL_APPROVED : BX_APPROVAL_DECLINED);
  pthread_mutex_unlock (&a->lock);
  wake_waiter (a);
  return 0;
}

json_t *
bx_approvals_events (struct bx_approvals *a, uint64_t *seq)
{
  pthread_mutex_lock (&a->lock);
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

void
bx_approvals_forget_changed (struct bx_approvals *a, const struct bx_config *config)
{
  if (a == NULL)
    return;
  char **texts = bx_xzalloc ((config->n_grants + 1) * sizeof *texts);
  for (size_t i = 0; i < config->n_grants; i++)
    texts[i] = bx_grant_canonical (&config->grants[i]);
  pthread_mutex_lock (&a->lock);
  a->generation++;
  size_t kept = 0;
  for (size_t i = 0; i < a->n_remembered; i++)
    {
      struct remembered *r = &a->remembered[i];
      bool still = false;
      for (size_t k = 0; k < config->n_grants && !still; k++)
        still = strcmp (r->grant, texts[k]) == 0;
      if (still)
        a->remembered[kept++] = *r;
      else
        {
          free (r->key);
          free (r->grant);
        }
    }
  a->n_remembered = kept;
  pthread_mutex_unlock (&a->lock);
  for (size_t i = 0; i < config->n_grants; i++)
    free (texts[i]);
  free (texts);
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
  if (a->stopping)
    bx_brokerd_wake (a->brokerd);
  pthread_mutex_unlock (&a->lock);
}

/* ---- Life. --------------------------------------------------------------------------- */

int
bx_approvals_start (struct brokerd *brokerd, struct bx_approvals **out, bx_error *err)
{
  struct bx_approvals *a = bx_xzalloc (sizeof *a);
  a->brokerd = brokerd;
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
  sd_event *loop = brokerd->loop;
  int r = sd_event_add_io (loop, &a->wake_source, a->wake, EPOLLIN, on_wake, a);
  if (r >= 0)
    r = sd_event_add_time (loop, &a->timer, CLOCK_MONOTONIC, 0, BX_LOOP_ACCURACY_US, on_expiry, a);
  if (r >= 0)
    r = sd_event_source_set_enabled (a->timer, SD_EVENT_OFF);
  if (r < 0)
    {
      bx_approvals_free (a);
      return bx_error_set (err, -r, "approvals: cannot watch the waiting calls");
    }
  *out = a;
  return 0;
}

static bool
is_finished (void *ctx)
{
  struct bx_approvals *a = ctx;
  pthread_mutex_lock (&a->lock);
  bool done = a->finished;
  pthread_mutex_unlock (&a->lock);
  return done;
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
  /* The loop answers every waiting call, then the approvals are finished. */
  wake_waiter (a);
  if (bx_brokerd_run_until (a->brokerd, is_finished, a, BX_NO_DEADLINE) >= 0)
    return;
  /* The loop failed: looked at from here until done. */
  while (!is_finished (a))
    {
      look (a);
      struct timespec ts = { 0, 10 * 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
}

/* Whether no approved call runs and (unless RUNS_ONLY) no owner's connection is open. */
struct quiet
{
  struct bx_approvals *a;
  bool runs_only;
};

static bool
is_quiet (void *ctx)
{
  const struct quiet *q = ctx;
  pthread_mutex_lock (&q->a->lock);
  bool done = q->a->running == 0 && (q->runs_only || q->a->owners == 0);
  pthread_mutex_unlock (&q->a->lock);
  return done;
}

/* Until Q is quiet or DEADLINE: on brokerd's loop, so that what it serves goes on, or, when
 * the loop failed, on the approvals' condition alone. */
static void
wait_quiet (struct quiet *q, int64_t deadline)
{
  struct bx_approvals *a = q->a;
  if (bx_brokerd_run_until (a->brokerd, is_quiet, q, deadline) >= 0)
    return;
  struct timespec until = bx_deadline_timespec (deadline);
  pthread_mutex_lock (&a->lock);
  while (a->running > 0 || (!q->runs_only && a->owners > 0))
    if (pthread_cond_timedwait (&a->changed, &a->lock, &until) == ETIMEDOUT)
      break;
  pthread_mutex_unlock (&a->lock);
}

unsigned
bx_approvals_stop (struct bx_approvals *a, int64_t deadline)
{
  if (a == NULL)
    return 0;
  bx_approvals_stop_waiting (a);

  struct quiet all = { a, false }, runs = { a, true };
  wait_quiet (&all, deadline);
  pthread_mutex_lock (&a->lock);
  if (a->running > 0 && a->brokerd->canceller != NULL)
    {
      /* Past the deadline: approved calls still running are cancelled like the others, and
       * their modules get a moment to remove what they started. */
      bx_log (LOG_WARNING, NULL, "%u approved call(s) still running; cancelling them", a->running);
      pthread_mutex_unlock (&a->lock);
      bx_canceller_cancel_all (a->brokerd->canceller);
      wait_quiet (&runs, deadline + CANCEL_WAIT_MS);
      pthread_mutex_lock (&a->lock);
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
  sd_event_source_disable_unref (a->wake_source);
  sd_event_source_disable_unref (a->timer);
  close (a->wake);
  for (size_t i = 0; i < a->n_remembered; i++)
    {
      free (a->remembered[i].key);
      free (a->remembered[i].grant);
    }
  free (a->remembered);
  for (size_t i = 0; i < EVENT_RING; i++)
    free (a->events[i]);
  pthread_cond_destroy (&a->changed);
  pthread_mutex_destroy (&a->lock);
  free (a);
}
