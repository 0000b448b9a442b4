/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd as a process, over a real socket, with fake.so from the build tree: the decision
 * table end to end, the spec the module receives, the labels, every malformed frame, many
 * clients at once, a stalled client, max_connections, the socket's life (stale, live, not a
 * socket, mode), shutdown on SIGTERM, the audit log, and --check-config. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"
#include "bx/message.h"
#include "brokerd_fixture.h"
#include "run.h"
#include "test_main.h"
#include "tree.h"

#include <boxmaker/runtime.h>

/* ---- A brokerd of the test's own. ---------------------------------------------------------- */

/* A config in a fresh folder: TOP is extra top-level keys, RUNTIME the runtime section
 * (NULL: fake in echo mode). */
static void
broker_init (struct bx_test_brokerd *b, const char *top, const char *runtime)
{
  bx_test_brokerd_init (b);
  cleanup_free char *text
      = bx_xasprintf ("socket: %s\n"
                      "home: %s/home\n"
                      "audit: %s\n"
                      "%s"
                      "%s"
                      "grants:\n"
                      "  - tools: [read_file, write_file]\n"
                      "    paths: [%s/notes]\n"
                      "    class: internal\n"
                      "  - tools: [shell]\n"
                      "    paths: [%s/work, %s/notes]\n"
                      "  - tools: [http_fetch]\n"
                      "    hosts: [example.com, \"*.wikipedia.org\"]\n"
                      "    class: public\n",
                      b->sock, b->dir, b->audit, top ? top : "",
                      runtime ? runtime : "runtime:\n  module: fake\n  options:\n    mode: echo\n",
                      b->dir, b->dir, b->dir);
  write_text (b->config, text);
}

static int
connect_to (const char *path)
{
  return bx_test_connect (path);
}

static void
sleep_ms (int ms)
{
  struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
  nanosleep (&ts, NULL);
}

/* How often PART occurs in TEXT. */
static int
count_of (const char *text, const char *part)
{
  int n = 0;
  for (const char *p = text; p != NULL && (p = strstr (p, part)) != NULL; p += strlen (part))
    n++;
  return n;
}

/* Waits until the audit log holds PART at least N times: an event, where a sleep would only
 * guess how long a loaded machine needs.  The bound only ends a test that would hang. */
static void
wait_audit (const struct bx_test_brokerd *b, const char *part, int n)
{
  int64_t deadline = bx_deadline_in (30000);
  for (;;)
    {
      cleanup_free char *log = read_text (b->audit);
      if (count_of (log, part) >= n)
        return;
      ck_assert_msg (bx_now_ms () < deadline, "no %d x %s in the audit log within 30 s: %s", n,
                     part, log);
      sleep_ms (5);
    }
}

#define RUNNING   "\"outcome\":\"running\""
#define CANCELLED "\"outcome\":\"cancelled\""

/* ---- Talking to it. ------------------------------------------------------------------------ */

static json_t *
request (const char *id, const char *tool, const char *args)
{
  json_t *a = json_loads (args, 0, NULL);
  ck_assert_ptr_nonnull (a);
  json_t *f = bx_msg_tool_request (id, "sess-1", tool, a);
  json_decref (a);
  return f;
}

/* Reads one frame (NULL when the connection closed or the deadline passed). */
static json_t *
read_answer (int fd, int ms)
{
  json_t *f = NULL;
  cleanup_error bx_error err = NULL;
  if (bx_frame_read (fd, bx_deadline_in (ms), &f, &err) < 0)
    {
      printf ("no answer: %s\n", bx_error_msg (err));
      return NULL;
    }
  return f;
}

/* After the final answer, brokerd closes: the next read sees the end. */
static void
assert_closed (int fd)
{
  char c;
  struct pollfd p = { .fd = fd, .events = POLLIN };
  ck_assert_int_eq (poll (&p, 1, 5000), 1);
  /* The end, or a reset when brokerd closed with bytes of ours unread. */
  ssize_t n = read (fd, &c, 1);
  ck_assert_msg (n == 0 || (n < 0 && errno == ECONNRESET), "read %zd: %s", n, strerror (errno));
}

static json_t *
exchange (const char *sock, json_t *frame)
{
  int fd = connect_to (sock);
  ck_assert_int_ge (fd, 0);
  cleanup_error bx_error err = NULL;
  ck_assert_msg (bx_frame_write (fd, frame, bx_deadline_in (5000), &err) == 0, "%s",
                 bx_error_msg (err));
  json_decref (frame);
  json_t *answer = NULL;
  cleanup_error bx_error rerr = NULL;
  int64_t t0 = bx_now_ms ();
  ck_assert_msg (bx_frame_read (fd, bx_deadline_in (60000), &answer, &rerr) == 0,
                 "no answer after %lld ms: %s", (long long)(bx_now_ms () - t0),
                 bx_error_msg (rerr));
  assert_closed (fd);
  close (fd);
  return answer;
}

static json_t *
call (struct bx_test_brokerd *b, const char *tool, const char *args)
{
  return exchange (b->sock, request ("c1", tool, args));
}

static const char *
msg_type (const json_t *frame)
{
  return json_string_value (json_object_get (json_object_get (frame, "msg"), "type"));
}

static const char *
msg_field (const json_t *frame, const char *key)
{
  return json_string_value (json_object_get (json_object_get (frame, "msg"), key));
}

/* The spec fake.so echoed back in a result. */
static json_t *
echo_of (const json_t *frame)
{
  ck_assert_str_eq (msg_type (frame), "result");
  json_t *echo = json_loads (msg_field (frame, "content"), 0, NULL);
  ck_assert_ptr_nonnull (echo);
  return echo;
}

static char *
dump (const json_t *j)
{
  return json_dumps (j, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* ---- The decision table, end to end. ------------------------------------------------------- */

START_TEST (test_brokerd_decision_table_end_to_end)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  bx_test_brokerd_start (&b);

  /* read_file inside: the folder read-only, labelled by its grant. */
  cleanup_free char *args = bx_xasprintf ("{\"path\": \"%s/notes/a.txt\"}", b.dir);
  json_t *r = call (&b, "read_file", args);
  ck_assert_str_eq (json_string_value (json_object_get (r, "id")), "c1");
  ck_assert (json_is_true (json_object_get (r, "final")));
  ck_assert_str_eq (msg_field (r, "class"), "internal");
  ck_assert (json_is_false (json_object_get (json_object_get (r, "msg"), "untrusted")));
  json_t *echo = echo_of (r);
  ck_assert_str_eq (json_string_value (json_object_get (echo, "tool")), "read_file");
  ck_assert_str_eq (json_string_value (json_object_get (echo, "call")), "c1");
  ck_assert_str_eq (json_string_value (json_object_get (echo, "session")), "sess-1");
  cleanup_free char *mounts = dump (json_object_get (echo, "mounts"));
  cleanup_free char *want = bx_xasprintf ("[{\"path\":\"%s/notes\",\"writable\":false}]", b.dir);
  ck_assert_str_eq (mounts, want);
  ck_assert (json_is_null (json_object_get (echo, "egress")));
  cleanup_free char *home = bx_xasprintf ("%s/home", b.dir);
  ck_assert_str_eq (json_string_value (json_object_get (echo, "home")), home);
  json_decref (echo);
  json_decref (r);

  /* read_file outside every folder: denied, with a reason the model can act on. */
  r = call (&b, "read_file", "{\"path\": \"/etc/passwd\"}");
  ck_assert_str_eq (msg_type (r), "denied");
  ck_assert_str_eq (msg_field (r, "reason"),
                    "read_file: /etc/passwd is outside every granted folder");
  json_decref (r);

  /* write_file inside: the folder writable; the arguments as canonical JSON. */
  cleanup_free char *wargs
      = bx_xasprintf ("{\"content\": \"hi\", \"path\": \"%s/notes/b.txt\"}", b.dir);
  r = call (&b, "write_file", wargs);
  echo = echo_of (r);
  cleanup_free char *wm = dump (json_object_get (echo, "mounts"));
  cleanup_free char *wwant = bx_xasprintf ("[{\"path\":\"%s/notes\",\"writable\":true}]", b.dir);
  ck_assert_str_eq (wm, wwant);
  cleanup_free char *wtext
      = bx_xasprintf ("{\"path\":\"%s/notes/b.txt\",\"content\":\"hi\"}", b.dir);
  ck_assert_str_eq (json_string_value (json_object_get (echo, "arguments_text")), wtext);
  json_decref (echo);
  json_decref (r);

  /* write_file to a folder granted to shell only. */
  cleanup_free char *wo = bx_xasprintf ("{\"path\": \"%s/work/x\", \"content\": \"\"}", b.dir);
  r = call (&b, "write_file", wo);
  ck_assert_str_eq (msg_type (r), "denied");
  ck_assert_ptr_nonnull (strstr (msg_field (r, "reason"), "is in a folder granted only for shell"));
  json_decref (r);

  /* shell with a cwd inside: every folder of the grant, writable, in order. */
  cleanup_free char *sargs = bx_xasprintf ("{\"command\": \"ls\", \"cwd\": \"%s/work\"}", b.dir);
  r = call (&b, "shell", sargs);
  ck_assert_str_eq (msg_field (r, "class"), "private");
  echo = echo_of (r);
  cleanup_free char *sm = dump (json_object_get (echo, "mounts"));
  cleanup_free char *swant = bx_xasprintf (
      "[{\"path\":\"%s/work\",\"writable\":true},{\"path\":\"%s/notes\",\"writable\":true}]", b.dir,
      b.dir);
  ck_assert_str_eq (sm, swant);
  json_decref (echo);
  json_decref (r);

  r = call (&b, "shell", "{\"command\": \"ls\", \"cwd\": \"/tmp\"}");
  ck_assert_str_eq (msg_type (r), "denied");
  ck_assert_str_eq (msg_field (r, "reason"),
                    "shell: cwd /tmp is outside every folder granted for shell");
  json_decref (r);

  /* http_fetch: no mounts, the grant's hosts as egress, labelled public and untrusted. */
  r = call (&b, "http_fetch", "{\"url\": \"https://EN.wikipedia.org/wiki/C\"}");
  ck_assert_str_eq (msg_field (r, "class"), "public");
  ck_assert (json_is_true (json_object_get (json_object_get (r, "msg"), "untrusted")));
  echo = echo_of (r);
  cleanup_free char *hm = dump (json_object_get (echo, "mounts"));
  cleanup_free char *he = dump (json_object_get (echo, "egress"));
  ck_assert_str_eq (hm, "[]");
  ck_assert_str_eq (he, "[\"example.com\",\"*.wikipedia.org\"]");
  cleanup_free char *hp = dump (json_object_get (echo, "egress_private"));
  ck_assert_str_eq (hp, "[]");
  json_decref (echo);
  json_decref (r);

  static const struct
  {
    const char *tool, *args, *reason;
  } denials[] = {
    { "http_fetch", "{\"url\": \"http://example.com/\"}",
      "http_fetch: only https URLs are allowed: http://example.com/" },
    { "http_fetch", "{\"url\": \"https://example.com:8443/\"}",
      "http_fetch: example.com:8443 is not a granted host and port" },
    { "http_fetch", "{\"url\": \"https://127.1/\"}",
      "http_fetch: the URL's host is an IP address: expected a host name: https://127.1/" },
    { "http_fetch", "{\"url\": \"https://evil.net/\"}",
      "http_fetch: evil.net is not a granted host" },
    /* Bad arguments: the parser's message. */
    { "read_file", "{\"path\": 5}", "read_file: \"path\" must be a string" },
    { "read_file", "{\"path\": \"/x\", \"mode\": \"r\"}", "read_file: unknown field \"mode\"" },
    { "shell", "{}", "shell: missing field \"command\"" },
    { "delete_everything", "{}",
      "unknown tool \"delete_everything\": expected read_file, write_file, shell or http_fetch" },
    /* mcp_call is brokerd's own (its command comes from the config): no client names it. */
    { "mcp_call", "{\"command\": [\"/bin/sh\"], \"method\": \"tools/list\"}",
      "unknown tool \"mcp_call\": expected read_file, write_file, shell or http_fetch" },
    /* A long name of two-byte characters is cut between characters, never inside one. */
    { "x"
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
      "{}",
      "unknown tool "
      "\"x\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...\": "
      "expected read_file, write_file, shell or http_fetch" },
    /* Control bytes never reach the reason (nor the operator's terminal) raw. */
    { "\x1b[31mred\x07", "{}",
      "unknown tool \"\\x1b[31mred\\x07\": expected read_file, write_file, shell or http_fetch" },
    { "read_file", "{\"path\": \"/etc/\\u001b[2Jx\"}",
      "read_file: /etc/\\x1b[2Jx is outside every granted folder" },
    { "read_file",
      "{\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9x\": 1, \"path\": \"/x\"}",
      NULL },
  };
  for (size_t i = 0; i < sizeof denials / sizeof denials[0]; i++)
    {
      r = call (&b, denials[i].tool, denials[i].args);
      ck_assert_msg (strcmp (msg_type (r), "denied") == 0, "%s %s: %s", denials[i].tool,
                     denials[i].args, msg_type (r));
      if (denials[i].reason != NULL)
        ck_assert_str_eq (msg_field (r, "reason"), denials[i].reason);
      else
        ck_assert_ptr_nonnull (msg_field (r, "reason")); /* valid UTF-8, or no frame at all */
      json_decref (r);
    }
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

START_TEST (test_brokerd_denies_arguments_over_the_limit)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  bx_test_brokerd_start (&b);
  /* 3 MiB of content: within a frame, over the arguments' 2 MiB. */
  size_t n = 3u << 20;
  char *content = bx_xmalloc (n + 1);
  memset (content, 'a', n);
  content[n] = '\0';
  cleanup_free char *path = bx_xasprintf ("%s/notes/big", b.dir);
  json_t *args = json_pack ("{s:s, s:s}", "path", path, "content", content);
  free (content);
  json_t *f = bx_msg_tool_request ("c1", "sess-1", "write_file", args);
  json_decref (args);
  json_t *r = exchange (b.sock, f);
  ck_assert_str_eq (msg_type (r), "denied");
  ck_assert_str_eq (msg_field (r, "reason"),
                    "write_file: the arguments are larger than 2097152 bytes");
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

START_TEST (test_brokerd_passes_a_runtime_failure_as_failed)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, "runtime:\n  module: fake\n  options:\n    mode: unavailable\n");
  bx_test_brokerd_start (&b);
  json_t *r = call (&b, "http_fetch", "{\"url\": \"https://example.com/\"}");
  ck_assert_str_eq (msg_type (r), "failed");
  ck_assert_str_eq (msg_field (r, "message"), "the fake runtime was told to be unavailable");
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

START_TEST (test_brokerd_without_a_runtime_refuses_every_call)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, "");
  bx_test_brokerd_start (&b);
  json_t *r = call (&b, "http_fetch", "{\"url\": \"https://example.com/\"}");
  ck_assert_str_eq (msg_type (r), "failed");
  ck_assert_str_eq (msg_field (r, "message"),
                    "no tool runtime is configured: every call is refused");
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* ---- Malformed frames: an error frame, then the connection closes. ------------------------- */

