/* SPDX-License-Identifier: Apache-2.0 */
/* The client side of brokerd's protocol: see client.h and docs/protocol.md.
 *
 * bx_client_call can end in eleven ways and no others; each is marked "exit N" where it
 * happens.  Exits 1-3 and 5-10 are "unavailable": the broker cannot be reached or did not
 * keep the protocol.  They all go through unavailable(), which logs one line, answers
 * failed/BX_CLIENT_UNAVAILABLE and (through cleanup_close in the caller) drops the
 * connection.  Exit 4 is a request too large to send, exit 11 brokerd's answer. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"
#include "bx/message.h"
#include "bx/printable.h"

#include <boxmaker/client.h>

#include "client_cancel.h"
#include "connect.h"

/* The backoff after "brokerd is busy": the first delay, the most it doubles to, and how
 * often a cancel is looked at while it lasts. */
#define BUSY_FIRST_DELAY_MS 50
#define BUSY_MAX_DELAY_MS   1600
#define BUSY_CANCEL_STEP_MS 20

/* Unix time in ms: a pending frame's expiry is wall-clock time from the broker's side. */
static int64_t
unix_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* now + ms on the monotonic clock, or -1 when it would overflow.  A deadline must stay below
 * BX_NO_DEADLINE, which bx_deadline_left reads as "wait for ever". */
static int64_t
checked_deadline (int64_t now, uint64_t ms)
{
  if (now < 0 || ms >= (uint64_t)(BX_NO_DEADLINE - now))
    return -1;
  return now + (int64_t)ms;
}

static void
log_line (const struct bx_client_options *opts, const char *line)
{
  if (opts->log != NULL)
    opts->log (line, opts->data);
  else
    fprintf (stderr, "%s\n", line);
}

/* The reason may quote the peer (an error's detail, an id): keep the log line one line of
 * reasonable length whatever the peer sent.  Control bytes become '?', and the text is cut
 * at WHY_MAX bytes, on a UTF-8 character boundary, with "...". */
#define WHY_MAX 512

static void
tame (char *why)
{
  bx_one_line (why, WHY_MAX, '?');
}

/* The one helper every unavailable exit goes through: exactly one log line, a plain
 * failure for the caller.  The connection is closed by the caller's cleanup_close. */
