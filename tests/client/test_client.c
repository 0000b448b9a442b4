/* SPDX-License-Identifier: Apache-2.0 */
/* The client library against a scripted fake brokerd: every one of the eleven exits
 * (docs/client.md), the whole-call deadline (a trickling broker, a silent one), the
 * pending-approval frame. */
#include <arpa/inet.h>
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"
#include "bx/message.h"
#include <boxmaker/client.h>

#include "fake_server.h"
#include "test_main.h"

#define CALL    "c1"
#define SESSION "s1"
#define POINTER "; see docs/runbook.md#broker-unavailable"

/* What the client told its callbacks. */
struct capture
{
  int logs;
  char line[2048];
  int pendings;
  char approval[256];
  int64_t expires;
};

static void
capture_log (const char *line, void *data)
{
  struct capture *c = data;
  c->logs++;
  snprintf (c->line, sizeof c->line, "%s", line);
}

static void
capture_pending (const struct bx_client_pending *p, void *data)
{
  struct capture *c = data;
  c->pendings++;
  snprintf (c->approval, sizeof c->approval, "%s", p->approval);
  c->expires = p->expires;
}

static struct capture cap;
static struct bx_client_response resp;
static int64_t elapsed_ms;
/* How late past its deadline a call may end: far above what a loaded machine adds, far below
 * what each bug caught here would take (a broker that never answers holds a call for ever, a
 * trickled answer takes over 15 s). */
enum
{
  LATE_MS = 5000
};

/* One call to PATH with TIMEOUT and ARGS (NULL: {"path": "/x"}); fills resp, cap, elapsed_ms. */
/* Whether call_with reports a first "brokerd is busy" instead of trying again. */
static bool no_busy_retry;

static void
call_with (const char *path, uint64_t timeout, const json_t *args)
{
  memset (&cap, 0, sizeof cap);
  struct bx_client_options opts = { .socket = path,
                                    .timeout_ms = timeout,
                                    .log = capture_log,
                                    .on_pending = capture_pending,
                                    .data = &cap,
                                    .no_busy_retry = no_busy_retry };
  json_auto_t *dflt = json_pack ("{s:s}", "path", "/x");
  cleanup_error bx_error err = NULL;
  int64_t start = bx_now_ms ();
  int r = bx_client_call (&opts, CALL, SESSION, "read_file", args ? args : dflt, &resp, &err);
  elapsed_ms = bx_now_ms () - start;
  ck_assert_msg (r == 0, "bx_client_call returned %d: %s", r, bx_error_msg (err));
}

/* Runs one call against a fake server playing SCRIPT. */
static void
call_server (struct fake_server *s, fake_script script, const void *arg, uint64_t timeout)
{
  fake_server_start (s, script, arg);
  call_with (s->path, timeout, NULL);
  /* The script may still be reading ARG (the caller's stack) until it sees the close. */
  fake_server_join (s);
}

/* The shape every unavailable exit must have: failed with the fixed sentence, one log line
 * "the tool broker is unavailable: <why>; see docs/runbook.md#broker-unavailable". */
static void
assert_unavailable (int exit, const char *why_prefix)
{
  ck_assert_int_eq (resp.kind, BX_CLIENT_FAILED);
  ck_assert (resp.unavailable);
  ck_assert_int_eq (resp.exit, exit);
  ck_assert_str_eq (resp.message, BX_CLIENT_UNAVAILABLE);
  ck_assert_int_eq (cap.logs, 1);
  cleanup_free char *prefix = bx_xasprintf ("%s: %s", BX_CLIENT_UNAVAILABLE, why_prefix);
  ck_assert_msg (strncmp (cap.line, prefix, strlen (prefix)) == 0, "line is \"%s\"", cap.line);
  size_t n = strlen (cap.line), p = strlen (POINTER);
  ck_assert_msg (n > p && strcmp (cap.line + n - p, POINTER) == 0, "line is \"%s\"", cap.line);
  ck_assert_ptr_null (strchr (cap.line, '\n'));
  ck_assert_int_eq (cap.pendings, 0);
}

/* ---- Scripts ------------------------------------------------------------------------------ */

/* ARG: a NULL-terminated list of frames (JSON text) to send after reading the request; an
 * entry "@N" sleeps N ms instead.  Then waits for the client to close. */
static void
script_play (struct fake_server *s, int fd)
{
  fake_read_request (s, fd);
  for (const char *const *step = s->arg; *step != NULL; step++)
    if ((*step)[0] == '@')
      usleep ((useconds_t)atoi (*step + 1) * 1000);
    else
      fake_send_json (fd, *step);
  fake_wait_close (s, fd);
}

struct raw
{
  const void *buf;
  size_t len;
};

/* ARG: a struct raw sent as it is after reading the request; then the server closes. */
static void
script_raw_then_close (struct fake_server *s, int fd)
{
  const struct raw *r = s->arg;
  fake_read_request (s, fd);
  fake_send_raw (fd, r->buf, r->len);
}

static void
script_close_at_once (struct fake_server *s, int fd)
{
}

static void
script_read_then_close (struct fake_server *s, int fd)
{
  fake_read_request (s, fd);
}

static void
script_never_answer (struct fake_server *s, int fd)
{
  fake_read_request (s, fd);
  fake_wait_close (s, fd);
}

