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
#include "brokerd.h"
#include "run.h"
#include "test_main.h"
#include "tree.h"

#include <boxmaker/runtime.h>

#define SKIP_WITHOUT_FAKE()                                                                        \
  do                                                                                               \
    {                                                                                              \
      if (!BX_HAVE_FAKE)                                                                           \
        {                                                                                          \
          puts ("skipped: fake.so is built only with BX_TEST_HOOKS");                              \
          return;                                                                                  \
        }                                                                                          \
    }                                                                                              \
  while (0)

/* ---- A brokerd of the test's own. ---------------------------------------------------------- */

struct broker
{
  char dir[64];
  char config[128];
  char sock[128];
  char audit[128];
  char out[128]; /* its standard output and error */
  pid_t pid;
};

/* The folders a test made, removed when its process exits (Check runs each test in a
 * process of its own). */
static char made[8][64];
static int n_made;

static int
remove_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  remove (path);
  return 0;
}

static void
remove_made (void)
{
  for (int i = 0; i < n_made; i++)
    nftw (made[i], remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A config in a fresh folder: TOP is extra top-level keys, RUNTIME the runtime section
 * (NULL: fake in echo mode). */
static void
broker_init (struct broker *b, const char *top, const char *runtime)
{
  memset (b, 0, sizeof *b);
  strcpy (b->dir, "/tmp/bxbrokerd-XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (b->dir));
  if (n_made == 0)
    atexit (remove_made);
  if (n_made < 8)
    strcpy (made[n_made++], b->dir);
  snprintf (b->config, sizeof b->config, "%s/brokerd.yaml", b->dir);
  snprintf (b->sock, sizeof b->sock, "%s/b.sock", b->dir);
  snprintf (b->audit, sizeof b->audit, "%s/audit.log", b->dir);
  snprintf (b->out, sizeof b->out, "%s/out", b->dir);
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

/* Runs brokerd MODE on the test's config and returns its pid; output to b->out. */
static pid_t
spawn (struct broker *b, const char *mode)
{
  const char *argv[] = { BROKERD_PATH, mode, b->config, "--runtimedir", BX_TEST_RUNTIMEDIR, NULL };
  return bx_test_daemon_spawn (argv, b->out);
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

/* Starts brokerd and waits until it answers on its socket. */
static void
broker_start (struct broker *b)
{
  b->pid = spawn (b, "--config");
  bx_test_daemon_wait_listening (b->pid, b->sock, b->out);
}

/* SIGTERM, then its exit status (-1 when it did not exit normally). */
static int
broker_stop (struct broker *b)
{
  kill (b->pid, SIGTERM);
  int status;
  ck_assert_int_eq (waitpid (b->pid, &status, 0), b->pid);
  b->pid = 0;
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/* Runs brokerd MODE to completion: its exit status. */
static int
broker_run (struct broker *b, const char *mode)
{
  pid_t pid = spawn (b, mode);
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

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
    return NULL;
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
  json_t *answer = read_answer (fd, 20000);
  ck_assert_msg (answer != NULL, "no answer");
  assert_closed (fd);
  close (fd);
  return answer;
}

static json_t *
call (struct broker *b, const char *tool, const char *args)
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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  broker_start (&b);

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
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_brokerd_denies_arguments_over_the_limit)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  broker_start (&b);
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
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_brokerd_passes_a_runtime_failure_as_failed)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, "runtime:\n  module: fake\n  options:\n    mode: unavailable\n");
  broker_start (&b);
  json_t *r = call (&b, "http_fetch", "{\"url\": \"https://example.com/\"}");
  ck_assert_str_eq (msg_type (r), "failed");
  ck_assert_str_eq (msg_field (r, "message"), "the fake runtime was told to be unavailable");
  json_decref (r);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_brokerd_without_a_runtime_refuses_every_call)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, "");
  broker_start (&b);
  json_t *r = call (&b, "http_fetch", "{\"url\": \"https://example.com/\"}");
  ck_assert_str_eq (msg_type (r), "failed");
  ck_assert_str_eq (msg_field (r, "message"),
                    "no tool runtime is configured: every call is refused");
  json_decref (r);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* ---- Malformed frames: an error frame, then the connection closes. ------------------------- */

/* Sends LEN raw bytes (then half-closes when SHUT), reads the answer: an error frame. */
static json_t *
raw (struct broker *b, const void *bytes, size_t len, bool shut)
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
raw_json (struct broker *b, const char *text)
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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  broker_start (&b);

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
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* ---- Concurrency, deadlines, limits. ------------------------------------------------------- */

struct client
{
  struct broker *b;
  char args[256];
  json_t *answer;
  int64_t ms;
};

static void *
client_main (void *arg)
{
  struct client *c = arg;
  int64_t t0 = bx_now_ms ();
  int fd = connect_to (c->b->sock);
  if (fd >= 0)
    {
      json_t *f = request ("c1", "shell", c->args);
      cleanup_error bx_error err = NULL;
      if (bx_frame_write (fd, f, bx_deadline_in (5000), &err) == 0)
        c->answer = read_answer (fd, 20000);
      json_decref (f);
      close (fd);
    }
  c->ms = bx_now_ms () - t0;
  return NULL;
}

START_TEST (test_brokerd_runs_many_calls_at_once)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 500\n");
  broker_start (&b);
  enum
  {
    N = 8
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
  /* One after another would take 8 x 500 ms; the margin is for a loaded machine. */
  ck_assert_msg (total < 3000, "8 calls of 500 ms took %lld ms: not concurrent", (long long)total);
  ck_assert_msg (max_in_flight >= 2, "no two runs overlapped");
  printf ("8 concurrent calls of 500 ms: %lld ms, up to %d in flight\n", (long long)total,
          max_in_flight);
  ck_assert_int_eq (broker_stop (&b), 0);
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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, "request_timeout_ms: 1000\n", NULL);
  broker_start (&b);

  /* A: two bytes of a header, then nothing. */
  int64_t t0 = bx_now_ms ();
  int stalled = connect_to (b.sock);
  ck_assert_int_ge (stalled, 0);
  ck_assert_int_eq (write (stalled, "\x00\x00", 2), 2);

  /* B is served meanwhile, at once. */
  int64_t t1 = bx_now_ms ();
  json_t *r = call (&b, "read_file", "{\"path\": \"/etc/passwd\"}");
  ck_assert_str_eq (msg_type (r), "denied");
  json_decref (r);
  ck_assert_int_lt (bx_now_ms () - t1, 800);

  json_t *answer = read_answer (stalled, 5000);
  int64_t waited = bx_now_ms () - t0;
  ck_assert_ptr_nonnull (answer);
  ck_assert_str_eq (msg_type (answer), "error");
  ck_assert_str_eq (msg_field (answer, "detail"), "no complete request within 1000 ms");
  ck_assert_msg (waited >= 950 && waited < 5000, "cut off after %lld ms", (long long)waited);
  assert_closed (stalled);
  close (stalled);
  json_decref (answer);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* One worker takes quick calls one after the other; a call that blocks in the module hands
 * the queue to another worker within about a millisecond, so a quick call behind it is not
 * held up, and the blocked one is still answered. */
START_TEST (test_brokerd_a_blocked_run_does_not_hold_up_the_next_call)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 1500\n");
  broker_start (&b);
  struct client slow = { .b = &b };
  strcpy (slow.args, "{\"command\": \"sleep\"}");
  pthread_t t;
  pthread_create (&t, NULL, client_main, &slow);
  sleep_ms (200); /* the slow call is in its run */
  int64_t t0 = bx_now_ms ();
  for (int i = 0; i < 20; i++)
    {
      json_t *r = call (&b, "read_file", "{\"path\": \"/etc/passwd\"}");
      ck_assert_str_eq (msg_type (r), "denied");
      json_decref (r);
    }
  int64_t quick = bx_now_ms () - t0;
  printf ("20 quick calls behind a blocked run: %lld ms\n", (long long)quick);
  ck_assert_msg (quick < 1000, "20 quick calls took %lld ms behind a blocked run",
                 (long long)quick);
  pthread_join (t, NULL);
  ck_assert_ptr_nonnull (slow.answer);
  ck_assert_str_eq (msg_type (slow.answer), "result");
  json_decref (slow.answer);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_brokerd_deadline_covers_the_whole_frame_not_each_read)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, "request_timeout_ms: 500\n", NULL);
  broker_start (&b);
  /* A client trickling one byte every 100 ms never lets a single read wait 500 ms. */
  int fd = connect_to (b.sock);
  ck_assert_int_ge (fd, 0);
  int64_t t0 = bx_now_ms ();
  ck_assert_int_eq (write (fd, "\x00\x00\x00\x40", 4), 4);
  json_t *answer = NULL;
  for (int i = 0; i < 60 && answer == NULL; i++)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      if (poll (&p, 1, 100) == 1)
        answer = read_answer (fd, 1000);
      else if (send (fd, " ", 1, MSG_NOSIGNAL) != 1)
        break;
    }
  int64_t waited = bx_now_ms () - t0;
  ck_assert_ptr_nonnull (answer);
  ck_assert_str_eq (msg_field (answer, "detail"), "no complete request within 500 ms");
  ck_assert_msg (waited < 3000, "a trickling client held its connection %lld ms",
                 (long long)waited);
  json_decref (answer);
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_brokerd_refuses_past_max_connections_at_once)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, "max_connections: 2\nmax_connections_per_uid: 2\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 1500\n");
  broker_start (&b);
  /* broker_start's own probe connection is counted until its thread sees it close. */
  sleep_ms (200);
  struct client c[2];
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    {
      c[i] = (struct client){ .b = &b };
      strcpy (c[i].args, "{\"command\": \"sleep\"}");
      pthread_create (&t[i], NULL, client_main, &c[i]);
    }
  sleep_ms (500); /* both are now running */
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
  /* At once, not after the running calls' 1500 ms. */
  ck_assert_msg (waited < 1000, "the refusal took %lld ms", (long long)waited);
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
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* At max_connections, a client that connects and then neither writes nor closes holds the
 * one spare worker while its "busy" drains: nobody accepts meanwhile, so every client
 * behind it waits for that drain instead of hearing "busy" at once. */