/* Sends LEN raw bytes (then half-closes when SHUT), reads the answer: an error frame. */
static json_t *
raw (struct bx_test_brokerd *b, const void *bytes, size_t len, bool shut)
{
  int fd = connect_to (b->sock);
  ck_assert_int_ge (fd, 0);
  ck_assert_int_eq (write (fd, bytes, len), (ssize_t)len);
  if (shut)
    shutdown (fd, SHUT_WR);
  json_t *answer = read_answer (fd, 10000);
  ck_assert_msg (answer != NULL, "no answer to a malformed frame");
  cleanup_free char *text = dump (answer);
  ck_assert_msg (strcmp (msg_type (answer), "error") == 0, "expected an error, got %s", text);
  ck_assert (json_is_true (json_object_get (answer, "final")));
  assert_closed (fd);
  close (fd);
  return answer;
}

/* A frame holding TEXT as its JSON. */
static json_t *
raw_json (struct bx_test_brokerd *b, const char *text)
{
  size_t n = strlen (text);
  cleanup_free unsigned char *buf = bx_xmalloc (n + 4);
  uint32_t be = htonl ((uint32_t)n);
  memcpy (buf, &be, 4);
  memcpy (buf + 4, text, n);
  return raw (b, buf, n + 4, false);
}

static void
expect_error (json_t *answer, const char *id, const char *detail_prefix)
{
  const char *detail = msg_field (answer, "detail");
  ck_assert_msg (strncmp (detail, detail_prefix, strlen (detail_prefix)) == 0,
                 "expected a detail starting with \"%s\", got \"%s\"", detail_prefix, detail);
  ck_assert_str_eq (json_string_value (json_object_get (answer, "id")), id);
  json_decref (answer);
}

#define REQ(v, id, final, call, session)                                                           \
  "{\"v\":" v ",\"id\":\"" id "\",\"final\":" final ",\"msg\":{\"type\":\"tool_request\","         \
  "\"call\":\"" call "\",\"session\":\"" session "\",\"tool\":\"read_file\",\"arguments\":"        \
  "{\"path\":\"/x\"}}}"

START_TEST (test_brokerd_answers_every_malformed_frame_with_an_error)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  bx_test_brokerd_start (&b);

  /* A header announcing more than a frame may hold, and one announcing nothing. */
  expect_error (raw (&b, "\xff\xff\xff\xff{}", 6, false), "", "bad frame");
  expect_error (raw (&b, "\x00\x00\x00\x00", 4, false), "", "bad frame");
  /* Truncated: the header promises 100 bytes, 10 come, then the client half-closes. */
  expect_error (raw (&b, "\x00\x00\x00\x64{\"v\":1,\"id", 14, true), "", "bad frame");
  /* A header cut short. */
  expect_error (raw (&b, "\x00\x00", 2, true), "", "bad frame");
  /* Not JSON, not an object, two values, duplicate keys. */
  expect_error (raw_json (&b, "hello, brokerd"), "", "bad frame");
  expect_error (raw_json (&b, "[1, 2]"), "", "bad frame");
  expect_error (raw_json (&b, "{} {}"), "", "bad frame");
  expect_error (raw_json (&b, "{\"v\":1,\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{}}"), "",
                "bad frame");
  /* Wrong version: said first, with the id. */
  expect_error (raw_json (&b, REQ ("2", "c9", "true", "c9", "s")), "c9",
                "unsupported protocol version 2");
  /* Bad ids: the frame's, the call's, the session's. */
  expect_error (raw_json (&b, REQ ("1", "a b", "true", "c", "s")), "", "bad id");
  expect_error (raw_json (&b, REQ ("1", "", "true", "c", "s")), "", "bad id");
  expect_error (
      raw_json (&b, REQ ("1", "x1234567890123456789012345678901234567890123456789012345678901234",
                         "true", "c", "s")),
      "", "bad id");
  expect_error (raw_json (&b, REQ ("1", "c1", "true", "../etc", "s")), "c1", "bad call id");
  expect_error (raw_json (&b, REQ ("1", "c1", "true", "c1", "s/1")), "c1", "bad session id");
  /* The frame's id must be the request's call (docs/protocol.md, the exchange, step 1). */
  expect_error (raw_json (&b, REQ ("1", "c1", "true", "c2", "s")), "c1",
                "bad id: the frame's id must equal the request's call");
  /* An id with a NUL inside is not cut at the NUL and echoed as if it were the id. */
  expect_error (raw_json (&b, REQ ("2", "c1\\u0000x", "true", "c1", "s")), "",
                "unsupported protocol version 2");
  expect_error (raw_json (&b, REQ ("1", "c1\\u0000x", "true", "c1", "s")), "", "bad message");
  /* A request that is not final, a message that is not a request, a request missing a
   * field, a field of the wrong type. */
  expect_error (raw_json (&b, REQ ("1", "c1", "false", "c1", "s")), "c1",
                "a tool_request must be final");
  expect_error (raw_json (&b, "{\"v\":1,\"id\":\"c1\",\"final\":true,\"msg\":{\"type\":\"failed\","
                              "\"message\":\"x\"}}"),
                "c1", "unexpected message");
  expect_error (raw_json (&b, "{\"v\":1,\"id\":\"c1\",\"final\":true,\"msg\":{\"type\":"
                              "\"tool_request\",\"call\":\"c1\",\"session\":\"s\",\"tool\":"
                              "\"shell\"}}"),
                "c1", "bad message");
  expect_error (raw_json (&b, "{\"v\":\"1\",\"id\":\"c1\",\"final\":true,\"msg\":{}}"), "c1",
                "bad message");

  /* Still serving after all that. */
  json_t *r = call (&b, "read_file", "{\"path\": \"/etc/passwd\"}");
  ck_assert_str_eq (msg_type (r), "denied");
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* ---- What a peer was granted. -------------------------------------------------------------- */

#define GRANTS_REQ(v, id, final, extra)                                                            \
  "{\"v\":" v ",\"id\":\"" id "\",\"final\":" final ",\"msg\":{\"type\":\"grants_request\"" extra  \
  "}}"

START_TEST (test_brokerd_answers_a_grants_request_with_what_a_model_may_know)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  bx_test_brokerd_start (&b);

  json_t *r = exchange (b.sock, bx_msg_grants_request ("g1"));
  ck_assert_str_eq (msg_type (r), "grants");
  ck_assert_str_eq (json_string_value (json_object_get (r, "id")), "g1");
  ck_assert (json_is_true (json_object_get (r, "final")));
  cleanup_free char *got = dump (json_object_get (json_object_get (r, "msg"), "grants"));
  cleanup_free char *want = bx_xasprintf (
      "[{\"grant\":1,\"tools\":[\"read_file\",\"write_file\"],"
      "\"folders\":[{\"path\":\"%s/notes\",\"writable\":true}],\"hosts\":[],"
      "\"class\":\"internal\",\"untrusted\":false,\"approval\":false},"
      "{\"grant\":2,\"tools\":[\"shell\"],\"folders\":[{\"path\":\"%s/work\",\"writable\":true},"
      "{\"path\":\"%s/notes\",\"writable\":true}],\"hosts\":[],\"class\":\"private\","
      "\"untrusted\":false,\"approval\":false},"
      "{\"grant\":3,\"tools\":[\"http_fetch\"],\"folders\":[],"
      "\"hosts\":[\"example.com\",\"*.wikipedia.org\"],\"class\":\"public\",\"untrusted\":true,"
      "\"approval\":false}]",
      b.dir, b.dir, b.dir);
  ck_assert_str_eq (got, want);
  /* Nothing of the runtime's options reaches a peer. */
  cleanup_free char *all = dump (r);
  ck_assert_ptr_null (strstr (all, "echo"));
  json_decref (r);

  /* No audit line: it is not a call.  The next call's line is the log's only one. */
  r = call (&b, "read_file", "{\"path\": \"/etc/passwd\"}");
  json_decref (r);
  wait_audit (&b, "\"call\":\"c1\"", 1);
  cleanup_free char *log = read_text (b.audit);
  ck_assert_int_eq (count_of (log, "\n"), 1);

  /* Malformed: an error naming what is wrong (and, as any refused request, an audit line),
   * then the connection closes. */
  expect_error (raw_json (&b, GRANTS_REQ ("1", "g2", "false", "")), "g2",
                "a grants_request must be final");
  expect_error (raw_json (&b, GRANTS_REQ ("1", "g3", "true", ",\"uid\":0")), "g3",
                "bad message: grants_request: unknown field \"uid\"");
  expect_error (raw_json (&b, GRANTS_REQ ("2", "g4", "true", "")), "g4",
                "unsupported protocol version 2");
  expect_error (raw_json (&b, GRANTS_REQ ("1", "g 5", "true", "")), "", "bad id");
  expect_error (raw_json (&b, "{\"v\":1,\"id\":\"g6\",\"final\":true,\"msg\":{\"type\":\"grants\","
                              "\"grants\":[]}}"),
                "g6", "unexpected message: expected a tool_request or a grants_request");

  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