/* A valid answer, one byte every 100 ms: it would take seconds; the deadline must cut it. */
static void
script_trickle (struct fake_server *s, int fd)
{
  fake_read_request (s, fd);
  cleanup_free char *text = fake_format (
      "{\"v\":1,\"id\":\"%s\",\"final\":true,\"msg\":{\"type\":\"result\",\"content\":\"%s\","
      "\"class\":\"public\",\"untrusted\":false,\"truncated\":false}}",
      CALL, "a slow answer that would take far longer than the deadline");
  uint32_t be = htonl ((uint32_t)strlen (text));
  char frame[512];
  memcpy (frame, &be, 4);
  memcpy (frame + 4, text, strlen (text));
  for (size_t i = 0; i < strlen (text) + 4; i++)
    {
      if (send (fd, frame + i, 1, MSG_NOSIGNAL) != 1)
        {
          s->peer_closed = true;
          return;
        }
      usleep (100 * 1000);
    }
}

#define RESULT_FRAME(id, final)                                                                    \
  "{\"v\":1,\"id\":\"" id "\",\"final\":" final ",\"msg\":{\"type\":\"result\",\"content\":"       \
  "\"a\\u0000b\",\"class\":\"private\",\"untrusted\":true,\"truncated\":true}}"
#define DENIED_FRAME(final)                                                                        \
  "{\"v\":1,\"id\":\"" CALL "\",\"final\":" final ",\"msg\":{\"type\":\"denied\",\"reason\":"      \
  "\"read_file: /x is outside every granted folder\"}}"
#define FAILED_FRAME                                                                               \
  "{\"v\":1,\"id\":\"" CALL "\",\"final\":true,\"msg\":{\"type\":\"failed\",\"message\":"          \
  "\"the tool did not finish in time\"}}"

static char *
pending_frame (int64_t expires, bool final)
{
  return fake_format ("{\"v\":1,\"id\":\"%s\",\"final\":%s,\"msg\":{\"type\":\"pending_approval\","
                      "\"approval\":\"read /x?\",\"expires\":%lld}}",
                      CALL, final ? "true" : "false", (long long)expires);
}

static struct fake_server srv;

static void
teardown (void)
{
  fake_server_stop (&srv);
  bx_client_response_free (&resp);
}

/* ---- Exit 11: the answer, unchanged; and what was sent ------------------------------------ */

START_TEST (test_exit11_a_result_is_returned_unchanged_and_nothing_is_logged)
{
  static const char *const steps[] = { RESULT_FRAME (CALL, "true"), NULL };
  call_server (&srv, script_play, steps, 2000);
  ck_assert_int_eq (resp.exit, 11);
  ck_assert_int_eq (resp.kind, BX_CLIENT_RESULT);
  ck_assert (!resp.unavailable);
  ck_assert_uint_eq (resp.content_len, 3);
  ck_assert_mem_eq (resp.content, "a\0b", 4);
  ck_assert_str_eq (resp.class, "private");
  ck_assert (resp.untrusted);
  ck_assert (resp.truncated);
  ck_assert_int_eq (cap.logs, 0);
}
END_TEST

START_TEST (test_the_request_is_one_final_tool_request_frame_with_the_call_id)
{
  static const char *const steps[] = { RESULT_FRAME (CALL, "true"), NULL };
  call_server (&srv, script_play, steps, 2000);
  fake_server_join (&srv);
  ck_assert_ptr_nonnull (srv.request);
  json_auto_t *want
      = json_pack ("{s:i, s:s, s:b, s:{s:s, s:s, s:s, s:s, s:{s:s}}}", "v", 1, "id", CALL, "final",
                   1, "msg", "type", "tool_request", "call", CALL, "session", SESSION, "tool",
                   "read_file", "arguments", "path", "/x");
  cleanup_free char *got = json_dumps (srv.request, JSON_COMPACT);
  ck_assert_msg (json_equal (srv.request, want), "request: %s", got);
}
END_TEST

START_TEST (test_exit11_a_denial_is_returned_unchanged_and_nothing_is_logged)
{
  static const char *const steps[] = { DENIED_FRAME ("true"), NULL };
  call_server (&srv, script_play, steps, 2000);
  ck_assert_int_eq (resp.exit, 11);
  ck_assert_int_eq (resp.kind, BX_CLIENT_DENIED);
  ck_assert (!resp.unavailable);
  ck_assert_str_eq (resp.message, "read_file: /x is outside every granted folder");
  ck_assert_int_eq (cap.logs, 0);
}
END_TEST

START_TEST (test_exit11_a_failure_is_returned_unchanged_and_nothing_is_logged)
{
  static const char *const steps[] = { FAILED_FRAME, NULL };
  call_server (&srv, script_play, steps, 2000);
  ck_assert_int_eq (resp.exit, 11);
  ck_assert_int_eq (resp.kind, BX_CLIENT_FAILED);
  ck_assert (!resp.unavailable);
  ck_assert_str_eq (resp.message, "the tool did not finish in time");
  ck_assert_int_eq (cap.logs, 0);
}
END_TEST

/* ---- Exits 1 to 4: before an answer ------------------------------------------------------- */

START_TEST (test_exit1_a_timeout_too_large_for_the_clock_is_unavailable_and_never_connects)
{
  fake_server_start (&srv, NULL, NULL);
  call_with (srv.path, UINT64_MAX, NULL);
  assert_unavailable (1, "the timeout is too large");
  bx_client_response_free (&resp);
  call_with (srv.path, (uint64_t)INT64_MAX, NULL);
  assert_unavailable (1, "the timeout is too large");
  ck_assert (!fake_server_has_pending (&srv));
}
END_TEST