START_TEST (test_brokerd_silent_clients_do_not_delay_busy_for_others)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, "max_connections: 2\nmax_connections_per_uid: 2\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 8000\n");
  broker_start (&b);
  sleep_ms (200); /* broker_start's probe has left its slot */
  struct client c[2];
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    {
      c[i] = (struct client){ .b = &b };
      strcpy (c[i].args, "{\"command\": \"sleep\"}");
      pthread_create (&t[i], NULL, client_main, &c[i]);
    }
  sleep_ms (300); /* both slots are running */
  enum
  {
    SILENT = 3
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
  ck_assert_msg (waited < 500, "the refusal took %lld ms behind %d silent clients",
                 (long long)waited, SILENT);
  json_decref (answer);
  close (fd);
  /* The silent ones are still held open: one that writes its request late reads its
   * refusal rather than failing to send. */
  sleep_ms (300);
  f = request ("c4", "shell", "{\"command\": \"id\"}");
  bx_error_free (&err);
  ck_assert_msg (bx_frame_write (silent[0], f, bx_deadline_in (1000), &err) == 0, "%s",
                 bx_error_msg (err));
  json_decref (f);
  answer = read_answer (silent[0], 5000);
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
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* A client that hangs up within the first milliseconds of its run, before its socket is
 * watched, still cancels the run. */
START_TEST (test_brokerd_an_early_hang_up_still_cancels)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 5000\n");
  broker_start (&b);
  int fd = connect_to (b.sock);
  ck_assert_int_ge (fd, 0);
  cleanup_error bx_error err = NULL;
  json_t *req = request ("c1", "shell", "{\"command\": \"id\"}");
  ck_assert_int_eq (bx_frame_write (fd, req, bx_deadline_in (5000), &err), 0);
  json_decref (req);
  sleep_ms (2);
  int64_t t0 = bx_now_ms ();
  close (fd);
  cleanup_free char *log = NULL;
  while (bx_now_ms () - t0 < 4000)
    {
      free (log);
      log = read_text (b.audit);
      if (log != NULL && strstr (log, "\"outcome\":\"cancelled\"") != NULL)
        break;
      sleep_ms (5);
    }
  int64_t took = bx_now_ms () - t0;
  ck_assert_msg (log != NULL && strstr (log, "\"outcome\":\"cancelled\"") != NULL, "audit: %s",
                 log ? log : "(none)");
  ck_assert_msg (took < 1000, "the call ended %lld ms after its client left", (long long)took);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* Many clients at once, quick calls, runs that block, refusals and clients that leave
 * early, against a small max_connections: every client that asks is answered, the thread
 * count stays bounded, and brokerd still stops cleanly. */
struct stress
{
  struct broker *b;
  unsigned seed;
  int64_t until;
  int answered, odd;
};

static void *
stress_main (void *arg)
{
  struct stress *st = arg;
  while (bx_now_ms () < st->until)
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
      if (bx_frame_write (fd, f, bx_deadline_in (5000), &err) == 0)
        answer = read_answer (fd, 10000);
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
        st->odd++;
      json_decref (answer);
    }
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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, "max_connections: 4\nmax_connections_per_uid: 4\ngrace_ms: 3000\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 30\n");
  broker_start (&b);
  enum
  {
    N = 12
  };
  struct stress st[N];
  pthread_t t[N];
  int64_t until = bx_now_ms () + 3000;
  for (int i = 0; i < N; i++)
    {
      st[i] = (struct stress){ .b = &b, .seed = (unsigned)i * 7919u + 1, .until = until };
      pthread_create (&t[i], NULL, stress_main, &st[i]);
    }
  int most = 0;
  while (bx_now_ms () < until)
    {
      int n = threads_of (b.pid);
      if (n > most)
        most = n;
      sleep_ms (5);
    }
  int answered = 0, odd = 0;
  for (int i = 0; i < N; i++)
    {
      pthread_join (t[i], NULL);
      answered += st[i].answered;
      odd += st[i].odd;
    }
  printf ("mixed load: %d answered, %d not, at most %d threads\n", answered, odd, most);
  ck_assert_int_eq (odd, 0);
  ck_assert_int_gt (answered, 100);
  /* max_connections + 1 workers, the main thread, the watcher, the canceller, the drainer
   * and a few of the modules' and libraries' own. */
  ck_assert_msg (most <= 4 + 1 + 8, "%d threads", most);
  int64_t t0 = bx_now_ms ();
  ck_assert_int_eq (broker_stop (&b), 0);
  ck_assert_int_lt (bx_now_ms () - t0, 2500);
}
END_TEST