START_TEST (test_brokerd_runs_shell_without_cwd_in_the_grants_first_folder)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  bx_test_brokerd_start (&b);
  json_t *r = call (&b, "shell", "{\"command\": \"pwd\"}");
  json_t *echo = echo_of (r);
  cleanup_free char *want = bx_xasprintf ("{\"command\":\"pwd\",\"cwd\":\"%s/work\"}", b.dir);
  ck_assert_str_eq (json_string_value (json_object_get (echo, "arguments_text")), want);
  json_decref (echo);
  json_decref (r);
  /* A cwd the model gives is kept as given. */
  cleanup_free char *args = bx_xasprintf ("{\"command\": \"pwd\", \"cwd\": \"%s/notes\"}", b.dir);
  r = call (&b, "shell", args);
  echo = echo_of (r);
  cleanup_free char *given = bx_xasprintf ("{\"command\":\"pwd\",\"cwd\":\"%s/notes\"}", b.dir);
  ck_assert_str_eq (json_string_value (json_object_get (echo, "arguments_text")), given);
  json_decref (echo);
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* ---- Concurrency, deadlines, limits. ------------------------------------------------------- */

struct client
{
  struct bx_test_brokerd *b;
  char args[256];
  bool until_taken; /* asks again while brokerd answers "busy" */
  json_t *answer;
  int64_t ms;
  _Atomic bool done; /* the answer is in */
};

static bool
is_busy (const json_t *answer)
{
  const char *detail = msg_field (answer, "detail");
  return strcmp (msg_type (answer), "error") == 0 && detail != NULL
         && strcmp (detail, "brokerd is busy") == 0;
}

/* One call: the request, then whatever brokerd answers.  A write that fails because brokerd
 * closed still leaves its answer (a refusal) to read. */
static json_t *
one_call (const char *sock, json_t *f)
{
  int fd = connect_to (sock);
  if (fd < 0)
    return NULL;
  cleanup_error bx_error err = NULL;
  int w = bx_frame_write (fd, f, bx_deadline_in (20000), &err);
  json_t *answer = w == 0 || bx_error_code (err) == EPIPE || bx_error_code (err) == ECONNRESET
                       ? read_answer (fd, 60000)
                       : NULL;
  close (fd);
  return answer;
}

static void *
client_main (void *arg)
{
  struct client *c = arg;
  int64_t t0 = bx_now_ms ();
  json_t *f = request ("c1", "shell", c->args);
  for (;;)
    {
      c->answer = one_call (c->b->sock, f);
      if (!c->until_taken || c->answer == NULL || !is_busy (c->answer))
        break;
      json_decref (c->answer);
      sleep_ms (20);
    }
  json_decref (f);
  c->ms = bx_now_ms () - t0;
  c->done = true;
  return NULL;
}

START_TEST (test_brokerd_runs_many_calls_at_once)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 1500\n");
  bx_test_brokerd_start (&b);
  enum
  {
    N = 8,
    DELAY_MS = 1500
  };
  struct client c[N];
  pthread_t t[N];
  int64_t t0 = bx_now_ms ();
  for (int i = 0; i < N; i++)
    {
      c[i] = (struct client){ .b = &b };
      snprintf (c[i].args, sizeof c[i].args, "{\"command\": \"echo %d\"}", i);
      pthread_create (&t[i], NULL, client_main, &c[i]);
    }
  int max_in_flight = 0;
  for (int i = 0; i < N; i++)
    {
      pthread_join (t[i], NULL);
      ck_assert_msg (c[i].answer != NULL, "client %d got no answer", i);
      json_t *echo = echo_of (c[i].answer);
      int m = (int)json_integer_value (json_object_get (echo, "max_in_flight"));
      if (m > max_in_flight)
        max_in_flight = m;
      json_decref (echo);
      json_decref (c[i].answer);
    }
  int64_t total = bx_now_ms () - t0;
  /* One after another would take N x DELAY_MS; half of that leaves a loaded machine seconds
   * of slack and still catches calls run one at a time. */
  ck_assert_msg (total < N * DELAY_MS / 2, "%d calls of %d ms took %lld ms: not concurrent", N,
                 DELAY_MS, (long long)total);
  ck_assert_msg (max_in_flight >= 2, "no two runs overlapped");
  printf ("%d concurrent calls of %d ms: %lld ms, up to %d in flight\n", N, DELAY_MS,
          (long long)total, max_in_flight);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
  /* Eight whole final audit lines and eight "running" ones, however the calls overlapped. */
  cleanup_free char *log = read_text (b.audit);
  int lines = 0, running = 0;
  for (char *line = log; *line;)
    {
      char *nl = strchr (line, '\n');
      ck_assert_ptr_nonnull (nl);
      *nl = '\0';
      json_t *j = json_loads (line, 0, NULL);
      ck_assert_msg (j != NULL, "not a JSON line: %s", line);
      if (strcmp (json_string_value (json_object_get (j, "outcome")), "running") == 0)
        running++;
      else
        lines++;
      json_decref (j);
      line = nl + 1;
    }
  ck_assert_int_eq (lines, N);
  ck_assert_int_eq (running, N);
}
END_TEST