START_TEST (test_exit2_a_missing_socket_is_unavailable)
{
  fake_server_start (&srv, NULL, NULL);
  cleanup_free char *missing = bx_xasprintf ("%s/nothing.sock", srv.dir);
  call_with (missing, 2000, NULL);
  cleanup_free char *why = bx_xasprintf ("cannot connect to %s: ", missing);
  assert_unavailable (2, why);
}
END_TEST

START_TEST (test_exit2_a_socket_nobody_listens_on_is_unavailable)
{
  fake_server_start (&srv, NULL, NULL);
  cleanup_free char *path = bx_xasprintf ("%s/dead.sock", srv.dir);
  int fd = socket (AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  strcpy (addr.sun_path, path);
  ck_assert_int_eq (bind (fd, (struct sockaddr *)&addr, sizeof addr), 0);
  call_with (path, 2000, NULL);
  close (fd);
  unlink (path);
  cleanup_free char *why = bx_xasprintf ("cannot connect to %s: connect: Connection refused", path);
  assert_unavailable (2, why);
}
END_TEST

START_TEST (test_exit2_a_socket_path_too_long_is_unavailable)
{
  fake_server_start (&srv, NULL, NULL);
  char path[200];
  memset (path, 'a', sizeof path - 1);
  path[0] = '/';
  path[sizeof path - 1] = '\0';
  call_with (path, 2000, NULL);
  cleanup_free char *why
      = bx_xasprintf ("cannot connect to %s: the path is too long for a Unix socket", path);
  assert_unavailable (2, why);
}
END_TEST

/* Zero is the default timeout, as a NULL socket is the default socket: an answer that takes
 * a while still arrives. */
START_TEST (test_a_zero_timeout_is_the_default)
{
  static const char *const steps[] = { "@300", RESULT_FRAME (CALL, "true"), NULL };
  call_server (&srv, script_play, steps, 0);
  ck_assert_int_eq (resp.exit, 11);
  ck_assert_int_eq (resp.kind, BX_CLIENT_RESULT);
  ck_assert_int_eq (cap.logs, 0);
}
END_TEST

START_TEST (test_exit4_a_request_over_the_frame_limit_fails_quietly_and_sends_nothing)
{
  size_t n = BX_FRAME_MAX + 1;
  cleanup_free char *big = bx_xmalloc (n + 1);
  memset (big, 'x', n);
  big[n] = '\0';
  json_auto_t *args = json_pack ("{s:s, s:s}", "path", "/x", "content", big);
  fake_server_start (&srv, script_read_then_close, NULL);
  call_with (srv.path, 2000, args);
  ck_assert_int_eq (resp.exit, 4);
  ck_assert_int_eq (resp.kind, BX_CLIENT_FAILED);
  ck_assert (!resp.unavailable);
  ck_assert_str_eq (resp.message, BX_CLIENT_TOO_LARGE);
  ck_assert_int_eq (cap.logs, 0);
  fake_server_join (&srv);
  ck_assert_ptr_null (srv.request);
  ck_assert (srv.peer_closed); /* the connection closed without one byte */
}
END_TEST

START_TEST (test_exit4_a_broker_that_closes_before_reading_the_request_is_unavailable)
{
  /* Bigger than the socket buffers, so the write is still going when the broker closes. */
  size_t n = 3 * 1024 * 1024;
  cleanup_free char *big = bx_xmalloc (n + 1);
  memset (big, 'x', n);
  big[n] = '\0';
  json_auto_t *args = json_pack ("{s:s, s:s}", "path", "/x", "content", big);
  fake_server_start (&srv, script_close_at_once, NULL);
  call_with (srv.path, 2000, args);
  assert_unavailable (4, "cannot send the request: ");
}
END_TEST

static void
script_refuse_at_once (struct fake_server *s, int fd)
{
  fake_send_json (fd, "{\"v\":1,\"id\":\"\",\"final\":true,\"msg\":{\"type\":\"error\","
                      "\"detail\":\"brokerd is busy\"}}");
}

START_TEST (test_exit4_a_broker_refusing_before_reading_is_unavailable_with_its_detail)
{
  /* brokerd answers "busy" and closes without reading: the write fails, and the error frame
   * waiting in the socket tells why. */
  size_t n = 3 * 1024 * 1024;
  cleanup_free char *big = bx_xmalloc (n + 1);
  memset (big, 'x', n);
  big[n] = '\0';
  json_auto_t *args = json_pack ("{s:s, s:s}", "path", "/x", "content", big);
  fake_server_start (&srv, script_refuse_at_once, NULL);
  no_busy_retry = true; /* the fake broker answers one connection only */
  call_with (srv.path, 2000, args);
  no_busy_retry = false;
  assert_unavailable (4, "cannot send the request: ");
  ck_assert_msg (strstr (cap.line, "(the broker reported an error: brokerd is busy)") != NULL,
                 "line: %s", cap.line);
}
END_TEST

/* ---- Exit 5: no frame --------------------------------------------------------------------- */

START_TEST (test_exit5_a_broker_that_closes_without_answering_is_unavailable)
{
  call_server (&srv, script_read_then_close, NULL, 2000);
  assert_unavailable (5, "the connection closed before the final answer");
}
END_TEST

START_TEST (test_exit5_a_broker_that_never_answers_is_cut_at_the_deadline)
{
  call_server (&srv, script_never_answer, NULL, 300);
  assert_unavailable (5, "no answer in time");
  /* Never before the deadline; after it only by what a loaded machine adds (a broker that
   * never answers would hold the call for ever). */
  ck_assert_msg (elapsed_ms >= 290 && elapsed_ms < LATE_MS, "took %lld ms", (long long)elapsed_ms);
}
END_TEST

/* ---- cancellation ----------------------------------------------------------------------- */

struct canceller
{
  struct bx_client_cancel *cancel;
  unsigned after_ms;
};

static void *
cancel_later (void *arg)
{
  struct canceller *c = arg;
  usleep (c->after_ms * 1000);
  bx_client_cancel (c->cancel);
  return NULL;
}

static void
call_cancellable (struct bx_client_cancel *cancel, bool refusals)
{
  memset (&cap, 0, sizeof cap);
  struct bx_client_options opts = { .socket = srv.path,
                                    .timeout_ms = 5000,
                                    .log = capture_log,
                                    .data = &cap,
                                    .cancel = cancel,
                                    .refusals = refusals };
  json_auto_t *args = json_pack ("{s:s}", "path", "/x");
  cleanup_error bx_error err = NULL;
  int64_t start = bx_now_ms ();
  ck_assert_int_eq (bx_client_call (&opts, CALL, SESSION, "read_file", args, &resp, &err), 0);
  elapsed_ms = bx_now_ms () - start;
}

START_TEST (test_a_cancel_from_another_thread_closes_the_connection_at_once)
{
  fake_server_start (&srv, script_never_answer, NULL);
  struct bx_client_cancel *cancel = bx_client_cancel_new ();
  struct canceller c = { cancel, 200 };
  pthread_t th;
  ck_assert_int_eq (pthread_create (&th, NULL, cancel_later, &c), 0);
  call_cancellable (cancel, false);
  pthread_join (th, NULL);
  ck_assert_int_eq (resp.kind, BX_CLIENT_FAILED);
  ck_assert (resp.cancelled);
  ck_assert (!resp.unavailable);
  ck_assert_str_eq (resp.message, "the call was cancelled");
  ck_assert_int_eq (cap.logs, 0);
  ck_assert_msg (elapsed_ms >= 190 && elapsed_ms < LATE_MS, "took %lld ms", (long long)elapsed_ms);
  fake_server_join (&srv);
  ck_assert (srv.peer_closed); /* the broker saw the connection close */
  bx_client_response_free (&resp);
  bx_client_cancel_free (cancel);
}
END_TEST

START_TEST (test_a_cancel_before_the_call_ends_it_as_soon_as_it_connects)
{
  fake_server_start (&srv, script_never_answer, NULL);
  struct bx_client_cancel *cancel = bx_client_cancel_new ();
  bx_client_cancel (cancel);
  call_cancellable (cancel, false);
  ck_assert (resp.cancelled);
  ck_assert_int_eq (cap.logs, 0);
  ck_assert_msg (elapsed_ms < LATE_MS, "took %lld ms", (long long)elapsed_ms);
  bx_client_response_free (&resp);
  bx_client_cancel_free (cancel);
}
END_TEST

START_TEST (test_a_call_asks_for_refusals_only_when_told)
{
  static const char *const refused[] = {
    "{\"v\":1,\"id\":\"" CALL "\",\"final\":true,\"msg\":{\"type\":\"result\",\"content\":"
    "\"read_file: /x: no such file or directory\",\"class\":\"private\",\"untrusted\":false,"
    "\"truncated\":false,\"refused\":true}}",
    NULL,
  };
  fake_server_start (&srv, script_play, refused);
  call_cancellable (NULL, true);
  fake_server_join (&srv);
  ck_assert (json_is_true (json_object_get (json_object_get (srv.request, "msg"), "refusals")));
  ck_assert_int_eq (resp.kind, BX_CLIENT_RESULT);
  ck_assert (resp.refused);
  ck_assert_str_eq (resp.content, "read_file: /x: no such file or directory");
  bx_client_response_free (&resp);
  fake_server_stop (&srv);

  fake_server_start (&srv, script_play, refused);
  call_cancellable (NULL, false);
  fake_server_join (&srv);
  /* Not asked: the request is a 1.0 client's, without the field. */
  ck_assert_ptr_null (json_object_get (json_object_get (srv.request, "msg"), "refusals"));
  bx_client_response_free (&resp);
}
END_TEST

START_TEST (test_exit5_a_trickling_broker_is_cut_at_the_deadline_for_the_whole_call)
{
  /* One byte every 100 ms: each read succeeds quickly, so only a deadline for the whole
   * call (not a timeout per read) stops it.  The frame would take over 15 s. */
  call_server (&srv, script_trickle, NULL, 500);
  fprintf (stderr, "trickle: cut after %lld ms (deadline 500 ms)\n", (long long)elapsed_ms);
  assert_unavailable (5, "no answer in time");
  /* A timeout per read would let it run the whole 15 s. */
  ck_assert_msg (elapsed_ms >= 490 && elapsed_ms < LATE_MS, "took %lld ms", (long long)elapsed_ms);
}
END_TEST

static const unsigned char garbage[]
    = { 0, 0, 0, 10, 'n', 'o', 't', ' ', 'j', 's', 'o', 'n', '!', '!' };
static const struct raw garbage_frame = { garbage, sizeof garbage };

START_TEST (test_exit5_a_garbage_frame_is_unavailable)
{
  call_server (&srv, script_raw_then_close, &garbage_frame, 2000);
  assert_unavailable (5, "bad frame: ");
}
END_TEST

static const unsigned char oversize[] = { 0xff, 0xff, 0xff, 0xff, '{' };
static const struct raw oversize_header = { oversize, sizeof oversize };

START_TEST (test_exit5_an_oversize_header_is_unavailable)
{
  call_server (&srv, script_raw_then_close, &oversize_header, 2000);
  assert_unavailable (5, "bad frame: ");
}
END_TEST

static const unsigned char zero[] = { 0, 0, 0, 0 };
static const struct raw zero_header = { zero, sizeof zero };

START_TEST (test_exit5_a_zero_length_header_is_unavailable)
{
  call_server (&srv, script_raw_then_close, &zero_header, 2000);
  assert_unavailable (5, "bad frame: ");
}
END_TEST

static const unsigned char cut[] = { 0, 0, 0, 100, '{', '"', 'v', '"' };
static const struct raw cut_frame = { cut, sizeof cut };

START_TEST (test_exit5_a_frame_cut_short_by_a_close_is_unavailable)
{
  call_server (&srv, script_raw_then_close, &cut_frame, 2000);
  assert_unavailable (5, "bad frame: ");
}
END_TEST

START_TEST (test_exit5_a_frame_without_a_message_is_unavailable)
{
  static const char *const steps[] = { "{\"v\":1,\"id\":\"" CALL "\",\"final\":true}", NULL };
  call_server (&srv, script_play, steps, 2000);
  assert_unavailable (5, "bad frame: ");
}
END_TEST

START_TEST (test_exit5_a_json_array_instead_of_a_frame_object_is_unavailable)
{
  static const char *const steps[] = { "[1,2,3]", NULL };
  call_server (&srv, script_play, steps, 2000);
  assert_unavailable (5, "bad frame: ");
}
END_TEST

START_TEST (test_exit5_another_protocol_version_is_unavailable)
{
  static const char *const steps[]
      = { "{\"v\":2,\"id\":\"" CALL "\",\"final\":true,\"msg\":{\"type\":\"failed\","
          "\"message\":\"x\"}}",
          NULL };
  call_server (&srv, script_play, steps, 2000);
  assert_unavailable (5, "bad frame: protocol version 2, not 1");
}
END_TEST

/* ---- Exits 6 to 9: a frame that is not an answer to this call ----------------------------- */

START_TEST (test_exit6_an_answer_for_another_request_is_unavailable)
{
  static const char *const steps[] = { RESULT_FRAME ("c2", "true"), NULL };
  call_server (&srv, script_play, steps, 2000);
  assert_unavailable (6, "an answer for request c2, not c1");
}
END_TEST

START_TEST (test_exit7_an_error_message_is_unavailable_with_its_detail)
{
  static const char *const steps[]
      = { "{\"v\":1,\"id\":\"" CALL "\",\"final\":true,\"msg\":"
          "{\"type\":\"error\",\"detail\":\"wrong protocol version\"}}",
          NULL };
  call_server (&srv, script_play, steps, 2000);
  assert_unavailable (7, "the broker reported an error: wrong protocol version");
}
END_TEST

START_TEST (test_exit7_a_hostile_error_detail_stays_one_short_log_line)
{
  /* A detail with a newline, an escape sequence and 5,000 bytes: the log line stays one
   * line, without control bytes, cut to a readable length. */
  cleanup_free char *long_text = bx_xmalloc (5001);
  memset (long_text, 'e', 5000);
  long_text[5000] = '\0';
  cleanup_free char *frame
      = fake_format ("{\"v\":1,\"id\":\"" CALL "\",\"final\":true,\"msg\":"
                     "{\"type\":\"error\",\"detail\":\"line\\nforged\\u001b[31m%s\"}}",
                     long_text);
  const char *const steps[] = { frame, NULL };
  call_server (&srv, script_play, steps, 2000);
  assert_unavailable (7, "the broker reported an error: line?forged?[31meee");
  for (const char *p = cap.line; *p != '\0'; p++)
    ck_assert_msg ((unsigned char)*p >= 0x20 && *p != 0x7f, "control byte in the log line");
  ck_assert_msg (strlen (cap.line) < 700, "log line of %zu bytes", strlen (cap.line));
  ck_assert_ptr_nonnull (strstr (cap.line, "eee...; see docs/runbook.md"));
}
END_TEST

START_TEST (test_exit7_an_error_for_an_unread_request_is_still_the_brokers_report)
{
  static const char *const steps[] = { "{\"v\":1,\"id\":\"\",\"final\":true,\"msg\":"
                                       "{\"type\":\"error\",\"detail\":\"too many calls\"}}",
                                       NULL };
  call_server (&srv, script_play, steps, 2000);
  assert_unavailable (7, "the broker reported an error: too many calls");
}
END_TEST

START_TEST (test_exit7_a_request_sent_back_is_an_unexpected_message)
{
  static const char *const steps[]
      = { "{\"v\":1,\"id\":\"" CALL "\",\"final\":true,\"msg\":{\"type\":\"tool_request\","
          "\"call\":\"" CALL "\",\"session\":\"s\",\"tool\":\"shell\",\"arguments\":{}}}",
          NULL };
  call_server (&srv, script_play, steps, 2000);
  assert_unavailable (7, "an unexpected message");
}
END_TEST

START_TEST (test_exit8_a_pending_frame_marked_final_is_unavailable)
{
  cleanup_free char *pending = pending_frame (fake_unix_ms () + 1000, true);
  const char *const steps[] = { pending, NULL };
  call_server (&srv, script_play, steps, 2000);
  assert_unavailable (8, "a pending frame marked final");
}
END_TEST

START_TEST (test_exit9_a_result_not_marked_final_is_unavailable)
{
  static const char *const steps[] = { RESULT_FRAME (CALL, "false"), NULL };
  call_server (&srv, script_play, steps, 2000);
  assert_unavailable (9, "an answer not marked final");
}
END_TEST

START_TEST (test_exit9_a_denial_not_marked_final_is_unavailable)
{
  static const char *const steps[] = { DENIED_FRAME ("false"), NULL };
  call_server (&srv, script_play, steps, 2000);
  assert_unavailable (9, "an answer not marked final");
}
END_TEST

/* ---- Exit 10 and the pending-approval frame ----------------------------------------------- */

START_TEST (test_pending_then_result_tells_on_pending_once_and_returns_the_result)
{
  int64_t expires = fake_unix_ms () + 60000;
  cleanup_free char *pending = pending_frame (expires, false);
  const char *const steps[] = { pending, RESULT_FRAME (CALL, "true"), NULL };
  call_server (&srv, script_play, steps, 2000);
  ck_assert_int_eq (resp.exit, 11);
  ck_assert_int_eq (resp.kind, BX_CLIENT_RESULT);
  ck_assert_int_eq (cap.pendings, 1);
  ck_assert_str_eq (cap.approval, "read /x?");
  ck_assert_int_eq (cap.expires, expires);
  ck_assert_int_eq (cap.logs, 0);
}
END_TEST

START_TEST (test_pending_moves_the_deadline_to_expiry_plus_timeout)
{
  /* Timeout 300 ms; the answer comes 600 ms after the pending frame, which expires in
   * 400 ms: the new deadline is about 700 ms away, so the answer is in time. */
  cleanup_free char *pending = pending_frame (fake_unix_ms () + 400, false);
  const char *const steps[] = { pending, "@600", RESULT_FRAME (CALL, "true"), NULL };
  call_server (&srv, script_play, steps, 300);
  ck_assert_int_eq (resp.exit, 11);
  ck_assert_int_eq (resp.kind, BX_CLIENT_RESULT);
  ck_assert_int_eq (cap.pendings, 1);
  ck_assert_msg (elapsed_ms >= 590, "took %lld ms", (long long)elapsed_ms);
}
END_TEST

START_TEST (test_pending_that_expired_already_leaves_the_timeout)
{
  /* expires in 1970: the new deadline is now + timeout, and a silent broker is cut there. */
  cleanup_free char *pending = pending_frame (0, false);
  const char *const steps[] = { "@100", pending, NULL };
  call_server (&srv, script_play, steps, 300);
  ck_assert_int_eq (cap.pendings, 1);
  ck_assert_int_eq (resp.exit, 5);
  ck_assert_msg (elapsed_ms >= 390 && elapsed_ms < LATE_MS, "took %lld ms", (long long)elapsed_ms);
  cap.pendings = 0; /* told once, as it should; assert_unavailable checks the rest */
  assert_unavailable (5, "no answer in time");
}
END_TEST

START_TEST (test_exit10_a_second_pending_frame_is_unavailable)
{
  cleanup_free char *pending = pending_frame (fake_unix_ms () + 1000, false);
  const char *const steps[] = { pending, pending, RESULT_FRAME (CALL, "true"), NULL };
  call_server (&srv, script_play, steps, 2000);
  ck_assert_int_eq (cap.pendings, 1);
  cap.pendings = 0;
  assert_unavailable (10, "a second pending frame");
}
END_TEST

START_TEST (test_exit10_an_expiry_at_the_end_of_time_is_unavailable)
{
  /* INT64_MAX ms from now fits the clock on its own; the timeout on top of it does not. */
  cleanup_free char *pending = pending_frame (INT64_MAX, false);
  const char *const steps[] = { pending, RESULT_FRAME (CALL, "true"), NULL };
  call_server (&srv, script_play, steps, (uint64_t)fake_unix_ms ());
  assert_unavailable (10, "an expiry too far away");
}
END_TEST

START_TEST (test_exit10_expiry_plus_a_huge_timeout_overflowing_is_unavailable)
{
  /* Neither the expiry nor the timeout alone overflows; their sum does. */
  cleanup_free char *pending = pending_frame (fake_unix_ms () + 1000, false);
  const char *const steps[] = { pending, NULL };
  call_server (&srv, script_play, steps, (uint64_t)INT64_MAX - (uint64_t)bx_now_ms () - 500);
  assert_unavailable (10, "an expiry too far away");
}
END_TEST

START_TEST (test_exits_5_to_10_apply_after_a_pending_frame)
{
  cleanup_free char *pending = pending_frame (fake_unix_ms () + 1000, false);
  const char *const steps[] = { pending, RESULT_FRAME ("other", "true"), NULL };
  call_server (&srv, script_play, steps, 2000);
  ck_assert_int_eq (cap.pendings, 1);
  cap.pendings = 0;
  assert_unavailable (6, "an answer for request other, not c1");
}
END_TEST

/* ---- The caller's own mistakes ------------------------------------------------------------ */

START_TEST (test_bad_caller_input_is_an_error_and_nothing_is_sent)
{
  fake_server_start (&srv, NULL, NULL);
  struct bx_client_options opts
      = { .socket = srv.path, .timeout_ms = 1000, .log = capture_log, .data = &cap };
  json_auto_t *args = json_object ();
  json_auto_t *array = json_array ();
  cleanup_error bx_error err = NULL;
  memset (&cap, 0, sizeof cap);
  ck_assert_int_eq (bx_client_call (&opts, "bad id", SESSION, "shell", args, &resp, &err), -1);
  ck_assert_str_eq (bx_error_msg (err), "the call id must be 1 to 64 of [A-Za-z0-9_.-]");
  ck_assert_int_eq (bx_client_call (&opts, CALL, "", "shell", args, &resp, &err), -1);
  ck_assert_str_eq (bx_error_msg (err), "the session id must be 1 to 64 of [A-Za-z0-9_.-]");
  ck_assert_int_eq (bx_client_call (&opts, CALL, SESSION, "", args, &resp, &err), -1);
  ck_assert_str_eq (bx_error_msg (err), "no tool named");
  ck_assert_int_eq (bx_client_call (&opts, CALL, SESSION, "shell", array, &resp, &err), -1);
  ck_assert_str_eq (bx_error_msg (err), "the arguments must be a JSON object");
  ck_assert_int_eq (bx_client_call (&opts, CALL, SESSION, "shell", NULL, &resp, &err), -1);
  ck_assert_int_eq (cap.logs, 0);
  memset (&resp, 0, sizeof resp);
}
END_TEST

/* ---- bx_client_grants: one grants_request, one grants answer ------------------------------ */

#define GRANT_JSON                                                                                 \
  "{\"grant\":1,\"tools\":[\"shell\"],\"folders\":[{\"path\":\"/srv/a\",\"writable\":true}],"      \
  "\"hosts\":[\"example.com\"],\"class\":\"private\",\"untrusted\":true,\"approval\":false}"
#define GRANTS_FRAME(id, final, list)                                                              \
  "{\"v\":1,\"id\":\"" id "\",\"final\":" final ",\"msg\":{\"type\":\"grants\",\"grants\":" list   \
  "}}"

/* Asks the fake server playing STEPS (script_play) for the grants: the return value, and
 * *grants and *why. */
static int
grants_from (const char *const *steps, json_t **grants, char **why)
{
  fake_server_start (&srv, script_play, steps);
  struct bx_client_options opts = { .socket = srv.path, .timeout_ms = 2000 };
  cleanup_error bx_error err = NULL;
  int r = bx_client_grants (&opts, grants, &err);
  *why = r < 0 ? bx_xstrdup (bx_error_msg (err)) : NULL;
  fake_server_join (&srv);
  return r;
}

START_TEST (test_grants_sends_one_final_grants_request_and_returns_the_list)
{
  static const char *const steps[] = { GRANTS_FRAME ("grants", "true", "[" GRANT_JSON "]"), NULL };
  json_auto_t *grants = NULL;
  cleanup_free char *why = NULL;
  ck_assert_int_eq (grants_from (steps, &grants, &why), 0);
  json_auto_t *want = json_loads ("[" GRANT_JSON "]", 0, NULL);
  ck_assert (json_equal (grants, want));
  cleanup_free char *req = json_dumps (srv.request, JSON_COMPACT);
  ck_assert_str_eq (req, "{\"v\":1,\"id\":\"grants\",\"final\":true,\"msg\":{\"type\":"
                         "\"grants_request\"}}");
}
END_TEST

START_TEST (test_grants_reports_a_refusal_and_every_malformed_answer)
{
  static const struct
  {
    const char *frame, *why;
  } cases[] = {
    /* A brokerd older than the request. */
    { "{\"v\":1,\"id\":\"grants\",\"final\":true,\"msg\":{\"type\":\"error\",\"detail\":"
      "\"unexpected message: expected a tool_request\"}}",
      "the broker reported an error: unexpected message" },
    { GRANTS_FRAME ("grants", "false", "[]"), "bad answer: expected one final grants frame" },
    { GRANTS_FRAME ("other", "true", "[]"), "bad answer: expected one final grants frame" },
    { GRANTS_FRAME ("grants", "true", "{}"), "bad answer: grants: \"grants\" must be an array" },
    { GRANTS_FRAME ("grants", "true", "[1]"), "bad answer: grant 1 is malformed" },
    { GRANTS_FRAME ("grants", "true", "[{\"grant\":1}]"), "bad answer: grant 1 is malformed" },
    { GRANTS_FRAME ("grants", "true",
                    "[" GRANT_JSON ",{\"grant\":2,\"tools\":[\"rm\"],\"folders\":[],\"hosts\":[],"
                    "\"class\":\"x\",\"untrusted\":false,\"approval\":false}]"),
      "bad answer: grant 2 is malformed" },
    { GRANTS_FRAME ("grants", "true",
                    "[{\"grant\":1,\"tools\":[],\"folders\":[{\"path\":1,\"writable\":true}],"
                    "\"hosts\":[],\"class\":\"x\",\"untrusted\":false,\"approval\":false}]"),
      "bad answer: grant 1 is malformed" },
    { "{\"v\":1,\"id\":\"grants\",\"final\":true,\"msg\":{\"type\":\"result\",\"content\":\"\","
      "\"class\":\"x\",\"untrusted\":false,\"truncated\":false}}",
      "bad answer: expected one final grants frame" },
    { "{\"v\":1}", "bad answer: frame: missing field" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      const char *const steps[] = { cases[i].frame, NULL };
      json_t *grants = NULL;
      cleanup_free char *why = NULL;
      ck_assert_int_eq (grants_from (steps, &grants, &why), -1);
      ck_assert_ptr_null (grants);
      ck_assert_msg (strncmp (why, cases[i].why, strlen (cases[i].why)) == 0, "%s: \"%s\"",
                     cases[i].frame, why);
      fake_server_stop (&srv);
    }
}
END_TEST

START_TEST (test_grants_without_a_broker_says_it_cannot_connect)
{
  struct bx_client_options opts = { .socket = "/nonexistent/broker.sock", .timeout_ms = 1000 };
  json_t *grants = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_client_grants (&opts, &grants, &err), -1);
  ck_assert_ptr_null (grants);
  ck_assert_msg (strncmp (bx_error_msg (err), "cannot connect to /nonexistent/broker.sock: ", 44)
                     == 0,
                 "%s", bx_error_msg (err));
}
END_TEST

static Suite *
client_suite (void)
{
  Suite *s = suite_create ("client");
  TCase *tc = tcase_create ("exits");
  tcase_add_checked_fixture (tc, NULL, teardown);
  tcase_set_timeout (tc, 20);
  tcase_add_test (tc, test_exit11_a_result_is_returned_unchanged_and_nothing_is_logged);
  tcase_add_test (tc, test_the_request_is_one_final_tool_request_frame_with_the_call_id);
  tcase_add_test (tc, test_exit11_a_denial_is_returned_unchanged_and_nothing_is_logged);
  tcase_add_test (tc, test_exit11_a_failure_is_returned_unchanged_and_nothing_is_logged);
  tcase_add_test (tc,
                  test_exit1_a_timeout_too_large_for_the_clock_is_unavailable_and_never_connects);
  tcase_add_test (tc, test_exit2_a_missing_socket_is_unavailable);
  tcase_add_test (tc, test_exit2_a_socket_nobody_listens_on_is_unavailable);
  tcase_add_test (tc, test_exit2_a_socket_path_too_long_is_unavailable);
  tcase_add_test (tc, test_a_zero_timeout_is_the_default);
  tcase_add_test (tc, test_exit4_a_request_over_the_frame_limit_fails_quietly_and_sends_nothing);
  tcase_add_test (tc, test_exit4_a_broker_that_closes_before_reading_the_request_is_unavailable);
  tcase_add_test (tc, test_exit4_a_broker_refusing_before_reading_is_unavailable_with_its_detail);
  tcase_add_test (tc, test_exit5_a_broker_that_closes_without_answering_is_unavailable);
  tcase_add_test (tc, test_exit5_a_broker_that_never_answers_is_cut_at_the_deadline);
  tcase_add_test (tc, test_a_cancel_from_another_thread_closes_the_connection_at_once);
  tcase_add_test (tc, test_a_cancel_before_the_call_ends_it_as_soon_as_it_connects);
  tcase_add_test (tc, test_a_call_asks_for_refusals_only_when_told);
  tcase_add_test (tc, test_exit5_a_trickling_broker_is_cut_at_the_deadline_for_the_whole_call);
  tcase_add_test (tc, test_exit5_a_garbage_frame_is_unavailable);
  tcase_add_test (tc, test_exit5_an_oversize_header_is_unavailable);
  tcase_add_test (tc, test_exit5_a_zero_length_header_is_unavailable);
  tcase_add_test (tc, test_exit5_a_frame_cut_short_by_a_close_is_unavailable);
  tcase_add_test (tc, test_exit5_a_frame_without_a_message_is_unavailable);
  tcase_add_test (tc, test_exit5_a_json_array_instead_of_a_frame_object_is_unavailable);
  tcase_add_test (tc, test_exit5_another_protocol_version_is_unavailable);
  tcase_add_test (tc, test_exit6_an_answer_for_another_request_is_unavailable);
  tcase_add_test (tc, test_exit7_an_error_message_is_unavailable_with_its_detail);
  tcase_add_test (tc, test_exit7_a_hostile_error_detail_stays_one_short_log_line);
  tcase_add_test (tc, test_exit7_an_error_for_an_unread_request_is_still_the_brokers_report);
  tcase_add_test (tc, test_exit7_a_request_sent_back_is_an_unexpected_message);
  tcase_add_test (tc, test_exit8_a_pending_frame_marked_final_is_unavailable);
  tcase_add_test (tc, test_exit9_a_result_not_marked_final_is_unavailable);
  tcase_add_test (tc, test_exit9_a_denial_not_marked_final_is_unavailable);
  tcase_add_test (tc, test_pending_then_result_tells_on_pending_once_and_returns_the_result);
  tcase_add_test (tc, test_pending_moves_the_deadline_to_expiry_plus_timeout);
  tcase_add_test (tc, test_pending_that_expired_already_leaves_the_timeout);
  tcase_add_test (tc, test_exit10_a_second_pending_frame_is_unavailable);
  tcase_add_test (tc, test_exit10_an_expiry_at_the_end_of_time_is_unavailable);
  tcase_add_test (tc, test_exit10_expiry_plus_a_huge_timeout_overflowing_is_unavailable);
  tcase_add_test (tc, test_exits_5_to_10_apply_after_a_pending_frame);
  tcase_add_test (tc, test_bad_caller_input_is_an_error_and_nothing_is_sent);
  tcase_add_test (tc, test_grants_sends_one_final_grants_request_and_returns_the_list);
  tcase_add_test (tc, test_grants_reports_a_refusal_and_every_malformed_answer);
  tcase_add_test (tc, test_grants_without_a_broker_says_it_cannot_connect);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (client_suite)