START_TEST (test_brokerd_cuts_off_a_client_that_does_not_read_its_answer)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  /* One slot, and an answer of 3.2 MB: far more than a socket buffer holds. */
  broker_init (&b, "request_timeout_ms: 500\nmax_connections: 1\n",
               "runtime:\n  module: fake\n  options:\n    mode: fixed\n    content: xxxxxxxx\n"
               "    repeat: \"400000\"\n");
  broker_start (&b);
  sleep_ms (200); /* broker_start's probe has left its slot */
  int fd = connect_to (b.sock);
  ck_assert_int_ge (fd, 0);
  json_t *f = request ("c1", "shell", "{\"command\": \"cat big\"}");
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_frame_write (fd, f, bx_deadline_in (1000), &err), 0);
  json_decref (f);
  /* Its worker is stuck writing: the one slot is taken. */
  sleep_ms (200);
  json_t *r = call (&b, "shell", "{\"command\": \"id\"}");
  ck_assert_str_eq (msg_type (r), "error");
  ck_assert_str_eq (msg_field (r, "detail"), "brokerd is busy");
  json_decref (r);
  /* Past the write deadline (500 ms from when the answer was ready) the slot is free again,
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
      ck_assert_msg (bx_now_ms () - t0 < 10000, "the slot was never freed");
    }
  ck_assert_uint_eq (strlen (msg_field (r, "content")), 3200000);
  json_decref (r);
  close (fd);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* ---- The socket's life. -------------------------------------------------------------------- */