START_TEST (test_brokerd_cuts_off_a_stalled_client_at_the_deadline)
{
  struct bx_test_brokerd b;
  broker_init (&b, "request_timeout_ms: 3000\n", NULL);
  bx_test_brokerd_start (&b);

  /* A: two bytes of a header, then nothing. */
  int64_t t0 = bx_now_ms ();
  int stalled = connect_to (b.sock);
  ck_assert_int_ge (stalled, 0);
  ck_assert_int_eq (write (stalled, "\x00\x00", 2), 2);

  /* B is served meanwhile: before A is cut off, not after. */
  json_t *r = call (&b, "read_file", "{\"path\": \"/etc/passwd\"}");
  ck_assert_str_eq (msg_type (r), "denied");
  json_decref (r);
  struct pollfd p = { .fd = stalled, .events = POLLIN };
  ck_assert_msg (poll (&p, 1, 0) == 0, "B was answered only after A was cut off (%lld ms)",
                 (long long)(bx_now_ms () - t0));

  json_t *answer = read_answer (stalled, 30000);
  int64_t waited = bx_now_ms () - t0;
  ck_assert_ptr_nonnull (answer);
  ck_assert_str_eq (msg_type (answer), "error");
  ck_assert_str_eq (msg_field (answer, "detail"), "no complete request within 3000 ms");
  /* Not before its deadline (a loaded machine is only ever later). */
  ck_assert_msg (waited >= 2950, "cut off after %lld ms", (long long)waited);
  assert_closed (stalled);
  close (stalled);
  json_decref (answer);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* One worker takes quick calls one after the other; a call that blocks in the module hands
 * the queue to another worker within about a millisecond, so a quick call behind it is not
 * held up, and the blocked one is still answered. */
/* 20 quick calls made while a slow run (fake.so with RUN_OPTION) holds the worker that took
 * it: none waits for that run to end. */
static void
quick_calls_pass_a_slow_run (const char *run_option)
{
  struct bx_test_brokerd b;
  cleanup_free char *runtime
      = bx_xasprintf ("runtime:\n  module: fake\n  options:\n    mode: echo\n    %s\n", run_option);
  broker_init (&b, NULL, runtime);
  bx_test_brokerd_start (&b);
  struct client slow = { .b = &b };
  strcpy (slow.args, "{\"command\": \"sleep\"}");
  pthread_t t;
  pthread_create (&t, NULL, client_main, &slow);
  wait_audit (&b, RUNNING, 1); /* the slow call is in its run */
  int64_t t0 = bx_now_ms ();
  for (int i = 0; i < 20; i++)
    {
      json_t *r = call (&b, "read_file", "{\"path\": \"/etc/passwd\"}");
      ck_assert_str_eq (msg_type (r), "denied");
      json_decref (r);
    }
  int64_t quick = bx_now_ms () - t0;
  printf ("20 quick calls behind a run with %s: %lld ms\n", run_option, (long long)quick);
  /* Held up, they would all wait for the run's end. */
  ck_assert_msg (!slow.done, "20 quick calls took %lld ms: the run with %s ended first",
                 (long long)quick, run_option);
  pthread_join (t, NULL);
  ck_assert_ptr_nonnull (slow.answer);
  ck_assert_str_eq (msg_type (slow.answer), "result");
  json_decref (slow.answer);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}

START_TEST (test_brokerd_a_blocked_run_does_not_hold_up_the_next_call)
{
  quick_calls_pass_a_slow_run ("delay_ms: 8000");
}
END_TEST

/* A run that never sleeps (working on the CPU, or waiting for one) is not taken for blocked
 * at once, but it is after a few ms all the same. */
START_TEST (test_brokerd_a_run_on_the_cpu_does_not_hold_up_the_next_call)
{
  quick_calls_pass_a_slow_run ("busy_ms: 8000");
}
END_TEST

START_TEST (test_brokerd_deadline_covers_the_whole_frame_not_each_read)
{
  struct bx_test_brokerd b;
  broker_init (&b, "request_timeout_ms: 500\n", NULL);
  bx_test_brokerd_start (&b);
  /* A client trickling one byte every 100 ms never lets a single read wait 500 ms, and its
   * frame of 4 KiB needs minutes of it.  An answer while it still trickles is the cut. */
  int fd = connect_to (b.sock);
  ck_assert_int_ge (fd, 0);
  int64_t t0 = bx_now_ms ();
  ck_assert_int_eq (write (fd, "\x00\x00\x10\x00", 4), 4);
  json_t *answer = NULL;
  int sent = 0;
  for (; sent < 400 && answer == NULL; sent++)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      if (poll (&p, 1, 100) == 1)
        answer = read_answer (fd, 10000);
      else if (send (fd, " ", 1, MSG_NOSIGNAL) != 1)
        break;
    }
  int64_t waited = bx_now_ms () - t0;
  printf ("a trickling client cut off after %lld ms and %d bytes\n", (long long)waited, sent);
  ck_assert_msg (answer != NULL, "a trickling client held its connection %lld ms",
                 (long long)waited);
  ck_assert_str_eq (msg_field (answer, "detail"), "no complete request within 500 ms");
  json_decref (answer);
  close (fd);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* With queue_ms 0 a connection past max_connections does not wait at all. */
START_TEST (test_brokerd_with_queue_ms_0_refuses_past_max_connections_at_once)
{
  struct bx_test_brokerd b;
  broker_init (&b, "max_connections: 2\nmax_connections_per_uid: 2\nqueue_ms: 0\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 8000\n");
  bx_test_brokerd_start (&b);
  /* broker_start's own probe connection is counted until its thread sees it close: the two
   * ask again while they hear "busy". */
  struct client c[2];
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    {
      c[i] = (struct client){ .b = &b, .until_taken = true };
      strcpy (c[i].args, "{\"command\": \"sleep\"}");
      pthread_create (&t[i], NULL, client_main, &c[i]);
    }
  wait_audit (&b, RUNNING, 2); /* both are now running */
  int64_t t0 = bx_now_ms ();
  int fd = connect_to (b.sock);
  ck_assert_int_ge (fd, 0);
  json_t *f = request ("c3", "shell", "{\"command\": \"id\"}");
  cleanup_error bx_error err = NULL;
  bx_frame_write (fd, f, bx_deadline_in (1000), &err);
  json_decref (f);
  json_t *answer = read_answer (fd, 5000);
  int64_t waited = bx_now_ms () - t0;
  ck_assert_ptr_nonnull (answer);
  cleanup_free char *text = dump (answer);
  ck_assert_msg (strcmp (msg_type (answer), "error") == 0, "expected busy, got %s", text);
  ck_assert_str_eq (msg_field (answer, "detail"), "brokerd is busy");
  /* At once, not after the running calls' 8 s. */
  printf ("busy at max_connections: %lld ms\n", (long long)waited);
  ck_assert_msg (!c[0].done && !c[1].done, "the refusal took %lld ms: a running call ended first",
                 (long long)waited);
  json_decref (answer);
  close (fd);
  for (int i = 0; i < 2; i++)
    {
      pthread_join (t[i], NULL);
      ck_assert_ptr_nonnull (c[i].answer);
      ck_assert_str_eq (msg_type (c[i].answer), "result");
      json_decref (c[i].answer);
    }
  /* With the two done, a new call is served again. */
  json_t *r = call (&b, "shell", "{\"command\": \"id\"}");
  ck_assert_str_eq (msg_type (r), "result");
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

struct queued_call
{
  const char *sock;
  json_t *answer;
};

static void *
queued_call_main (void *arg)
{
  struct queued_call *q = arg;
  json_t *f = request ("q", "shell", "{\"command\": \"id\"}");
  q->answer = one_call (q->sock, f);
  json_decref (f);
  return NULL;
}

/* N calls at once, each on a connection of its own; the answers counted as results and
 * "busy" refusals (anything else fails the test). */
static void
calls_at_once (struct bx_test_brokerd *b, int n, int *results, int *busy)
{
  struct queued_call *q = bx_xzalloc ((size_t)n * sizeof *q);
  pthread_t *t = bx_xzalloc ((size_t)n * sizeof *t);
  for (int i = 0; i < n; i++)
    {
      q[i].sock = b->sock;
      pthread_create (&t[i], NULL, queued_call_main, &q[i]);
    }
  *results = *busy = 0;
  for (int i = 0; i < n; i++)
    {
      pthread_join (t[i], NULL);
      ck_assert_ptr_nonnull (q[i].answer);
      if (is_busy (q[i].answer))
        (*busy)++;
      else
        {
          cleanup_free char *text = dump (q[i].answer);
          ck_assert_msg (strcmp (msg_type (q[i].answer), "result") == 0, "answer %s", text);
          (*results)++;
        }
      json_decref (q[i].answer);
    }
  free (q);
  free (t);
}

/* The default config (64 connections, 32 of one uid, 10 s in the queue): 64 clients of one
 * uid at once are all answered, half of them after waiting for their turn. */
START_TEST (test_brokerd_answers_64_clients_of_one_uid_at_once)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 50\n");
  bx_test_brokerd_start (&b);
  int results, busy;
  calls_at_once (&b, 64, &results, &busy);
  ck_assert_int_eq (busy, 0);
  ck_assert_int_eq (results, 64);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* Two connections, two places in the queue: of six calls at once whose runs outlast them
 * all, two run, two wait and run after, and two are told "busy" at once. */
START_TEST (test_brokerd_refuses_past_the_queue_with_the_fixed_sentence)
{
  struct bx_test_brokerd b;
  broker_init (&b, "max_connections: 2\nmax_connections_per_uid: 2\nqueue_ms: 10m\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 5000\n");
  bx_test_brokerd_start (&b);
  /* broker_start's probe may still hold a connection: a first call waits it out. */
  json_t *r = call (&b, "shell", "{\"command\": \"id\"}");
  ck_assert_str_eq (msg_type (r), "result");
  json_decref (r);
  int results, busy;
  calls_at_once (&b, 6, &results, &busy);
  ck_assert_int_eq (busy, 2);
  ck_assert_int_eq (results, 4);
  cleanup_free char *log = read_text (b.audit);
  ck_assert_int_eq (count_of (log, "\"reason\":\"brokerd is busy\""), 2);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* A call that waited queue_ms for its turn is told "busy", while the running call goes on. */
START_TEST (test_brokerd_refuses_a_wait_past_queue_ms)
{
  struct bx_test_brokerd b;
  broker_init (&b, "max_connections: 1\nqueue_ms: 300ms\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 8000\n");
  bx_test_brokerd_start (&b);
  struct client c = { .b = &b, .until_taken = true };
  strcpy (c.args, "{\"command\": \"sleep\"}");
  pthread_t t;
  pthread_create (&t, NULL, client_main, &c);
  wait_audit (&b, RUNNING, 1);
  json_t *r = call (&b, "shell", "{\"command\": \"id\"}");
  ck_assert_msg (is_busy (r), "expected busy");
  ck_assert_msg (!c.done, "the running call ended before the wait did");
  json_decref (r);
  pthread_join (t, NULL);
  ck_assert_str_eq (msg_type (c.answer), "result");
  json_decref (c.answer);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* At max_connections (and queue_ms 0), a client that connects and then neither writes nor
 * closes would hold the one spare worker while its "busy" drains: nobody would accept
 * meanwhile, so every client behind it would wait for that drain instead of hearing "busy"
 * at once. */
START_TEST (test_brokerd_silent_clients_do_not_delay_busy_for_others)
{
  struct bx_test_brokerd b;
  broker_init (&b, "max_connections: 2\nmax_connections_per_uid: 2\nqueue_ms: 0\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 8000\n");
  bx_test_brokerd_start (&b);
  struct client c[2];
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    {
      c[i] = (struct client){ .b = &b, .until_taken = true };
      strcpy (c[i].args, "{\"command\": \"sleep\"}");
      pthread_create (&t[i], NULL, client_main, &c[i]);
    }
  wait_audit (&b, RUNNING, 2); /* both slots are running */
  /* Each silent client would hold the refusals back by its drain (a second): behind six,
   * six seconds, against a bound a loaded machine keeps well within. */
  enum
  {
    SILENT = 6,
    BOUND_MS = 3000
  };
  int silent[SILENT];
  for (int i = 0; i < SILENT; i++)
    {
      silent[i] = connect_to (b.sock);
      ck_assert_int_ge (silent[i], 0);
    }
  sleep_ms (20);
  int64_t t0 = bx_now_ms ();
  int fd = connect_to (b.sock);
  ck_assert_int_ge (fd, 0);
  json_t *f = request ("c3", "shell", "{\"command\": \"id\"}");
  cleanup_error bx_error err = NULL;
  bx_frame_write (fd, f, bx_deadline_in (1000), &err);
  json_decref (f);
  json_t *answer = read_answer (fd, 10000);
  int64_t waited = bx_now_ms () - t0;
  printf ("busy behind %d silent clients: %lld ms\n", SILENT, (long long)waited);
  ck_assert_ptr_nonnull (answer);
  ck_assert_str_eq (msg_field (answer, "detail"), "brokerd is busy");
  ck_assert_msg (waited < BOUND_MS, "the refusal took %lld ms behind %d silent clients",
                 (long long)waited, SILENT);
  json_decref (answer);
  close (fd);
  /* The silent ones were refused too: one that writes its request late reads its refusal,
   * whether its write still fits in the drain or already fails. */
  sleep_ms (300);
  f = request ("c4", "shell", "{\"command\": \"id\"}");
  bx_error_free (&err);
  if (bx_frame_write (silent[0], f, bx_deadline_in (5000), &err) < 0)
    ck_assert_msg (bx_error_code (err) == EPIPE || bx_error_code (err) == ECONNRESET, "%s",
                   bx_error_msg (err));
  json_decref (f);
  answer = read_answer (silent[0], 10000);
  ck_assert_ptr_nonnull (answer);
  ck_assert_str_eq (msg_field (answer, "detail"), "brokerd is busy");
  json_decref (answer);
  for (int i = 0; i < SILENT; i++)
    close (silent[i]);
  for (int i = 0; i < 2; i++)
    {
      pthread_join (t[i], NULL);
      json_decref (c[i].answer);
    }
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* The run of a call whose client hangs up: long enough that a run that merely ended (a
 * "result", not "cancelled") is far from a loaded machine's slowest cancellation. */
enum
{
  HANG_UP_DELAY_MS = 20000
};
#define HANG_UP_RUNTIME                                                                            \
  "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 20000\n"

static void
assert_ended_by_the_hang_up (int64_t took)
{
  printf ("client hang-up: the call ended after %lld ms\n", (long long)took);
  ck_assert_msg (took < HANG_UP_DELAY_MS / 2, "the call ended %lld ms after its client left",
                 (long long)took);
}

/* A client that hangs up within the first milliseconds of its run, before its socket is
 * watched, still cancels the run. */
START_TEST (test_brokerd_an_early_hang_up_still_cancels)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, HANG_UP_RUNTIME);
  bx_test_brokerd_start (&b);
  int fd = connect_to (b.sock);
  ck_assert_int_ge (fd, 0);
  cleanup_error bx_error err = NULL;
  json_t *req = request ("c1", "shell", "{\"command\": \"id\"}");
  ck_assert_int_eq (bx_frame_write (fd, req, bx_deadline_in (5000), &err), 0);
  json_decref (req);
  sleep_ms (2);
  int64_t t0 = bx_now_ms ();
  close (fd);
  wait_audit (&b, CANCELLED, 1);
  int64_t took = bx_now_ms () - t0;
  assert_ended_by_the_hang_up (took);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* Many clients at once, quick calls, runs that block, refusals and clients that leave
 * early, against a small max_connections: every client that asks is answered, the thread
 * count stays bounded, and brokerd still stops cleanly. */
struct stress
{
  struct bx_test_brokerd *b;
  unsigned seed;
  int rounds; /* a count, not a time: a loaded machine does the same work, only slower */
  int answered, odd;
  _Atomic bool *stop;
  _Atomic int *running;
};

static void *
stress_main (void *arg)
{
  struct stress *st = arg;
  for (int round = 0; round < st->rounds && !*st->stop; round++)
    {
      int kind = (int)(rand_r (&st->seed) % 4);
      int fd = connect_to (st->b->sock);
      if (fd < 0)
        {
          st->odd++;
          continue;
        }
      if (kind == 3)
        {
          /* Leaves early: half a header, or nothing at all. */
          if (rand_r (&st->seed) % 2)
            (void)!write (fd, "\x00\x00", 2);
          close (fd);
          continue;
        }
      json_t *f = kind == 0 ? request ("q", "read_file", "{\"path\": \"/etc/passwd\"}")
                            : request ("s", "shell", "{\"command\": \"id\"}");
      cleanup_error bx_error err = NULL;
      json_t *answer = NULL;
      /* Refused at once, brokerd may close before the write ends: its answer still waits. */
      int w = bx_frame_write (fd, f, bx_deadline_in (20000), &err);
      if (w == 0 || bx_error_code (err) == EPIPE || bx_error_code (err) == ECONNRESET)
        answer = read_answer (fd, 60000);
      json_decref (f);
      close (fd);
      const char *t = answer ? msg_type (answer) : NULL;
      const char *detail = answer ? msg_field (answer, "detail") : NULL;
      if (t != NULL
          && (strcmp (t, "denied") == 0 || strcmp (t, "result") == 0
              || (strcmp (t, "error") == 0 && detail != NULL
                  && strcmp (detail, "brokerd is busy") == 0)))
        st->answered++;
      else
        {
          cleanup_free char *text = answer ? dump (answer) : NULL;
          printf ("no sound answer (write: %s): %s\n", w == 0 ? "ok" : bx_error_msg (err),
                  text ? text : "(none)");
          st->odd++;
        }
      json_decref (answer);
    }
  (*st->running)--;
  return NULL;
}

static int
threads_of (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/status", (int)pid);
  cleanup_free char *text = read_text (path);
  const char *p = text ? strstr (text, "\nThreads:") : NULL;
  return p ? atoi (p + 9) : -1;
}

START_TEST (test_brokerd_stays_sound_under_mixed_load)
{
  struct bx_test_brokerd b;
  broker_init (&b, "max_connections: 4\nmax_connections_per_uid: 4\ngrace_ms: 30000\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 30\n");
  bx_test_brokerd_start (&b);
  enum
  {
    N = 12,
    ROUNDS = 40
  };
  struct stress st[N];
  pthread_t t[N];
  _Atomic bool stop = false;
  _Atomic int running = N;
  for (int i = 0; i < N; i++)
    {
      st[i] = (struct stress){ .b = &b,
                               .seed = (unsigned)i * 7919u + 1,
                               .rounds = ROUNDS,
                               .stop = &stop,
                               .running = &running };
      pthread_create (&t[i], NULL, stress_main, &st[i]);
    }
  /* The rounds take seconds here and a few times that on a loaded machine; past two minutes
   * something hangs, and the counts below say what. */
  int64_t give_up = bx_deadline_in (120000);
  int most = 0;
  while (running > 0 && bx_now_ms () < give_up)
    {
      int n = threads_of (b.pid);
      if (n > most)
        most = n;
      sleep_ms (5);
    }
  stop = true;
  int answered = 0, odd = 0;
  for (int i = 0; i < N; i++)
    {
      pthread_join (t[i], NULL);
      answered += st[i].answered;
      odd += st[i].odd;
    }
  printf ("mixed load: %d answered, %d not, at most %d threads\n", answered, odd, most);
  ck_assert_int_eq (odd, 0);
  /* Every round but a client that leaves early asks, about three in four. */
  ck_assert_int_gt (answered, N * ROUNDS / 2);
  /* max_connections workers serving, as many waiting in the queue, one more, the main
   * thread (brokerd's loop), the watcher and a few of the modules' and libraries' own. */
  ck_assert_msg (most <= 2 * 4 + 1 + 8, "%d threads", most);
  /* Nothing is left running: brokerd stops without waiting out its grace of 30 s. */
  int64_t t0 = bx_now_ms ();
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
  int64_t took = bx_now_ms () - t0;
  ck_assert_msg (took < 15000, "stopping took %lld ms", (long long)took);
}
END_TEST

START_TEST (test_brokerd_cuts_off_a_client_that_does_not_read_its_answer)
{
  struct bx_test_brokerd b;
  /* One slot, and an answer of 3.2 MB: far more than a socket buffer holds.  The write
   * deadline leaves a loaded machine seconds to see the slot taken. */
  broker_init (&b, "request_timeout_ms: 15000\nmax_connections: 1\nqueue_ms: 0\n",
               "runtime:\n  module: fake\n  options:\n    mode: fixed\n    content: xxxxxxxx\n"
               "    repeat: \"400000\"\n");
  bx_test_brokerd_start (&b);
  /* broker_start's probe holds the one slot until brokerd sees it close: until then the big
   * call hears "busy" and asks again. */
  int fd;
  for (;;)
    {
      fd = connect_to (b.sock);
      ck_assert_int_ge (fd, 0);
      json_t *f = request ("c1", "shell", "{\"command\": \"cat big\"}");
      cleanup_error bx_error err = NULL;
      int w = bx_frame_write (fd, f, bx_deadline_in (5000), &err);
      json_decref (f);
      struct pollfd p = { .fd = fd, .events = POLLIN };
      int64_t deadline = bx_deadline_in (30000);
      for (;;)
        {
          cleanup_free char *log = read_text (b.audit);
          if (count_of (log, RUNNING) > 0)
            break;
          if (w < 0 || poll (&p, 1, 0) == 1)
            break;
          ck_assert_msg (bx_now_ms () < deadline, "neither a run nor a refusal within 30 s");
          sleep_ms (5);
        }
      cleanup_free char *log = read_text (b.audit);
      if (count_of (log, RUNNING) > 0)
        break;
      json_t *busy = read_answer (fd, 10000);
      ck_assert_msg (busy != NULL && is_busy (busy), "the big call was neither run nor refused");
      json_decref (busy);
      close (fd);
      sleep_ms (20);
    }
  /* Its worker is stuck writing: the one slot is taken. */
  json_t *r = call (&b, "shell", "{\"command\": \"id\"}");
  ck_assert_str_eq (msg_type (r), "error");
  ck_assert_str_eq (msg_field (r, "detail"), "brokerd is busy");
  json_decref (r);
  /* Past the write deadline (15 s from when the answer was ready) the slot is free again,
   * though the first client never read, and a reading client gets the whole answer. */
  int64_t t0 = bx_now_ms ();
  for (;;)
    {
      sleep_ms (200);
      r = call (&b, "shell", "{\"command\": \"id\"}");
      if (strcmp (msg_type (r), "result") == 0)
        break;
      ck_assert_str_eq (msg_field (r, "detail"), "brokerd is busy");
      json_decref (r);
      ck_assert_msg (bx_now_ms () - t0 < 90000, "the slot was never freed");
    }
  ck_assert_uint_eq (strlen (msg_field (r, "content")), 3200000);
  json_decref (r);
  close (fd);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* ---- The socket's life. -------------------------------------------------------------------- */

START_TEST (test_brokerd_replaces_a_stale_socket)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  /* A socket file nobody listens on: what a killed brokerd leaves. */
  int s = socket (AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  strcpy (addr.sun_path, b.sock);
  ck_assert_int_eq (bind (s, (struct sockaddr *)&addr, sizeof addr), 0);
  close (s);
  bx_test_brokerd_start (&b);
  json_t *r = call (&b, "shell", "{\"command\": \"id\"}");
  ck_assert_str_eq (msg_type (r), "result");
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

START_TEST (test_brokerd_refuses_a_socket_a_live_brokerd_holds)
{
  struct bx_test_brokerd a;
  broker_init (&a, NULL, NULL);
  bx_test_brokerd_start (&a);
  struct bx_test_brokerd second = a;
  snprintf (second.out, sizeof second.out, "%s/out2", a.dir);
  ck_assert_int_eq (bx_test_brokerd_run (&second, "--config"), 1);
  cleanup_free char *out = read_text (second.out);
  cleanup_free char *want
      = bx_xasprintf ("brokerd: socket %s: another brokerd is already listening on it", a.sock);
  ck_assert_msg (strstr (out, want) != NULL, "got: %s", out);
  /* The first one is untouched. */
  json_t *r = call (&a, "shell", "{\"command\": \"id\"}");
  ck_assert_str_eq (msg_type (r), "result");
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&a), 0);
}
END_TEST

START_TEST (test_brokerd_refuses_a_path_that_is_not_a_socket)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  write_text (b.sock, "precious\n");
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--config"), 1);
  cleanup_free char *out = read_text (b.out);
  ck_assert_msg (strstr (out, "the path exists and is not a socket; refusing to replace it")
                     != NULL,
                 "got: %s", out);
  cleanup_free char *kept = read_text (b.sock);
  ck_assert_str_eq (kept, "precious\n");
}
END_TEST

START_TEST (test_brokerd_creates_the_socket_with_the_configured_mode)
{
  struct bx_test_brokerd b;
  broker_init (&b, "socket_mode: 0600\n", NULL);
  bx_test_brokerd_start (&b);
  struct stat st;
  ck_assert_int_eq (stat (b.sock, &st), 0);
  ck_assert_uint_eq (st.st_mode & 07777, 0600);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);

  broker_init (&b, NULL, NULL);
  bx_test_brokerd_start (&b);
  ck_assert_int_eq (stat (b.sock, &st), 0);
  ck_assert_uint_eq (st.st_mode & 07777, 0660); /* the default */
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* ---- Shutdown. ----------------------------------------------------------------------------- */

START_TEST (test_brokerd_sigterm_lets_a_running_call_finish)
{
  struct bx_test_brokerd b;
  broker_init (&b, "grace_ms: 60000\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 5000\n");
  bx_test_brokerd_start (&b);
  struct client c = { .b = &b };
  strcpy (c.args, "{\"command\": \"id\"}");
  pthread_t t;
  pthread_create (&t, NULL, client_main, &c);
  wait_audit (&b, RUNNING, 1);
  kill (b.pid, SIGTERM);
  /* It stops accepting at once: the socket goes away while the call still runs. */
  struct stat st;
  while (stat (b.sock, &st) == 0 && !c.done)
    sleep_ms (10);
  ck_assert_msg (stat (b.sock, &st) < 0 && errno == ENOENT,
                 "the socket was still there when the call ended");
  ck_assert_int_lt (connect_to (b.sock), 0);
  pthread_join (t, NULL);
  ck_assert_ptr_nonnull (c.answer);
  ck_assert_str_eq (msg_type (c.answer), "result");
  json_decref (c.answer);
  int status;
  ck_assert_int_eq (waitpid (b.pid, &status, 0), b.pid);
  ck_assert (WIFEXITED (status));
  ck_assert_int_eq (WEXITSTATUS (status), 0);
}
END_TEST

START_TEST (test_brokerd_sigterm_stops_waiting_after_the_grace_period)
{
  struct bx_test_brokerd b;
  broker_init (&b, "grace_ms: 200\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 30000\n");
  bx_test_brokerd_start (&b);
  struct client c = { .b = &b };
  strcpy (c.args, "{\"command\": \"id\"}");
  pthread_t t;
  pthread_create (&t, NULL, client_main, &c);
  wait_audit (&b, RUNNING, 1);
  int64_t t0 = bx_now_ms ();
  kill (b.pid, SIGINT);
  int status;
  ck_assert_int_eq (waitpid (b.pid, &status, 0), b.pid);
  int64_t took = bx_now_ms () - t0;
  ck_assert (WIFEXITED (status));
  ck_assert_int_eq (WEXITSTATUS (status), 0);
  /* Waiting for the run would take its 30 s. */
  printf ("shutdown with a grace of 200 ms: %lld ms\n", (long long)took);
  ck_assert_msg (took < 15000, "shutdown took %lld ms with a grace of 200", (long long)took);
  pthread_join (t, NULL);
  /* Past the grace period the call is cancelled: fake.so stops waiting and brokerd answers
   * with the fixed sentence before it exits; the audit line says cancelled. */
  ck_assert_ptr_nonnull (c.answer);
  ck_assert_str_eq (msg_type (c.answer), "failed");
  ck_assert_str_eq (
      json_string_value (json_object_get (json_object_get (c.answer, "msg"), "message")),
      BX_SENTENCE_CANCELLED);
  json_decref (c.answer);
  struct stat st;
  ck_assert_int_lt (stat (b.sock, &st), 0);
  cleanup_free char *out = read_text (b.out);
  ck_assert_ptr_nonnull (strstr (out, "1 call(s) still running after 200 ms; cancelling them"));
  cleanup_free char *log = read_text (b.audit);
  ck_assert_msg (strstr (log, "\"outcome\":\"cancelled\"") != NULL, "audit: %s", log);
}
END_TEST

/* ABI 1.1 cancellation: a client that hangs up while its call runs cancels it.  fake.so
 * waits on the spec's cancel descriptor, so the call ends at once and the audit line says
 * cancelled; without cancellation it would run its whole 5 s delay. */
START_TEST (test_brokerd_client_hang_up_cancels_the_call)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, HANG_UP_RUNTIME);
  bx_test_brokerd_start (&b);
  int fd = connect_to (b.sock);
  ck_assert_int_ge (fd, 0);
  cleanup_error bx_error err = NULL;
  json_t *req = request ("c1", "shell", "{\"command\": \"id\"}");
  ck_assert_int_eq (bx_frame_write (fd, req, bx_deadline_in (5000), &err), 0);
  json_decref (req);
  wait_audit (&b, RUNNING, 1);
  int64_t t0 = bx_now_ms ();
  close (fd);
  /* The audit line is written when the call ends. */
  wait_audit (&b, CANCELLED, 1);
  int64_t took = bx_now_ms () - t0;
  assert_ended_by_the_hang_up (took);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* A client that only shuts down its sending side is still there: its call runs on and it
 * reads the answer. */
START_TEST (test_brokerd_half_close_does_not_cancel)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 500\n");
  bx_test_brokerd_start (&b);
  int fd = connect_to (b.sock);
  ck_assert_int_ge (fd, 0);
  cleanup_error bx_error err = NULL;
  json_t *req = request ("c1", "shell", "{\"command\": \"id\"}");
  ck_assert_int_eq (bx_frame_write (fd, req, bx_deadline_in (5000), &err), 0);
  json_decref (req);
  ck_assert_int_eq (shutdown (fd, SHUT_WR), 0);
  json_t *answer = read_answer (fd, 5000);
  ck_assert_ptr_nonnull (answer);
  ck_assert_str_eq (msg_type (answer), "result");
  json_decref (answer);
  close (fd);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
  cleanup_free char *log = read_text (b.audit);
  ck_assert_msg (strstr (log, "\"outcome\":\"result\"") != NULL, "audit: %s", log);
}
END_TEST

/* ABI 1.1 protected paths: a grant folder that holds one, or lies in one, stops brokerd
 * before it listens, naming the grant and the path. */
START_TEST (test_brokerd_refuses_a_grant_over_a_protected_path)
{
  struct bx_test_brokerd b;
  /* Every grant folder of the test lies in /tmp. */
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    protected: [/nonexistent, /tmp]\n");
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *want = bx_xasprintf (
      "brokerd: %s:10:13: path \"%s/notes\" of grant 1 lies inside /tmp, which runtime module "
      "fake protects: a sandbox could read or replace it; expected grant folders apart from it",
      b.config, b.dir);
  ck_assert_msg (strstr (out, want) != NULL, "got: %s\nwant: %s", out, want);
  /* A protected path away from every grant is fine, and so is one that holds none. */
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    protected: [/usr/lib/bxrootfs]\n");
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 0);
}
END_TEST