static int unavailable (const struct bx_client_options *opts, struct bx_client_response *out,
                        enum bx_client_exit exit, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

static int
unavailable (const struct bx_client_options *opts, struct bx_client_response *out,
             enum bx_client_exit exit, const char *fmt, ...)
{
  /* A cancelled call ends here whatever its connection's end looked like: no outage. */
  if (bx_client_cancel_requested (opts->cancel))
    {
      bx_client_response_free (out);
      out->kind = BX_CLIENT_FAILED;
      out->cancelled = true;
      out->exit = exit;
      out->message = bx_xstrdup ("the call was cancelled");
      return 0;
    }
  va_list ap;
  cleanup_free char *why = NULL;
  va_start (ap, fmt);
  if (vasprintf (&why, fmt, ap) < 0)
    why = NULL;
  va_end (ap);
  if (why != NULL)
    tame (why);
  cleanup_free char *line
      = bx_xasprintf ("%s: %s; %s", BX_CLIENT_UNAVAILABLE, why ? why : "(no memory for the reason)",
                      BX_CLIENT_POINTER);
  log_line (opts, line);

  bx_client_response_free (out);
  out->kind = BX_CLIENT_FAILED;
  out->unavailable = true;
  out->exit = exit;
  out->message = bx_xstrdup (BX_CLIENT_UNAVAILABLE);
  return 0;
}

/* See connect.h.  The socket is blocking during connect with SO_SNDTIMEO set to what is
 * left of the deadline: a broker whose listen queue is full makes connect wait, and that wait
 * must end at the deadline too. */
int
bx_client_connect (const char *path, int64_t deadline, enum bx_client_exit *stage, bx_error *err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    {
      *stage = BX_CLIENT_EXIT_CONNECT;
      return bx_error_setc (err, ENAMETOOLONG, "the path is too long for a Unix socket");
    }
  strcpy (addr.sun_path, path);

  cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    {
      *stage = BX_CLIENT_EXIT_CONNECT;
      return bx_error_set (err, errno, "socket");
    }

  int64_t left = deadline - bx_now_ms ();
  if (left < 1)
    left = 1; /* a zero SO_SNDTIMEO would mean no limit at all */
  struct timeval tv = { .tv_sec = left / 1000, .tv_usec = (left % 1000) * 1000 };
  if (setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0)
    {
      *stage = BX_CLIENT_EXIT_TIMEOUT;
      return bx_error_set (err, errno, "SO_SNDTIMEO");
    }

  int r = TEMP_FAILURE_RETRY (connect (fd, (struct sockaddr *)&addr, sizeof addr));
  if (r < 0)
    {
      *stage = BX_CLIENT_EXIT_CONNECT;
      /* A full queue that stays full until the deadline ends as EAGAIN. */
      return bx_error_set (err, errno, "connect");
    }

  /* From here on every read and write is bounded by the deadline through poll (bx/deadline.h),
   * so the socket no longer blocks on its own. */
  /* A fresh socket has no other status flag to keep: one syscall instead of two. */
  if (fcntl (fd, F_SETFL, O_NONBLOCK) < 0)
    {
      *stage = BX_CLIENT_EXIT_TIMEOUT;
      return bx_error_set (err, errno, "O_NONBLOCK");
    }
  return steal_fd (&fd);
}

/* The call's connection: detached from the cancel handle before it is closed. */
struct conn
{
  int fd;
  struct bx_client_cancel *cancel;
};

static void
conn_close (struct conn *c)
{
  if (c->fd < 0)
    return;
  bx_client_cancel_detach (c->cancel);
  close (c->fd);
}

/* Copies an answer (exit 11) into OUT; ENV's strings live in FRAME, which the caller frees. */
static void
take_answer (const struct bx_envelope *env, struct bx_client_response *out)
{
  bx_client_response_free (out);
  out->exit = BX_CLIENT_EXIT_ANSWER;
  switch (env->type)
    {
    case BX_MSG_RESULT:
      out->kind = BX_CLIENT_RESULT;
      out->content = bx_xmalloc (env->u.result.content_len + 1);
      memcpy (out->content, env->u.result.content, env->u.result.content_len);
      out->content[env->u.result.content_len] = '\0';
      out->content_len = env->u.result.content_len;
      out->class = bx_xstrdup (env->u.result.class);
      out->untrusted = env->u.result.untrusted;
      out->truncated = env->u.result.truncated;
      out->refused = env->u.result.refused;
      break;
    case BX_MSG_DENIED:
      out->kind = BX_CLIENT_DENIED;
      out->message = bx_xstrdup (env->u.denied.text);
      break;
    default:
      out->kind = BX_CLIENT_FAILED;
      out->message = bx_xstrdup (env->u.failed.text);
      break;
    }
}

/* brokerd's refusal of a connection past its limits and its queue (docs/config.md). */
static const char busy_detail[] = "brokerd is busy";

/* Whether an attempt that brokerd refused as busy is tried again instead of reported. */
static bool
retry_if_busy (const char *detail, bool may_retry, bool *busy)
{
  *busy = may_retry && detail != NULL && strcmp (detail, busy_detail) == 0;
  return *busy;
}

/* One attempt of bx_client_call, under DEADLINE (TIMEOUT_MS is the call's, for a pending
 * approval's new deadline).  With MAY_RETRY, an attempt that brokerd refuses as busy ends
 * with *BUSY set, nothing logged and OUT empty. */
static int
call_once (const struct bx_client_options *opts, const char *call, const char *session,
           const char *tool, const json_t *arguments, struct bx_client_response *out,
           int64_t deadline, uint64_t timeout_ms, bool may_retry, bool *busy)
{
  *busy = false;
  const char *path = opts->socket ? opts->socket : BX_CLIENT_DEFAULT_SOCKET;
  cleanup_error bx_error e = NULL;
  enum bx_client_exit stage = BX_CLIENT_EXIT_CONNECT;
  __attribute__ ((cleanup (conn_close))) struct conn conn
      = { bx_client_connect (path, deadline, &stage, &e), opts->cancel };
  int fd = conn.fd;
  /* exit 2: the connection cannot be made (no socket, nobody listening, no permission, a
   * queue that stayed full until the deadline, a path too long). */
  if (fd < 0 && stage == BX_CLIENT_EXIT_CONNECT)
    return unavailable (opts, out, BX_CLIENT_EXIT_CONNECT, "cannot connect to %s: %s", path,
                        bx_error_msg (e));
  /* exit 3: the socket cannot be given its timeout (setsockopt/fcntl failed). */
  if (fd < 0)
    return unavailable (opts, out, BX_CLIENT_EXIT_TIMEOUT, "cannot set a timeout: %s",
                        bx_error_msg (e));
  /* Cancelled before the connection existed: the shut-down connection fails below. */
  bx_client_cancel_attach (opts->cancel, fd);

  json_auto_t *request = bx_msg_tool_request (call, session, tool, arguments);
  if (opts->refusals)
    bx_msg_ask_refusals (request);
  if (opts->peer != NULL)
    bx_msg_set_peer (request, opts->peer);
  if (bx_frame_write (fd, request, deadline, &e) < 0)
    {
      /* exit 4: the request does not fit in a frame.  The broker is fine: the caller gets a
       * failure it can act on (send less) and nothing is logged. */
      if (bx_error_code (e) == BX_FRAME_TOO_LARGE)
        {
          out->kind = BX_CLIENT_FAILED;
          out->exit = BX_CLIENT_EXIT_SEND;
          out->message = bx_xstrdup (BX_CLIENT_TOO_LARGE);
          return 0;
        }
      /* exit 4 too: any other write error (the broker closed, the deadline passed).  A
       * broker that refuses a connection at once ("brokerd is busy") may close before it
       * reads the request; its error frame is then still waiting here, and says more than
       * EPIPE.  The peer has closed, so this read cannot wait. */
      const char *detail = NULL;
      json_auto_t *late = NULL;
      struct bx_envelope env;
      cleanup_error bx_error ignored = NULL;
      int code = bx_error_code (e);
      if ((code == EPIPE || code == ECONNRESET)
          && bx_frame_read (fd, deadline, &late, &ignored) == 0
          && bx_envelope_parse (late, &env, &ignored) == 0 && env.type == BX_MSG_ERROR)
        detail = env.u.error.text;
      if (retry_if_busy (detail, may_retry, busy))
        return 0;
      if (detail != NULL)
        return unavailable (opts, out, BX_CLIENT_EXIT_SEND,
                            "cannot send the request: %s (the broker reported an error: %s)",
                            bx_error_msg (e), detail);
      return unavailable (opts, out, BX_CLIENT_EXIT_SEND, "cannot send the request: %s",
                          bx_error_msg (e));
    }

  bool seen_pending = false;
  for (;;)
    {
      json_auto_t *frame = NULL;
      struct bx_envelope env;

      /* exit 5: no frame could be read: closed before a frame began, the deadline passed,
       * or anything else (cut inside a frame, oversize or zero header, not one JSON
       * object, a malformed envelope, another protocol version). */
      if (bx_frame_read (fd, deadline, &frame, &e) < 0)
        {
          int code = bx_error_code (e);
          if (code == BX_FRAME_CLOSED)
            return unavailable (opts, out, BX_CLIENT_EXIT_READ,
                                "the connection closed before the final answer");
          if (code == BX_FRAME_TIMED_OUT)
            return unavailable (opts, out, BX_CLIENT_EXIT_READ, "no answer in time");
          return unavailable (opts, out, BX_CLIENT_EXIT_READ, "bad frame: %s", bx_error_msg (e));
        }
      if (bx_envelope_parse (frame, &env, &e) < 0)
        return unavailable (opts, out, BX_CLIENT_EXIT_READ, "bad frame: %s", bx_error_msg (e));
      if (env.v != BX_PROTOCOL_VERSION)
        return unavailable (opts, out, BX_CLIENT_EXIT_READ,
                            "bad frame: protocol version %lld, not %d", (long long)env.v,
                            BX_PROTOCOL_VERSION);

      /* exit 6: an answer to some other request.  An error with an empty id is brokerd
       * refusing a request it could not read: that is exit 7's report, not a mix-up. */
      bool refusal = env.type == BX_MSG_ERROR && env.id[0] == '\0';
      if (strcmp (env.id, call) != 0 && !refusal)
        return unavailable (opts, out, BX_CLIENT_EXIT_OTHER_ID, "an answer for request %s, not %s",
                            env.id, call);

      /* exit 7: brokerd reports an error, or sends a message that is no answer at all. */
      if (env.type == BX_MSG_ERROR && retry_if_busy (env.u.error.text, may_retry, busy))
        return 0;
      if (env.type == BX_MSG_ERROR)
        return unavailable (opts, out, BX_CLIENT_EXIT_BROKER_ERROR,
                            "the broker reported an error: %s", env.u.error.text);
      if (env.type == BX_MSG_TOOL_REQUEST || env.type == BX_MSG_GRANTS_REQUEST
          || env.type == BX_MSG_GRANTS)
        return unavailable (opts, out, BX_CLIENT_EXIT_BROKER_ERROR, "an unexpected message");

      if (env.type == BX_MSG_PENDING_APPROVAL)
        {
          /* exit 8: a pending frame can never be the last one. */
          if (env.final)
            return unavailable (opts, out, BX_CLIENT_EXIT_PENDING_FINAL,
                                "a pending frame marked final");
          /* exit 10: only one pending frame per call. */
          if (seen_pending)
            return unavailable (opts, out, BX_CLIENT_EXIT_PENDING_AGAIN, "a second pending frame");
          /* exit 10 too: the new deadline is expires + timeout.  expires comes from the
           * peer: an expiry in the past leaves the timeout, and no addition may overflow. */
          int64_t unix_now = unix_now_ms ();
          uint64_t wait = env.u.pending.expires > unix_now
                              ? (uint64_t)env.u.pending.expires - (uint64_t)unix_now
                              : 0;
          int64_t waited = checked_deadline (bx_now_ms (), wait);
          int64_t next = waited < 0 ? -1 : checked_deadline (waited, timeout_ms);
          if (next < 0)
            return unavailable (opts, out, BX_CLIENT_EXIT_PENDING_AGAIN, "an expiry too far away");
          seen_pending = true;
          deadline = next;
          if (opts->on_pending != NULL)
            {
              struct bx_client_pending p
                  = { .approval = env.u.pending.approval, .expires = env.u.pending.expires };
              opts->on_pending (&p, opts->data);
            }
          continue; /* exits 5 to 10 apply to the next frame exactly as to the first */
        }

      /* exit 9: a result, failed or denied that is not marked final. */
      if (!env.final)
        return unavailable (opts, out, BX_CLIENT_EXIT_NOT_FINAL, "an answer not marked final");

      /* exit 11: brokerd's answer, returned unchanged.  Nothing is logged: a denial or a
       * failed tool is not an outage. */
      take_answer (&env, out);
      return 0;
    }
}

/* A small random number for the backoff's jitter, different in each thread and process. */
static uint32_t
jitter_random (void)
{
  static _Thread_local uint64_t state;
  if (state == 0)
    state = (uint64_t)bx_now_ns () ^ ((uint64_t)getpid () << 32) ^ (uint64_t)(uintptr_t)&state;
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (uint32_t)(state >> 32);
}

/* Sleeps MS, in short steps so that a cancel ends the sleep soon. */
static void
backoff_sleep (const struct bx_client_options *opts, int64_t ms)
{
  int64_t until = bx_now_ms () + ms;
  for (int64_t left = ms; left > 0 && !bx_client_cancel_requested (opts->cancel);
       left = until - bx_now_ms ())
    {
      int64_t step = left < BUSY_CANCEL_STEP_MS ? left : BUSY_CANCEL_STEP_MS;
      struct timespec ts = { step / 1000, (step % 1000) * 1000000 };
      nanosleep (&ts, NULL);
    }
}

int
bx_client_call (const struct bx_client_options *opts, const char *call, const char *session,
                const char *tool, const json_t *arguments, struct bx_client_response *out,
                bx_error *err)
{
  /* The caller's own mistakes: nothing has been sent, and no outage is logged. */
  if (call == NULL || !bx_valid_id (call))
    return bx_error_setc (err, EINVAL, "the call id must be 1 to %d of [A-Za-z0-9_.-]", BX_ID_MAX);
  if (session == NULL || !bx_valid_id (session))
    return bx_error_setc (err, EINVAL, "the session id must be 1 to %d of [A-Za-z0-9_.-]",
                          BX_ID_MAX);
  if (tool == NULL || *tool == '\0')
    return bx_error_setc (err, EINVAL, "no tool named");
  if (!json_is_object (arguments))
    return bx_error_setc (err, EINVAL, "the arguments must be a JSON object");

  memset (out, 0, sizeof *out);
  /* Zero is the default, as a NULL socket is: a zeroed options struct works. */
  uint64_t timeout_ms = opts->timeout_ms ? opts->timeout_ms : BX_CLIENT_DEFAULT_TIMEOUT_MS;
  /* exit 1: the first deadline, taken before connecting, does not fit the clock. */
  int64_t deadline = checked_deadline (bx_now_ms (), timeout_ms);
  if (deadline < 0)
    return unavailable (opts, out, BX_CLIENT_EXIT_CLOCK, "the timeout is too large (%llu ms)",
                        (unsigned long long)timeout_ms);

  /* "brokerd is busy": brokerd's queue was full or the call waited its whole time there.
   * Clients that all asked again at once would meet the same full queue, so each waits a
   * random part of a doubling delay first; the last attempt, or one whose wait would pass
   * the deadline, reports the refusal as any other. */
  int64_t delay = BUSY_FIRST_DELAY_MS;
  for (unsigned retries = 0;; retries++)
    {
      bool may_retry = !opts->no_busy_retry && retries < BX_CLIENT_BUSY_RETRIES;
      bool busy;
      int r = call_once (opts, call, session, tool, arguments, out, deadline, timeout_ms, may_retry,
                         &busy);
      if (!busy)
        return r;
      int64_t wait = delay / 2 + (int64_t)(jitter_random () % (uint32_t)(delay / 2 + 1));
      if (bx_now_ms () + wait >= deadline)
        wait = 0; /* no time to wait: the next attempt reports whatever it gets */
      backoff_sleep (opts, wait);
      if (bx_client_cancel_requested (opts->cancel))
        return unavailable (opts, out, BX_CLIENT_EXIT_BROKER_ERROR, "cancelled");
      if (delay < BUSY_MAX_DELAY_MS)
        delay *= 2;
    }
}

void
bx_client_response_free (struct bx_client_response *resp)
{
  if (resp == NULL)
    return;
  free (resp->content);
  free (resp->class);
  free (resp->message);
  memset (resp, 0, sizeof *resp);
}