START_TEST (test_brokerd_replaces_a_stale_socket)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  /* A socket file nobody listens on: what a killed brokerd leaves. */
  int s = socket (AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  strcpy (addr.sun_path, b.sock);
  ck_assert_int_eq (bind (s, (struct sockaddr *)&addr, sizeof addr), 0);
  close (s);
  broker_start (&b);
  json_t *r = call (&b, "shell", "{\"command\": \"id\"}");
  ck_assert_str_eq (msg_type (r), "result");
  json_decref (r);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

START_TEST (test_brokerd_refuses_a_socket_a_live_brokerd_holds)
{
  SKIP_WITHOUT_FAKE ();
  struct broker a;
  broker_init (&a, NULL, NULL);
  broker_start (&a);
  struct broker second = a;
  snprintf (second.out, sizeof second.out, "%s/out2", a.dir);
  ck_assert_int_eq (broker_run (&second, "--config"), 1);
  cleanup_free char *out = read_text (second.out);
  cleanup_free char *want
      = bx_xasprintf ("brokerd: socket %s: another brokerd is already listening on it", a.sock);
  ck_assert_msg (strstr (out, want) != NULL, "got: %s", out);
  /* The first one is untouched. */
  json_t *r = call (&a, "shell", "{\"command\": \"id\"}");
  ck_assert_str_eq (msg_type (r), "result");
  json_decref (r);
  ck_assert_int_eq (broker_stop (&a), 0);
}
END_TEST

START_TEST (test_brokerd_refuses_a_path_that_is_not_a_socket)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  write_text (b.sock, "precious\n");
  ck_assert_int_eq (broker_run (&b, "--config"), 1);
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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, "socket_mode: 0600\n", NULL);
  broker_start (&b);
  struct stat st;
  ck_assert_int_eq (stat (b.sock, &st), 0);
  ck_assert_uint_eq (st.st_mode & 07777, 0600);
  ck_assert_int_eq (broker_stop (&b), 0);

  broker_init (&b, NULL, NULL);
  broker_start (&b);
  ck_assert_int_eq (stat (b.sock, &st), 0);
  ck_assert_uint_eq (st.st_mode & 07777, 0660); /* the default */
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* ---- Shutdown. ----------------------------------------------------------------------------- */