/* The grant's limits, with the config's defaults under them, reach the spec (fake.so echoes
 * them); the output cap is always set, at most what a frame carries. */
START_TEST (test_brokerd_limits_reach_the_spec)
{
  struct bx_test_brokerd b;
  broker_init (&b, "limits:\n  time: 2s\n  memory: 64m\n  cpus: \"0.5\"\n", NULL);
  /* --check-config shows each grant's limits, in config terms. */
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 0);
  cleanup_free char *summary = read_text (b.out);
  ck_assert_msg (strstr (summary, "; class internal, trusted; limits time 2000ms, memory 67108864, "
                                  "cpus 0.500\n")
                     != NULL,
                 "got: %s", summary);
  bx_test_brokerd_start (&b);
  json_t *r = call (&b, "shell", "{\"command\": \"id\"}");
  ck_assert_str_eq (msg_type (r), "result");
  json_t *echo = json_loads (
      json_string_value (json_object_get (json_object_get (r, "msg"), "content")), 0, NULL);
  ck_assert_ptr_nonnull (echo);
  json_t *l = json_object_get (echo, "limits");
  ck_assert_int_eq (json_integer_value (json_object_get (l, "time")), 2000);
  ck_assert_int_eq (json_integer_value (json_object_get (l, "memory")), 64 << 20);
  ck_assert_int_eq (json_integer_value (json_object_get (l, "cpus")), 500);
  ck_assert_int_eq (json_integer_value (json_object_get (l, "pids")), 0);
  ck_assert_int_eq (json_integer_value (json_object_get (l, "output")), 4128768);
  json_decref (echo);
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* SIGHUP re-reads the same config and keeps serving (tests/ops covers reload in full). */
START_TEST (test_brokerd_sighup_reloads_and_keeps_serving)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  bx_test_brokerd_start (&b);
  kill (b.pid, SIGHUP);
  /* Served after the reload: its line comes first. */
  int64_t deadline = bx_deadline_in (30000);
  cleanup_free char *out = NULL;
  for (;;)
    {
      free (out);
      out = read_text (b.out);
      if (strstr (out, "3 grant(s) now serve") != NULL)
        break;
      ck_assert_msg (bx_now_ms () < deadline, "no reload within 30 s: %s", out);
      sleep_ms (10);
    }
  ck_assert_ptr_nonnull (strstr (out, "reload: "));
  json_t *r = call (&b, "shell", "{\"command\": \"id\"}");
  ck_assert_str_eq (msg_type (r), "result");
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* ---- The audit log. ------------------------------------------------------------------------ */