START_TEST (test_brokerd_sigterm_lets_a_running_call_finish)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, "grace_ms: 5000\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 1000\n");
  broker_start (&b);
  struct client c = { .b = &b };
  strcpy (c.args, "{\"command\": \"id\"}");
  pthread_t t;
  pthread_create (&t, NULL, client_main, &c);
  sleep_ms (300);
  kill (b.pid, SIGTERM);
  /* It stops accepting at once: the socket goes away while the call still runs. */
  struct stat st;
  int64_t t0 = bx_now_ms ();
  while (stat (b.sock, &st) == 0 && bx_now_ms () - t0 < 2000)
    sleep_ms (10);
  ck_assert_msg (stat (b.sock, &st) < 0 && errno == ENOENT, "the socket is still there");
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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, "grace_ms: 200\n",
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 5000\n");
  broker_start (&b);
  struct client c = { .b = &b };
  strcpy (c.args, "{\"command\": \"id\"}");
  pthread_t t;
  pthread_create (&t, NULL, client_main, &c);
  sleep_ms (200);
  int64_t t0 = bx_now_ms ();
  kill (b.pid, SIGINT);
  int status;
  ck_assert_int_eq (waitpid (b.pid, &status, 0), b.pid);
  int64_t took = bx_now_ms () - t0;
  ck_assert (WIFEXITED (status));
  ck_assert_int_eq (WEXITSTATUS (status), 0);
  ck_assert_msg (took < 2500, "shutdown took %lld ms with a grace of 200", (long long)took);
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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 5000\n");
  broker_start (&b);
  int fd = connect_to (b.sock);
  ck_assert_int_ge (fd, 0);
  cleanup_error bx_error err = NULL;
  json_t *req = request ("c1", "shell", "{\"command\": \"id\"}");
  ck_assert_int_eq (bx_frame_write (fd, req, bx_deadline_in (5000), &err), 0);
  json_decref (req);
  sleep_ms (300);
  int64_t t0 = bx_now_ms ();
  close (fd);
  /* The audit line is written when the call ends. */
  cleanup_free char *log = NULL;
  while (bx_now_ms () - t0 < 4000)
    {
      free (log);
      log = read_text (b.audit);
      /* (the line that says the call is running comes first) */
      if (log != NULL && strstr (log, "\"outcome\":\"cancelled\"") != NULL)
        break;
      sleep_ms (10);
    }
  int64_t took = bx_now_ms () - t0;
  ck_assert_msg (log != NULL && strstr (log, "\"outcome\":\"cancelled\"") != NULL, "audit: %s",
                 log ? log : "(none)");
  ck_assert_msg (took < 1000, "the call ended %lld ms after its client left", (long long)took);
  printf ("client hang-up: the call ended after %lld ms\n", (long long)took);
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* A client that only shuts down its sending side is still there: its call runs on and it
 * reads the answer. */
START_TEST (test_brokerd_half_close_does_not_cancel)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 500\n");
  broker_start (&b);
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
  ck_assert_int_eq (broker_stop (&b), 0);
  cleanup_free char *log = read_text (b.audit);
  ck_assert_msg (strstr (log, "\"outcome\":\"result\"") != NULL, "audit: %s", log);
}
END_TEST

/* ABI 1.1 protected paths: a grant folder that holds one, or lies in one, stops brokerd
 * before it listens, naming the grant and the path. */
START_TEST (test_brokerd_refuses_a_grant_over_a_protected_path)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  /* Every grant folder of the test lies in /tmp. */
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    protected: [/nonexistent, /tmp]\n");
  ck_assert_int_eq (broker_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *want = bx_xasprintf (
      "brokerd: %s:9: grant 1 folder %s/notes meets /tmp, which runtime module fake protects: a "
      "sandbox could read or replace it; grant a folder that neither holds it nor lies in it",
      b.config, b.dir);
  ck_assert_msg (strstr (out, want) != NULL, "got: %s\nwant: %s", out, want);
  /* A protected path away from every grant is fine, and so is one that holds none. */
  broker_init (&b, NULL,
               "runtime:\n  module: fake\n  options:\n    protected: [/usr/lib/bxrootfs]\n");
  ck_assert_int_eq (broker_run (&b, "--check-config"), 0);
}
END_TEST

/* The grant's limits, with the config's defaults under them, reach the spec (fake.so echoes
 * them); the output cap is always set, at most what a frame carries. */
START_TEST (test_brokerd_limits_reach_the_spec)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, "limits:\n  time: 2s\n  memory: 64m\n  cpus: \"0.5\"\n", NULL);
  /* --check-config shows each grant's limits, in config terms. */
  ck_assert_int_eq (broker_run (&b, "--check-config"), 0);
  cleanup_free char *summary = read_text (b.out);
  ck_assert_msg (strstr (summary, "; class internal, trusted; limits time 2000ms, memory 67108864, "
                                  "cpus 0.500\n")
                     != NULL,
                 "got: %s", summary);
  broker_start (&b);
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
  ck_assert_int_eq (broker_stop (&b), 0);
}
END_TEST