/* The final audit lines of AUDIT (every line but the "running" ones), parsed, in order. */
static size_t
final_audit_lines (const char *audit, json_t **out, size_t max)
{
  cleanup_free char *log = read_text (audit);
  size_t n = 0;
  for (char *line = log; *line && n < max;)
    {
      char *nl = strchr (line, '\n');
      ck_assert_ptr_nonnull (nl);
      *nl = '\0';
      json_t *j = json_loads (line, 0, NULL);
      ck_assert_msg (j != NULL, "not a JSON line: %s", line);
      if (strcmp (json_string_value (json_object_get (j, "outcome")), "running") == 0)
        json_decref (j);
      else
        out[n++] = j;
      line = nl + 1;
    }
  return n;
}

#define SHA64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

START_TEST (test_brokerd_passes_allow_private_to_the_module_and_logs_it)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  cleanup_free char *text = read_text (b.config);
  cleanup_free char *more = bx_xasprintf ("%s"
                                          "  - tools: [http_fetch]\n"
                                          "    hosts: [\"registry.lan:5000\"]\n"
                                          "    allow_private: [10.0.0.0/8, \"fd00::/8\"]\n"
                                          "  - tools: [shell]\n"
                                          "    paths: [%s/online]\n"
                                          "    hosts: [pypi.org]\n"
                                          "    allow_private: [10.1.0.0/16]\n"
                                          "    image: localhost/dev@sha256:" SHA64 "\n"
                                          "  - tools: [shell]\n"
                                          "    paths: [%s/ro]\n"
                                          "    writable: false\n",
                                          text, b.dir, b.dir);
  write_text (b.config, more);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 0);
  cleanup_free char *summary = read_text (b.out);
  ck_assert_msg (strstr (summary, "grant 4 (line 17): http_fetch from registry.lan:5000, private "
                                  "addresses in 10.0.0.0/8, fd00::/8; class private, untrusted")
                     != NULL,
                 "got: %s", summary);
  cleanup_free char *g5 = bx_xasprintf ("grant 5 (line 20): shell in %s/online from pypi.org, "
                                        "private addresses in 10.1.0.0/16, in image "
                                        "localhost/dev@sha256:" SHA64 "; class private, untrusted",
                                        b.dir);
  ck_assert_msg (strstr (summary, g5) != NULL, "got: %s", summary);
  cleanup_free char *g6 = bx_xasprintf (
      "grant 6 (line 25): shell in %s/ro, folders read-only; class private, trusted", b.dir);
  ck_assert_msg (strstr (summary, g6) != NULL, "got: %s", summary);
  bx_test_brokerd_start (&b);
  json_t *r = call (&b, "http_fetch", "{\"url\": \"https://registry.lan:5000/v2/\"}");
  json_t *echo = echo_of (r);
  cleanup_free char *he = dump (json_object_get (echo, "egress"));
  cleanup_free char *hp = dump (json_object_get (echo, "egress_private"));
  ck_assert_str_eq (he, "[\"registry.lan:5000\"]");
  ck_assert_str_eq (hp, "[\"10.0.0.0/8\",\"fd00::/8\"]");
  json_decref (echo);
  json_decref (r);
  /* A grant without allow_private: no private range, and none in its audit line. */
  json_decref (call (&b, "http_fetch", "{\"url\": \"https://example.com/\"}"));
  /* A shell with hosts, a private range and an image: all three in its spec and its line. */
  cleanup_free char *sargs = bx_xasprintf ("{\"command\": \"pip download x\", \"cwd\": "
                                           "\"%s/online\"}",
                                           b.dir);
  r = call (&b, "shell", sargs);
  echo = echo_of (r);
  cleanup_free char *se = dump (json_object_get (echo, "egress"));
  cleanup_free char *sp = dump (json_object_get (echo, "egress_private"));
  ck_assert_str_eq (se, "[\"pypi.org\"]");
  ck_assert_str_eq (sp, "[\"10.1.0.0/16\"]");
  ck_assert_str_eq (json_string_value (json_object_get (echo, "image")),
                    "localhost/dev@sha256:" SHA64);
  json_decref (echo);
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);

  json_t *finals[4];
  size_t n = final_audit_lines (b.audit, finals, 4);
  ck_assert_uint_eq (n, 3);
  json_t *first = finals[0], *second = finals[1];
  /* Each allowed call has its "running" line besides. */
  cleanup_free char *log = read_text (b.audit);
  ck_assert_ptr_nonnull (strstr (log, "\"outcome\":\"running\""));
  cleanup_free char *logged = dump (json_object_get (first, "allow_private"));
  ck_assert_str_eq (logged, "[\"10.0.0.0/8\",\"fd00::/8\"]");
  ck_assert_ptr_null (json_object_get (second, "allow_private"));
  ck_assert_ptr_null (json_object_get (first, "image"));
  json_t *third = finals[2];
  cleanup_free char *third_private = dump (json_object_get (third, "allow_private"));
  ck_assert_str_eq (third_private, "[\"10.1.0.0/16\"]");
  ck_assert_str_eq (json_string_value (json_object_get (third, "image")),
                    "localhost/dev@sha256:" SHA64);
  json_decref (third);
  json_decref (first);
  json_decref (second);
}
END_TEST

START_TEST (test_brokerd_audit_log_has_one_line_per_call)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  bx_test_brokerd_start (&b);
  cleanup_free char *wargs
      = bx_xasprintf ("{\"path\": \"%s/notes/s.txt\", \"content\": \"the-secret-content\"}", b.dir);
  json_decref (call (&b, "write_file", wargs));
  json_decref (call (&b, "read_file", "{\"path\": \"/etc/passwd\"}"));
  json_decref (call (&b, "read_file", "{\"path\": 1}"));
  expect_error (raw_json (&b, REQ ("2", "c9", "true", "c9", "s")), "c9", "unsupported");
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);

  cleanup_free char *log = read_text (b.audit);
  ck_assert_msg (strstr (log, "the-secret-content") == NULL, "write_file's content was logged");
  json_t *lines[8];
  json_t *running = NULL;
  size_t n = 0;
  for (char *line = log; *line && n < 8;)
    {
      char *nl = strchr (line, '\n');
      ck_assert_ptr_nonnull (nl); /* every line ends with a newline */
      *nl = '\0';
      lines[n] = json_loads (line, JSON_REJECT_DUPLICATES, NULL);
      ck_assert_msg (lines[n] != NULL, "not JSON: %s", line);
      line = nl + 1;
      /* The allowed call's line before it ran: set aside, checked below. */
      if (strcmp (json_string_value (json_object_get (lines[n], "outcome")), "running") == 0)
        {
          ck_assert_ptr_null (running);
          ck_assert_uint_eq (n, 0);
          running = lines[n];
          continue;
        }
      n++;
    }
  ck_assert_uint_eq (n, 4);
  ck_assert_ptr_nonnull (running);
  ck_assert_str_eq (json_string_value (json_object_get (running, "call")), "c1");
  ck_assert_str_eq (json_string_value (json_object_get (running, "decision")), "allowed");
  json_decref (running);
  static const char *const keys[]
      = { "time",    "session",     "call",         "tool",      "uid",
          "pid",     "args",        "grant",        "decision",  "reason",
          "outcome", "duration_ms", "output_bytes", "truncated", "prev" };
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
      ck_assert_msg (json_object_get (lines[i], keys[k]) != NULL, "line %zu has no %s", i, keys[k]);

  /* 2026-11-29T23:04:19.123Z */
  const char *time = json_string_value (json_object_get (lines[0], "time"));
  ck_assert_uint_eq (strlen (time), 24);
  ck_assert (time[10] == 'T' && time[19] == '.' && time[23] == 'Z');

  ck_assert_str_eq (json_string_value (json_object_get (lines[0], "tool")), "write_file");
  ck_assert_str_eq (json_string_value (json_object_get (lines[0], "session")), "sess-1");
  ck_assert_str_eq (json_string_value (json_object_get (lines[0], "call")), "c1");
  ck_assert_int_eq (json_integer_value (json_object_get (lines[0], "grant")), 1);
  ck_assert_str_eq (json_string_value (json_object_get (lines[0], "decision")), "allowed");
  ck_assert_str_eq (json_string_value (json_object_get (lines[0], "outcome")), "result");
  ck_assert_int_eq (json_integer_value (json_object_get (lines[0], "content_bytes")), 18);
  ck_assert_int_gt (json_integer_value (json_object_get (lines[0], "output_bytes")), 0);
  /* The caller (this test) and the argument summary: the path, never the content. */
  ck_assert_int_eq (json_integer_value (json_object_get (lines[0], "uid")), (json_int_t)getuid ());
  ck_assert_int_eq (json_integer_value (json_object_get (lines[0], "pid")), (json_int_t)getpid ());
  json_t *args = json_object_get (lines[0], "args");
  cleanup_free char *wpath = bx_xasprintf ("%s/notes/s.txt", b.dir);
  ck_assert_str_eq (json_string_value (json_object_get (args, "path")), wpath);
  ck_assert_uint_eq (json_object_size (args), 1);
  ck_assert_str_eq (
      json_string_value (json_object_get (json_object_get (lines[1], "args"), "path")),
      "/etc/passwd");

  ck_assert (json_is_null (json_object_get (lines[1], "grant")));
  ck_assert_str_eq (json_string_value (json_object_get (lines[1], "decision")), "denied");
  ck_assert_str_eq (json_string_value (json_object_get (lines[1], "reason")),
                    "read_file: /etc/passwd is outside every granted folder");
  ck_assert_str_eq (json_string_value (json_object_get (lines[1], "outcome")), "denied");
  ck_assert_ptr_null (json_object_get (lines[1], "content_bytes"));

  ck_assert_str_eq (json_string_value (json_object_get (lines[2], "decision")), "error");
  ck_assert_str_eq (json_string_value (json_object_get (lines[2], "outcome")), "denied");
  ck_assert_str_eq (json_string_value (json_object_get (lines[2], "reason")),
                    "read_file: \"path\" must be a string");

  ck_assert_str_eq (json_string_value (json_object_get (lines[3], "decision")), "error");
  ck_assert_str_eq (json_string_value (json_object_get (lines[3], "outcome")), "error");
  ck_assert (json_is_null (json_object_get (lines[3], "call")));
  for (size_t i = 0; i < n; i++)
    json_decref (lines[i]);
}
END_TEST

/* The audit line of an unknown tool holds its name cut as the denial cuts it: a name of 100 kB
 * must not make a line that long (a journal splits long lines, and the part after the split
 * would be text of the model's choosing at the start of a line). */
START_TEST (test_brokerd_audit_line_cuts_an_unknown_tools_name)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  bx_test_brokerd_start (&b);
  size_t n = 100000;
  cleanup_free char *tool = bx_xmalloc (n + 1);
  memset (tool, 'x', n);
  tool[n] = '\0';
  json_t *r = call (&b, tool, "{}");
  ck_assert_str_eq (msg_type (r), "denied");
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);

  cleanup_free char *log = read_text (b.audit);
  char *nl = strchr (log, '\n');
  ck_assert_ptr_nonnull (nl);
  ck_assert_msg (nl - log < 4096, "an audit line of %zd bytes", (ssize_t)(nl - log));
  *nl = '\0';
  json_t *line = json_loads (log, 0, NULL);
  ck_assert_ptr_nonnull (line);
  ck_assert_uint_le (strlen (json_string_value (json_object_get (line, "tool"))), 64);
  json_decref (line);
}
END_TEST

/* ---- Several runtimes. --------------------------------------------------------------------- */

/* Each grant's calls run in its own runtime: refusing.so by default, fake.so for the grant
 * that names it, in one brokerd; --check-config lists both. */
START_TEST (test_brokerd_runs_each_grant_in_its_runtime)
{
  struct bx_test_brokerd b;
  bx_test_brokerd_init (&b);
  cleanup_free char *text = bx_xasprintf ("socket: %s\n"
                                          "home: %s/home\n"
                                          "audit: %s\n"
                                          "runtime:\n"
                                          "  module: refusing\n"
                                          "runtimes:\n"
                                          "  echo:\n"
                                          "    module: fake\n"
                                          "    options:\n"
                                          "      mode: echo\n"
                                          "grants:\n"
                                          "  - tools: [read_file]\n"
                                          "    paths: [%s/notes]\n"
                                          "  - tools: [read_file]\n"
                                          "    paths: [%s/work]\n"
                                          "    runtime: echo\n",
                                          b.sock, b.dir, b.audit, b.dir, b.dir);
  write_text (b.config, text);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 0);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *refusing
      = bx_xasprintf ("runtime: refusing (%s/refusing.so, ABI", BX_TEST_RUNTIMEDIR);
  cleanup_free char *fake
      = bx_xasprintf ("runtime echo: fake (%s/fake.so, ABI", BX_TEST_RUNTIMEDIR);
  ck_assert_msg (strstr (out, refusing) != NULL && strstr (out, fake) != NULL, "got: %s", out);
  cleanup_free char *g2
      = bx_xasprintf ("grant 2 (line 14): read_file in %s/work, runtime echo;", b.dir);
  ck_assert_msg (strstr (out, g2) != NULL, "got: %s", out);

  bx_test_brokerd_start (&b);
  cleanup_free char *in_default = bx_xasprintf ("{\"path\": \"%s/notes/a.txt\"}", b.dir);
  json_t *r = call (&b, "read_file", in_default);
  ck_assert_str_eq (msg_type (r), "failed");
  ck_assert_str_eq (msg_field (r, "message"),
                    "no tool runtime is configured: every call is refused");
  json_decref (r);
  cleanup_free char *in_echo = bx_xasprintf ("{\"path\": \"%s/work/a.txt\"}", b.dir);
  r = call (&b, "read_file", in_echo);
  json_t *echo = echo_of (r);
  ck_assert_str_eq (json_string_value (json_object_get (echo, "tool")), "read_file");
  json_decref (echo);
  json_decref (r);
  /* The audit line names the runtime a grant chose, and only then. */
  json_t *finals[2];
  ck_assert_uint_eq (final_audit_lines (b.audit, finals, 2), 2);
  ck_assert_ptr_null (json_object_get (finals[0], "runtime"));
  ck_assert_str_eq (json_string_value (json_object_get (finals[1], "runtime")), "echo");
  json_decref (finals[0]);
  json_decref (finals[1]);

  /* A reload that moves a grant to a runtime not loaded at start keeps the running config. */
  cleanup_free char *moved = bx_xasprintf ("%s  - tools: [read_file]\n    paths: [%s/other]\n"
                                           "    runtime: bwrap\n",
                                           text, b.dir);
  write_text (b.config, moved);
  ck_assert_int_eq (kill (b.pid, SIGHUP), 0);
  int64_t deadline = bx_deadline_in (30000);
  for (;;)
    {
      cleanup_free char *log = read_text (b.out);
      if (strstr (log, "\"runtimes\" changed, which only a restart applies") != NULL)
        break;
      ck_assert_msg (bx_now_ms () < deadline, "no refused reload in the log: %s", log);
      sleep_ms (5);
    }
  r = call (&b, "read_file", in_echo);
  echo = echo_of (r);
  json_decref (echo);
  json_decref (r);
  ck_assert_int_eq (bx_test_brokerd_stop (&b), 0);
}
END_TEST

/* A grant naming a module that is not in the runtimes folder stops the start, at the place
 * of its `runtime`. */
START_TEST (test_brokerd_refuses_a_grant_runtime_it_cannot_load)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  cleanup_free char *text = read_text (b.config);
  cleanup_free char *more = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/elsewhere]\n    runtime: nosuch\n", text, b.dir);
  write_text (b.config, more);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *want = bx_xasprintf (
      "brokerd: %s:19:14: runtime module %s/nosuch.so: no such file", b.config, BX_TEST_RUNTIMEDIR);
  ck_assert_msg (strstr (out, want) != NULL, "got: %s\nwant: %s", out, want);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--config"), 1);
}
END_TEST

/* A module is loaded once, however it is named: a link to the default's file is refused
 * before a second instance of it is made. */
START_TEST (test_brokerd_loads_a_module_file_once)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  cleanup_free char *link = bx_xasprintf ("%s/other.so", b.dir);
  cleanup_free char *target = bx_xasprintf ("%s/fake.so", BX_TEST_RUNTIMEDIR);
  ck_assert_int_eq (symlink (target, link), 0);
  cleanup_free char *text = read_text (b.config);
  cleanup_free char *more = bx_xasprintf ("%sruntimes:\n  again:\n    module: %s\n", text, link);
  write_text (b.config, more);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *want = bx_xasprintf (
      "brokerd: %s:19:13: module %s is loaded already, by the default runtime", b.config, link);
  ck_assert_msg (strstr (out, want) != NULL, "got: %s\nwant: %s", out, want);
}
END_TEST

/* ---- --check-config. ----------------------------------------------------------------------- */

START_TEST (test_brokerd_check_config_prints_a_summary)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 0);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *runtime
      = bx_xasprintf ("runtime: fake (%s/fake.so, ABI 1.4)", BX_TEST_RUNTIMEDIR);
  ck_assert_msg (strstr (out, runtime) != NULL, "got: %s", out);
  cleanup_free char *g1 = bx_xasprintf (
      "grant 1 (line 9): read_file, write_file in %s/notes; class internal, trusted", b.dir);
  ck_assert_msg (strstr (out, g1) != NULL, "got: %s", out);
  ck_assert_ptr_nonnull (
      strstr (out, "grant 3 (line 14): http_fetch from example.com, *.wikipedia.org; class "
                   "public, untrusted"));
  struct stat st;
  ck_assert_int_lt (stat (b.sock, &st), 0); /* checking never listens */
}
END_TEST

/* A grant's root is the module's to check (check_root): one it refuses stops --check-config
 * and the start, naming the line and column of the grant's key; one it accepts is in the
 * summary. */