/* SIGHUP re-reads the same config and keeps serving (tests/ops covers reload in full). */
START_TEST (test_brokerd_sighup_reloads_and_keeps_serving)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  broker_start (&b);
  kill (b.pid, SIGHUP);
  sleep_ms (100);
  json_t *r = call (&b, "shell", "{\"command\": \"id\"}");
  ck_assert_str_eq (msg_type (r), "result");
  json_decref (r);
  ck_assert_int_eq (broker_stop (&b), 0);
  cleanup_free char *out = read_text (b.out);
  ck_assert_ptr_nonnull (strstr (out, "reload: "));
  ck_assert_ptr_nonnull (strstr (out, "3 grant(s) now serve"));
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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
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
  ck_assert_int_eq (broker_run (&b, "--check-config"), 0);
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
  broker_start (&b);
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
  ck_assert_int_eq (broker_stop (&b), 0);

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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  broker_start (&b);
  cleanup_free char *wargs
      = bx_xasprintf ("{\"path\": \"%s/notes/s.txt\", \"content\": \"the-secret-content\"}", b.dir);
  json_decref (call (&b, "write_file", wargs));
  json_decref (call (&b, "read_file", "{\"path\": \"/etc/passwd\"}"));
  json_decref (call (&b, "read_file", "{\"path\": 1}"));
  expect_error (raw_json (&b, REQ ("2", "c9", "true", "c9", "s")), "c9", "unsupported");
  ck_assert_int_eq (broker_stop (&b), 0);

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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  broker_start (&b);
  size_t n = 100000;
  cleanup_free char *tool = bx_xmalloc (n + 1);
  memset (tool, 'x', n);
  tool[n] = '\0';
  json_t *r = call (&b, tool, "{}");
  ck_assert_str_eq (msg_type (r), "denied");
  json_decref (r);
  ck_assert_int_eq (broker_stop (&b), 0);

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

/* ---- --check-config. ----------------------------------------------------------------------- */

START_TEST (test_brokerd_check_config_prints_a_summary)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  ck_assert_int_eq (broker_run (&b, "--check-config"), 0);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *runtime
      = bx_xasprintf ("runtime: fake (%s/fake.so, ABI 1.1)", BX_TEST_RUNTIMEDIR);
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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  cleanup_free char *text = read_text (b.config);
  cleanup_free char *more = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    rootfs: /srv/absent@sha256:" SHA64 "\n"
      "  - tools: [read_file]\n    paths: [%s/work]\n    rootfs: /srv/absent@sha256:" SHA64 "\n",
      text, b.dir, b.dir);
  write_text (b.config, more);
  ck_assert_int_eq (broker_run (&b, "--check-config"), 1);
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
  ck_assert_int_eq (broker_run (&b, "--config"), 1);
  struct stat st;
  ck_assert_int_lt (stat (b.sock, &st), 0);

  cleanup_free char *good = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    rootfs: /srv/dev@sha256:" SHA64 "\n", text,
      b.dir);
  write_text (b.config, good);
  ck_assert_int_eq (broker_run (&b, "--check-config"), 0);
  cleanup_free char *ok = read_text (b.out);
  ck_assert_msg (strstr (ok, ", in rootfs /srv/dev@sha256:" SHA64) != NULL, "got: %s", ok);

  /* A granted folder inside a grant's root: a sandbox could change the root. */
  cleanup_free char *inside = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    rootfs: %s@sha256:" SHA64 "\n", text, b.dir,
      b.dir);
  write_text (b.config, inside);
  ck_assert_int_eq (broker_run (&b, "--check-config"), 1);
  cleanup_free char *bad = read_text (b.out);
  cleanup_free char *meets = bx_xasprintf (
      "grant 4 rootfs %s@sha256:" SHA64 " meets the granted folder %s/notes", b.dir, b.dir);
  ck_assert_msg (strstr (bad, meets) != NULL, "got: %s", bad);

  /* And a granted folder that holds a grant's root. */
  cleanup_free char *holds = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    rootfs: %s/notes/dev@sha256:" SHA64 "\n",
      text, b.dir, b.dir);
  write_text (b.config, holds);
  ck_assert_int_eq (broker_run (&b, "--check-config"), 1);
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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, "runtime:\n  module: refusing\n");
  cleanup_free char *text = read_text (b.config);
  cleanup_free char *image = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    image: a@sha256:" SHA64 "\n", text, b.dir);
  write_text (b.config, image);
  ck_assert_int_eq (broker_run (&b, "--check-config"), 0);
  cleanup_free char *rootfs = bx_xasprintf (
      "%s  - tools: [shell]\n    paths: [%s/work]\n    rootfs: /srv/dev@sha256:" SHA64 "\n", text,
      b.dir);
  write_text (b.config, rootfs);
  ck_assert_int_eq (broker_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *want = bx_xasprintf ("%s:17:13: grant 4 rootfs /srv/dev@sha256:" SHA64
                                          ": runtime module refusing cannot check a grant's rootfs",
                                          b.config);
  ck_assert_msg (strstr (out, want) != NULL, "got: %s\nwant: %s", out, want);
}
END_TEST