START_TEST (test_brokerd_check_config_has_the_module_check_each_grants_root)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  cleanup_free char *text = read_text (b.config);
  cleanup_free char *more = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    rootfs: /srv/absent@sha256:" SHA64 "\n"
      "  - tools: [read_file]\n    paths: [%s/work]\n    rootfs: /srv/absent@sha256:" SHA64 "\n",
      text, b.dir, b.dir);
  write_text (b.config, more);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *want
      = bx_xasprintf ("brokerd: %s:19:13: grant 4 rootfs /srv/absent@sha256:" SHA64
                      ": fake.so has no rootfs /srv/absent@sha256:" SHA64,
                      b.config);
  ck_assert_msg (strstr (out, want) != NULL, "got: %s\nwant: %s", out, want);
  /* A root two grants name is checked once. */
  cleanup_free char *again = bx_xasprintf (
      "%s:22:13: grant 5 rootfs /srv/absent@sha256:" SHA64 ": as for grant 4", b.config);
  ck_assert_msg (strstr (out, again) != NULL, "got: %s\nwant: %s", out, again);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--config"), 1);
  struct stat st;
  ck_assert_int_lt (stat (b.sock, &st), 0);

  cleanup_free char *good = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    rootfs: /srv/dev@sha256:" SHA64 "\n", text,
      b.dir);
  write_text (b.config, good);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 0);
  cleanup_free char *ok = read_text (b.out);
  ck_assert_msg (strstr (ok, ", in rootfs /srv/dev@sha256:" SHA64) != NULL, "got: %s", ok);

  /* A granted folder inside a grant's root: a sandbox could change the root. */
  cleanup_free char *inside = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    rootfs: %s@sha256:" SHA64 "\n", text, b.dir,
      b.dir);
  write_text (b.config, inside);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 1);
  cleanup_free char *bad = read_text (b.out);
  cleanup_free char *meets = bx_xasprintf (
      "grant 4 rootfs %s@sha256:" SHA64 " meets the granted folder %s/notes", b.dir, b.dir);
  ck_assert_msg (strstr (bad, meets) != NULL, "got: %s", bad);

  /* And a granted folder that holds a grant's root. */
  cleanup_free char *holds = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    rootfs: %s/notes/dev@sha256:" SHA64 "\n",
      text, b.dir, b.dir);
  write_text (b.config, holds);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 1);
  cleanup_free char *held = read_text (b.out);
  cleanup_free char *holder = bx_xasprintf ("grant 4 rootfs %s/notes/dev@sha256:" SHA64
                                            " meets the granted folder %s/notes",
                                            b.dir, b.dir);
  ck_assert_msg (strstr (held, holder) != NULL, "got: %s", held);
}
END_TEST

/* A module without check_root (refusing.so) gets a grant's image unchecked, and cannot take a
 * grant's rootfs. */
START_TEST (test_brokerd_refuses_a_rootfs_for_a_module_that_cannot_check_it)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, "runtime:\n  module: refusing\n");
  cleanup_free char *text = read_text (b.config);
  cleanup_free char *image = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    image: a@sha256:" SHA64 "\n", text, b.dir);
  write_text (b.config, image);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 0);
  cleanup_free char *rootfs = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    rootfs: /srv/dev@sha256:" SHA64 "\n", text,
      b.dir);
  write_text (b.config, rootfs);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *want = bx_xasprintf ("%s:17:13: grant 4 rootfs /srv/dev@sha256:" SHA64
                                          ": runtime module refusing cannot check a grant's rootfs",
                                          b.config);
  ck_assert_msg (strstr (out, want) != NULL, "got: %s\nwant: %s", out, want);
}
END_TEST

START_TEST (test_brokerd_check_config_prints_errors_and_fails)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  write_text (b.config, "socket: relative.sock\ngrants:\n  - tools: [shel]\n");
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *e1 = bx_xasprintf (
      "%s:1:9: socket \"relative.sock\" is relative: expected an absolute path", b.config);
  cleanup_free char *e2 = bx_xasprintf ("%s:3:13: unknown tool \"shel\"", b.config);
  ck_assert_msg (strstr (out, e1) != NULL && strstr (out, e2) != NULL, "got: %s", out);
}
END_TEST

START_TEST (test_brokerd_refuses_a_missing_module_before_listening)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, "runtime:\n  module: nosuch\n");
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 1);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--config"), 1);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *file = bx_xasprintf ("%s/nosuch.so", BX_TEST_RUNTIMEDIR);
  ck_assert_msg (strstr (out, file) != NULL, "got: %s", out);
  ck_assert_msg (strncmp (out, "brokerd: ", 9) == 0, "got: %s", out);
  struct stat st;
  ck_assert_int_lt (stat (b.sock, &st), 0);
}
END_TEST

START_TEST (test_brokerd_shows_a_module_option_refusal)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, "runtime:\n  module: fake\n  options:\n    mode: sideways\n");
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  ck_assert_msg (strstr (out, "\"mode\"") != NULL && strstr (out, "sideways") != NULL, "got: %s",
                 out);
}
END_TEST

/* One run lists the config's errors and then the module's refusal of its options: the owner
 * need not fix the one to hear of the other. */
START_TEST (test_brokerd_check_config_lists_config_errors_and_the_modules_refusal)
{
  struct bx_test_brokerd b;
  broker_init (&b, "max_connections: 0\n",
               "runtime:\n  module: fake\n  options:\n    mode: sideways\n");
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *config_error = bx_xasprintf (
      "%s:4:18: \"max_connections\" is \"0\": expected an integer from 1 to 4096\n", b.config);
  cleanup_free char *module_error
      = bx_xasprintf ("brokerd: %s:6:11: runtime module %s/fake.so: options rejected:", b.config,
                      BX_TEST_RUNTIMEDIR);
  const char *first = strstr (out, config_error);
  const char *second = strstr (out, module_error);
  ck_assert_msg (first != NULL && second != NULL && first < second, "got: %s", out);
  ck_assert_msg (strstr (out, "sideways") != NULL, "got: %s", out);
}
END_TEST

START_TEST (test_brokerd_refuses_an_audit_log_it_cannot_open)
{
  struct bx_test_brokerd b;
  broker_init (&b, NULL, NULL);
  cleanup_free char *text = read_text (b.config);
  cleanup_free char *bad = bx_xasprintf ("audit: %s/no/such/folder/audit.log\n", b.dir);
  char *line = strstr (text, "audit: ");
  ck_assert_ptr_nonnull (line);
  char *end = strchr (line, '\n') + 1;
  cleanup_free char *changed = bx_xasprintf ("%.*s%s%s", (int)(line - text), text, bad, end);
  write_text (b.config, changed);
  ck_assert_int_eq (bx_test_brokerd_run (&b, "--config"), 1);
  cleanup_free char *out = read_text (b.out);
  ck_assert_msg (strstr (out, "brokerd: cannot open the audit log") != NULL, "got: %s", out);
  struct stat st;
  ck_assert_int_lt (stat (b.sock, &st), 0);
}
END_TEST

START_TEST (test_brokerd_usage_errors_exit_2)
{
  const char *argv[] = { BROKERD_PATH, NULL };
  struct run_result r;
  run_program (argv, NULL, 0, NULL, &r);
  ck_assert (WIFEXITED (r.status));
  ck_assert_int_eq (WEXITSTATUS (r.status), 2);
  run_result_free (&r);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("broker_brokerd");
  TCase *tc = tcase_create ("brokerd");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_brokerd_decision_table_end_to_end);
  tcase_add_test (tc, test_brokerd_denies_arguments_over_the_limit);
  tcase_add_test (tc, test_brokerd_passes_a_runtime_failure_as_failed);
  tcase_add_test (tc, test_brokerd_without_a_runtime_refuses_every_call);
  tcase_add_test (tc, test_brokerd_answers_every_malformed_frame_with_an_error);
  tcase_add_test (tc, test_brokerd_answers_a_grants_request_with_what_a_model_may_know);
  tcase_add_test (tc, test_brokerd_runs_shell_without_cwd_in_the_grants_first_folder);
  tcase_add_test (tc, test_brokerd_runs_many_calls_at_once);
  tcase_add_test (tc, test_brokerd_cuts_off_a_stalled_client_at_the_deadline);
  tcase_add_test (tc, test_brokerd_a_blocked_run_does_not_hold_up_the_next_call);
  tcase_add_test (tc, test_brokerd_a_run_on_the_cpu_does_not_hold_up_the_next_call);
  tcase_add_test (tc, test_brokerd_deadline_covers_the_whole_frame_not_each_read);
  tcase_add_test (tc, test_brokerd_with_queue_ms_0_refuses_past_max_connections_at_once);
  tcase_add_test (tc, test_brokerd_answers_64_clients_of_one_uid_at_once);
  tcase_add_test (tc, test_brokerd_refuses_past_the_queue_with_the_fixed_sentence);
  tcase_add_test (tc, test_brokerd_refuses_a_wait_past_queue_ms);
  tcase_add_test (tc, test_brokerd_cuts_off_a_client_that_does_not_read_its_answer);
  tcase_add_test (tc, test_brokerd_silent_clients_do_not_delay_busy_for_others);
  tcase_add_test (tc, test_brokerd_an_early_hang_up_still_cancels);
  tcase_add_test (tc, test_brokerd_stays_sound_under_mixed_load);
  tcase_add_test (tc, test_brokerd_replaces_a_stale_socket);
  tcase_add_test (tc, test_brokerd_refuses_a_socket_a_live_brokerd_holds);
  tcase_add_test (tc, test_brokerd_refuses_a_path_that_is_not_a_socket);
  tcase_add_test (tc, test_brokerd_creates_the_socket_with_the_configured_mode);
  tcase_add_test (tc, test_brokerd_sigterm_lets_a_running_call_finish);
  tcase_add_test (tc, test_brokerd_sigterm_stops_waiting_after_the_grace_period);
  tcase_add_test (tc, test_brokerd_sighup_reloads_and_keeps_serving);
  tcase_add_test (tc, test_brokerd_client_hang_up_cancels_the_call);
  tcase_add_test (tc, test_brokerd_half_close_does_not_cancel);
  tcase_add_test (tc, test_brokerd_limits_reach_the_spec);
  tcase_add_test (tc, test_brokerd_refuses_a_grant_over_a_protected_path);
  tcase_add_test (tc, test_brokerd_audit_log_has_one_line_per_call);
  tcase_add_test (tc, test_brokerd_passes_allow_private_to_the_module_and_logs_it);
  tcase_add_test (tc, test_brokerd_audit_line_cuts_an_unknown_tools_name);
  tcase_add_test (tc, test_brokerd_check_config_prints_a_summary);
  tcase_add_test (tc, test_brokerd_runs_each_grant_in_its_runtime);
  tcase_add_test (tc, test_brokerd_refuses_a_grant_runtime_it_cannot_load);
  tcase_add_test (tc, test_brokerd_loads_a_module_file_once);
  tcase_add_test (tc, test_brokerd_check_config_prints_errors_and_fails);
  tcase_add_test (tc, test_brokerd_check_config_lists_config_errors_and_the_modules_refusal);
  tcase_add_test (tc, test_brokerd_check_config_has_the_module_check_each_grants_root);
  tcase_add_test (tc, test_brokerd_refuses_a_rootfs_for_a_module_that_cannot_check_it);
  tcase_add_test (tc, test_brokerd_refuses_a_missing_module_before_listening);
  tcase_add_test (tc, test_brokerd_shows_a_module_option_refusal);
  tcase_add_test (tc, test_brokerd_refuses_an_audit_log_it_cannot_open);
  tcase_add_test (tc, test_brokerd_usage_errors_exit_2);
  suite_add_tcase (s, tc);
  return s;
}

/* Every test but the last needs fake.so; a build without it has nothing here worth a pass. */
BX_TEST_MAIN_UNLESS (BX_HAVE_FAKE ? NULL : "fake.so is built only with BX_TEST_HOOKS", make_suite)