START_TEST (test_brokerd_check_config_prints_errors_and_fails)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  write_text (b.config, "socket: relative.sock\ngrants:\n  - tools: [shel]\n");
  ck_assert_int_eq (broker_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  cleanup_free char *e1 = bx_xasprintf (
      "%s:1:9: socket \"relative.sock\" is relative: expected an absolute path", b.config);
  cleanup_free char *e2 = bx_xasprintf ("%s:3:13: unknown tool \"shel\"", b.config);
  ck_assert_msg (strstr (out, e1) != NULL && strstr (out, e2) != NULL, "got: %s", out);
}
END_TEST

START_TEST (test_brokerd_refuses_a_missing_module_before_listening)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, "runtime:\n  module: nosuch\n");
  ck_assert_int_eq (broker_run (&b, "--check-config"), 1);
  ck_assert_int_eq (broker_run (&b, "--config"), 1);
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
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, "runtime:\n  module: fake\n  options:\n    mode: sideways\n");
  ck_assert_int_eq (broker_run (&b, "--check-config"), 1);
  cleanup_free char *out = read_text (b.out);
  ck_assert_msg (strstr (out, "\"mode\"") != NULL && strstr (out, "sideways") != NULL, "got: %s",
                 out);
}
END_TEST

START_TEST (test_brokerd_refuses_an_audit_log_it_cannot_open)
{
  SKIP_WITHOUT_FAKE ();
  struct broker b;
  broker_init (&b, NULL, NULL);
  cleanup_free char *text = read_text (b.config);
  cleanup_free char *bad = bx_xasprintf ("audit: %s/no/such/folder/audit.log\n", b.dir);
  char *line = strstr (text, "audit: ");
  ck_assert_ptr_nonnull (line);
  char *end = strchr (line, '\n') + 1;
  cleanup_free char *changed = bx_xasprintf ("%.*s%s%s", (int)(line - text), text, bad, end);
  write_text (b.config, changed);
  ck_assert_int_eq (broker_run (&b, "--config"), 1);
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
  tcase_add_test (tc, test_brokerd_runs_many_calls_at_once);
  tcase_add_test (tc, test_brokerd_cuts_off_a_stalled_client_at_the_deadline);
  tcase_add_test (tc, test_brokerd_a_blocked_run_does_not_hold_up_the_next_call);
  tcase_add_test (tc, test_brokerd_deadline_covers_the_whole_frame_not_each_read);
  tcase_add_test (tc, test_brokerd_refuses_past_max_connections_at_once);
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
  tcase_add_test (tc, test_brokerd_check_config_prints_errors_and_fails);
  tcase_add_test (tc, test_brokerd_check_config_has_the_module_check_each_grants_root);
  tcase_add_test (tc, test_brokerd_refuses_a_rootfs_for_a_module_that_cannot_check_it);
  tcase_add_test (tc, test_brokerd_refuses_a_missing_module_before_listening);
  tcase_add_test (tc, test_brokerd_shows_a_module_option_refusal);
  tcase_add_test (tc, test_brokerd_refuses_an_audit_log_it_cannot_open);
  tcase_add_test (tc, test_brokerd_usage_errors_exit_2);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
