/* SPDX-License-Identifier: Apache-2.0 */
/* Frames (bx/frame.h) and the deadline they are read under (bx/deadline.h): the wire format,
 * every way a peer can get it wrong, and a peer that trickles bytes. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bx/deadline.h"
#include "bx/frame.h"
#include "table.h"
#include "test_main.h"

static void
sleep_ms (int ms)
{
  struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };
  while (nanosleep (&ts, &ts) != 0 && errno == EINTR)
    ;
}

static void
pair (int sv[2])
{
  ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static void
write_all (int fd, const void *buf, size_t len)
{
  bx_error err = NULL;
  ck_assert_int_eq (bx_write_full (fd, buf, len, bx_deadline_in (5000), &err), 0);
}

/* A header and a body as one buffer. */
static size_t
make_frame (unsigned char *buf, uint32_t header_len, const char *body, size_t body_len)
{
  buf[0] = (unsigned char)(header_len >> 24);
  buf[1] = (unsigned char)(header_len >> 16);
  buf[2] = (unsigned char)(header_len >> 8);
  buf[3] = (unsigned char)header_len;
  memcpy (buf + 4, body, body_len);
  return 4 + body_len;
}

/* ---- decoding from memory ---- */

#define BODY(lit) lit, sizeof (lit) - 1

static const struct
{
  const char *name;
  const char *body;
  size_t body_len;
  int code; /* 0 for success */
} body_table[] = {
  { "a frame object", BODY ("{\"v\":1,\"id\":\"a\",\"final\":true,\"msg\":{}}"), 0 },
  { "an empty object", BODY ("{}"), 0 },
  { "whitespace around", BODY (" \n{}\t\r\n "), 0 },
  { "an escaped NUL in a string", BODY ("{\"a\":\"x\\u0000y\"}"), 0 },
  { "nested objects", BODY ("{\"a\":{\"b\":{\"c\":[1,2,{}]}}}"), 0 },
  { "duplicate keys", BODY ("{\"a\":1,\"a\":2}"), BX_FRAME_BAD },
  { "nested duplicate keys", BODY ("{\"msg\":{\"type\":\"x\",\"type\":\"y\"}}"), BX_FRAME_BAD },
  { "an array", BODY ("[]"), BX_FRAME_BAD },
  { "a string", BODY ("\"x\""), BX_FRAME_BAD },
  { "a number", BODY ("1"), BX_FRAME_BAD },
  { "null", BODY ("null"), BX_FRAME_BAD },
  { "two objects", BODY ("{}{}"), BX_FRAME_BAD },
  { "trailing garbage", BODY ("{} x"), BX_FRAME_BAD },
  { "a cut object", BODY ("{\"a\":"), BX_FRAME_BAD },
  { "not JSON", BODY ("hello"), BX_FRAME_BAD },
  { "a raw NUL", BODY ("{\"a\":\"x\0y\"}"), BX_FRAME_BAD },
  { "a NUL after the object", BODY ("{}\0"), BX_FRAME_BAD },
  { "a NUL in a key", BODY ("{\"a\\u0000b\":1}"), BX_FRAME_BAD },
  { "invalid UTF-8", BODY ("{\"a\":\"\xff\"}"), BX_FRAME_BAD },
  { "a lone surrogate escape", BODY ("{\"a\":\"\\udc00\"}"), BX_FRAME_BAD },
  { "only spaces", BODY ("   "), BX_FRAME_BAD },
};

static int
body_row (size_t row)
{
  unsigned char buf[256];
  size_t len = make_frame (buf, (uint32_t)body_table[row].body_len, body_table[row].body,
                           body_table[row].body_len);
  json_t *obj = NULL;
  bx_error err = NULL;
  int r = bx_frame_decode (buf, len, &obj, &err);
  bool is_object = json_is_object (obj);
  json_decref (obj);
  int code = bx_error_code (err);
  bool prefixed = err == NULL || strncmp (bx_error_msg (err), "frame: ", 7) == 0;
  bx_error_free (&err);
  if (body_table[row].code == 0)
    EXPECT (r == 0 && is_object, "%s: should decode (code %d)", body_table[row].name, code);
  else
    EXPECT (r < 0 && code == body_table[row].code && prefixed, "%s: should fail with %d, got %d",
            body_table[row].name, body_table[row].code, code);
  return 0;
}

START_TEST (test_frame_decode_follows_the_body_table)
{
  RUN_TABLE (body_table, body_row);
}
END_TEST

START_TEST (test_frame_decode_checks_the_length_against_the_bytes)
{
  unsigned char buf[64] = { 0 };
  json_t *obj = NULL;
  bx_error err = NULL;

  ck_assert_int_lt (bx_frame_decode (buf, 0, &obj, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_CLOSED);
  make_frame (buf, 2, "{}", 2);
  ck_assert_int_lt (bx_frame_decode (buf, 3, &obj, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TRUNCATED);
  ck_assert_int_lt (bx_frame_decode (buf, 5, &obj, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TRUNCATED);
  ck_assert_int_eq (bx_frame_decode (buf, 6, &obj, &err), 0);
  json_decref (obj);
  /* One byte more than the header says. */
  make_frame (buf, 2, "{} ", 3);
  ck_assert_int_lt (bx_frame_decode (buf, 7, &obj, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_BAD);
  /* Lengths 0, BX_FRAME_MAX + 1 and the largest are refused from the header alone. */
  make_frame (buf, 0, "", 0);
  ck_assert_int_lt (bx_frame_decode (buf, 4, &obj, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TOO_LARGE);
  make_frame (buf, BX_FRAME_MAX + 1, "{}", 2);
  ck_assert_int_lt (bx_frame_decode (buf, 6, &obj, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TOO_LARGE);
  make_frame (buf, 0xffffffffu, "{}", 2);
  ck_assert_int_lt (bx_frame_decode (buf, 6, &obj, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TOO_LARGE);
  bx_error_free (&err);
}
END_TEST

/* ---- reading and writing on descriptors ---- */

START_TEST (test_frame_round_trips_over_a_socket)
{
  int sv[2];
  pair (sv);
  json_t *sent = json_pack ("{s:i, s:s, s:b, s:{s:s, s:s%}}", "v", 1, "id", "call-1", "final", 1,
                            "msg", "type", "result", "content", "a\0b\xc3\xa9", (size_t)5);
  bx_error err = NULL;
  /* Several frames back to back on one connection. */
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq (bx_frame_write (sv[0], sent, bx_deadline_in (2000), &err), 0);
  for (int i = 0; i < 3; i++)
    {
      json_t *got = NULL;
      ck_assert_msg (bx_frame_read (sv[1], bx_deadline_in (2000), &got, &err) == 0, "%s",
                     bx_error_msg (err));
      ck_assert (json_equal (got, sent));
      const char *content
          = json_string_value (json_object_get (json_object_get (got, "msg"), "content"));
      ck_assert_mem_eq (content, "a\0b\xc3\xa9", 5);
      json_decref (got);
    }
  close (sv[0]);
  json_t *got = NULL;
  ck_assert_int_lt (bx_frame_read (sv[1], bx_deadline_in (2000), &got, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_CLOSED);
  bx_error_free (&err);
  json_decref (sent);
  close (sv[1]);
}
END_TEST

START_TEST (test_frame_write_sends_compact_json_after_a_big_endian_length)
{
  int sv[2];
  pair (sv);
  json_t *obj = json_pack ("{s:i, s:s}", "v", 1, "id", "x");
  bx_error err = NULL;
  ck_assert_int_eq (bx_frame_write (sv[0], obj, bx_deadline_in (1000), &err), 0);
  unsigned char buf[64];
  ssize_t n = read (sv[1], buf, sizeof buf);
  static const char want[] = "\0\0\0\x10{\"v\":1,\"id\":\"x\"}";
  ck_assert_int_eq (n, sizeof want - 1);
  ck_assert_mem_eq (buf, want, sizeof want - 1);
  json_decref (obj);
  close (sv[0]);
  close (sv[1]);
}
END_TEST

START_TEST (test_frame_read_tells_a_close_inside_a_frame_from_one_before)
{
  static const struct
  {
    const char *bytes;
    size_t len;
    int code;
  } cases[] = {
    { "", 0, BX_FRAME_CLOSED },
    { "\0", 1, BX_FRAME_TRUNCATED },
    { "\0\0\0", 3, BX_FRAME_TRUNCATED },
    { "\0\0\0\x02", 4, BX_FRAME_TRUNCATED },
    { "\0\0\0\x02{", 5, BX_FRAME_TRUNCATED },
    { "\0\0\0\x02{}", 6, 0 },
  };
  for (size_t i = 0; i < N (cases); i++)
    {
      int sv[2];
      pair (sv);
      if (cases[i].len > 0)
        write_all (sv[0], cases[i].bytes, cases[i].len);
      close (sv[0]);
      json_t *got = NULL;
      bx_error err = NULL;
      int r = bx_frame_read (sv[1], bx_deadline_in (2000), &got, &err);
      if (cases[i].code == 0)
        {
          ck_assert_int_eq (r, 0);
          json_decref (got);
        }
      else
        {
          ck_assert_int_lt (r, 0);
          ck_assert_msg (bx_error_code (err) == cases[i].code, "case %zu: %s", i,
                         bx_error_msg (err));
        }
      bx_error_free (&err);
      close (sv[1]);
    }
}
END_TEST

START_TEST (test_frame_read_refuses_an_oversized_header_at_once)
{
  /* The peer announces 4 MiB + 1 and then sends nothing more: the answer comes from the header,
   * without waiting for the body or the deadline. */
  int sv[2];
  pair (sv);
  unsigned char hdr[4];
  make_frame (hdr, BX_FRAME_MAX + 1, "", 0);
  write_all (sv[0], hdr, 4);
  json_t *got = NULL;
  bx_error err = NULL;
  int64_t start = bx_now_ms ();
  ck_assert_int_lt (bx_frame_read (sv[1], bx_deadline_in (5000), &got, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TOO_LARGE);
  ck_assert_int_lt (bx_now_ms () - start, 1000);
  bx_error_free (&err);

  /* Exactly the limit is accepted: a 4 MiB object. */
  size_t body_len = BX_FRAME_MAX;
  char *body = malloc (body_len);
  memset (body, ' ', body_len);
  memcpy (body, "{\"a\":\"", 6);
  memset (body + 6, 'x', body_len - 8);
  memcpy (body + body_len - 2, "\"}", 2);
  unsigned char len4[4];
  make_frame (len4, (uint32_t)body_len, "", 0);
  close (sv[0]);
  close (sv[1]);
  pair (sv);
  /* The writer is a child process, so the socket buffer drains while this side reads. */
  pid_t pid = fork ();
  if (pid == 0)
    {
      bx_error e = NULL;
      int ok = bx_write_full (sv[0], len4, 4, bx_deadline_in (10000), &e) == 0
               && bx_write_full (sv[0], body, body_len, bx_deadline_in (10000), &e) == 0;
      _exit (ok ? 0 : 1);
    }
  close (sv[0]);
  ck_assert_msg (bx_frame_read (sv[1], bx_deadline_in (10000), &got, &err) == 0, "%s",
                 bx_error_msg (err));
  ck_assert_uint_eq (json_string_length (json_object_get (got, "a")), body_len - 8);
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  json_decref (got);
  free (body);
  close (sv[1]);
}
END_TEST

START_TEST (test_frame_read_refuses_a_zero_length)
{
  int sv[2];
  pair (sv);
  write_all (sv[0], "\0\0\0\0{}", 6);
  json_t *got = NULL;
  bx_error err = NULL;
  ck_assert_int_lt (bx_frame_read (sv[1], bx_deadline_in (1000), &got, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TOO_LARGE);
  bx_error_free (&err);
  close (sv[0]);
  close (sv[1]);
}
END_TEST

START_TEST (test_frame_read_refuses_duplicate_keys_and_garbage)
{
  static const char *bodies[] = { "{\"v\":1,\"v\":1}", "{} {}", "[1]", "{\"a\":1} trailing" };
  for (size_t i = 0; i < N (bodies); i++)
    {
      int sv[2];
      pair (sv);
      unsigned char buf[64];
      size_t len = make_frame (buf, (uint32_t)strlen (bodies[i]), bodies[i], strlen (bodies[i]));
      write_all (sv[0], buf, len);
      json_t *got = NULL;
      bx_error err = NULL;
      ck_assert_int_lt (bx_frame_read (sv[1], bx_deadline_in (1000), &got, &err), 0);
      ck_assert_msg (bx_error_code (err) == BX_FRAME_BAD, "%s: %s", bodies[i], bx_error_msg (err));
      bx_error_free (&err);
      close (sv[0]);
      close (sv[1]);
    }
}
END_TEST

struct trickle
{
  int fd;
  const unsigned char *bytes;
  size_t len;
  int every_ms;
};

static void *
trickle_thread (void *p)
{
  struct trickle *t = p;
  for (size_t i = 0; i < t->len; i++)
    {
      if (send (t->fd, t->bytes + i, 1, MSG_NOSIGNAL) != 1)
        break;
      sleep_ms (t->every_ms);
    }
  return NULL;
}

/* A timeout per read would let this peer hold the connection for ever, since each byte
 * arrives well within any per-read timeout.  One deadline for the frame cuts it off
 * (docs/protocol.md, "Reading under one deadline"). */
START_TEST (test_frame_read_cuts_off_a_peer_sending_a_byte_every_100_ms)
{
  int sv[2];
  pair (sv);
  static const char body[] = "{\"v\":1,\"id\":\"slow\",\"final\":true,\"msg\":{}}";
  unsigned char buf[128];
  size_t len = make_frame (buf, sizeof body - 1, body, sizeof body - 1);
  struct trickle t = { .fd = sv[0], .bytes = buf, .len = len, .every_ms = 100 };
  pthread_t th;
  ck_assert_int_eq (pthread_create (&th, NULL, trickle_thread, &t), 0);

  json_t *got = NULL;
  bx_error err = NULL;
  int64_t start = bx_now_ms ();
  int r = bx_frame_read (sv[1], bx_deadline_in (1000), &got, &err);
  int64_t took = bx_now_ms () - start;
  ck_assert_int_lt (r, 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TIMED_OUT);
  /* The whole frame would take over 4 s; the read ends at the deadline. */
  ck_assert_int_ge (took, 990);
  ck_assert_int_lt (took, 2500);
  bx_error_free (&err);
  shutdown (sv[1], SHUT_RDWR);
  pthread_join (th, NULL);
  close (sv[0]);
  close (sv[1]);
}
END_TEST

START_TEST (test_frame_read_takes_a_slow_frame_that_ends_before_the_deadline)
{
  int sv[2];
  pair (sv);
  static const char body[] = "{\"id\":\"x\"}";
  unsigned char buf[64];
  size_t len = make_frame (buf, sizeof body - 1, body, sizeof body - 1);
  struct trickle t = { .fd = sv[0], .bytes = buf, .len = len, .every_ms = 20 };
  pthread_t th;
  ck_assert_int_eq (pthread_create (&th, NULL, trickle_thread, &t), 0);
  /* A non-blocking descriptor reads the same way. */
  fcntl (sv[1], F_SETFL, fcntl (sv[1], F_GETFL) | O_NONBLOCK);
  json_t *got = NULL;
  bx_error err = NULL;
  ck_assert_msg (bx_frame_read (sv[1], bx_deadline_in (5000), &got, &err) == 0, "%s",
                 bx_error_msg (err));
  ck_assert_str_eq (json_string_value (json_object_get (got, "id")), "x");
  json_decref (got);
  pthread_join (th, NULL);
  close (sv[0]);
  close (sv[1]);
}
END_TEST

START_TEST (test_frame_read_times_out_on_a_silent_peer)
{
  int sv[2];
  pair (sv);
  json_t *got = NULL;
  bx_error err = NULL;
  int64_t start = bx_now_ms ();
  ck_assert_int_lt (bx_frame_read (sv[1], bx_deadline_in (200), &got, &err), 0);
  int64_t took = bx_now_ms () - start;
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TIMED_OUT);
  ck_assert_int_ge (took, 190);
  ck_assert_int_lt (took, 1500);
  bx_error_free (&err);

  /* A deadline already passed fails at once, even with a whole frame waiting. */
  write_all (sv[0], "\0\0\0\x02{}", 6);
  ck_assert_int_lt (bx_frame_read (sv[1], bx_now_ms () - 1, &got, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TIMED_OUT);
  bx_error_free (&err);
  /* And the frame is still there for a reader with time left. */
  ck_assert_int_eq (bx_frame_read (sv[1], BX_NO_DEADLINE, &got, &err), 0);
  json_decref (got);
  close (sv[0]);
  close (sv[1]);
}
END_TEST

START_TEST (test_frame_write_to_a_closed_peer_is_an_error_not_sigpipe)
{
  int sv[2];
  pair (sv);
  close (sv[1]);
  json_t *obj = json_pack ("{s:s}", "id", "x");
  bx_error err = NULL;
  /* Without MSG_NOSIGNAL the process would die here and the test with it. */
  ck_assert_int_lt (bx_frame_write (sv[0], obj, bx_deadline_in (1000), &err), 0);
  ck_assert_int_eq (bx_error_code (err), EPIPE);
  bx_error_free (&err);
  json_decref (obj);
  close (sv[0]);
}
END_TEST

START_TEST (test_frame_write_refuses_an_oversized_object_and_sends_nothing)
{
  int sv[2];
  pair (sv);
  char *big = malloc (BX_FRAME_MAX + 1);
  memset (big, 'x', BX_FRAME_MAX);
  big[BX_FRAME_MAX] = '\0';
  json_t *obj = json_pack ("{s:s}", "content", big);
  bx_error err = NULL;
  ck_assert_int_lt (bx_frame_write (sv[0], obj, bx_deadline_in (1000), &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TOO_LARGE);
  bx_error_free (&err);
  struct pollfd pfd = { .fd = sv[1], .events = POLLIN };
  ck_assert_int_eq (poll (&pfd, 1, 0), 0);
  /* Not an object: refused too. */
  json_t *arr = json_array ();
  ck_assert_int_lt (bx_frame_write (sv[0], arr, bx_deadline_in (1000), &err), 0);
  ck_assert_int_lt (bx_frame_write (sv[0], NULL, bx_deadline_in (1000), &err), 0);
  bx_error_free (&err);
  json_decref (arr);
  json_decref (obj);
  free (big);
  close (sv[0]);
  close (sv[1]);
}
END_TEST

START_TEST (test_frame_write_stops_at_the_deadline_when_nobody_reads)
{
  int sv[2];
  pair (sv);
  char *big = malloc (3u << 20);
  memset (big, 'x', (3u << 20) - 1);
  big[(3u << 20) - 1] = '\0';
  json_t *obj = json_pack ("{s:s}", "content", big);
  bx_error err = NULL;
  int64_t start = bx_now_ms ();
  ck_assert_int_lt (bx_frame_write (sv[0], obj, bx_deadline_in (300), &err), 0);
  int64_t took = bx_now_ms () - start;
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_TIMED_OUT);
  ck_assert_int_ge (took, 290);
  ck_assert_int_lt (took, 2500);
  bx_error_free (&err);
  json_decref (obj);
  free (big);
  close (sv[0]);
  close (sv[1]);
}
END_TEST

struct pipe_reader
{
  int fd;
  json_t *got;
  int r;
};

static void *
pipe_reader_thread (void *p)
{
  struct pipe_reader *pr = p;
  bx_error err = NULL;
  pr->r = bx_frame_read (pr->fd, bx_deadline_in (5000), &pr->got, &err);
  bx_error_free (&err);
  return NULL;
}

START_TEST (test_frame_write_falls_back_to_write_on_a_pipe)
{
  int p[2];
  ck_assert_int_eq (pipe2 (p, O_CLOEXEC), 0);
  struct pipe_reader pr = { .fd = p[0] };
  pthread_t th;
  ck_assert_int_eq (pthread_create (&th, NULL, pipe_reader_thread, &pr), 0);
  /* Larger than a pipe's buffer, so the write goes in pieces. */
  char *big = malloc (200000);
  memset (big, 'y', 199999);
  big[199999] = '\0';
  json_t *obj = json_pack ("{s:s}", "content", big);
  bx_error err = NULL;
  ck_assert_msg (bx_frame_write (p[1], obj, bx_deadline_in (5000), &err) == 0, "%s",
                 bx_error_msg (err));
  pthread_join (th, NULL);
  ck_assert_int_eq (pr.r, 0);
  ck_assert (json_equal (pr.got, obj));
  json_decref (pr.got);
  json_decref (obj);
  free (big);
  close (p[0]);
  close (p[1]);
}
END_TEST

START_TEST (test_frame_round_trips_through_a_regular_file)
{
  char path[] = "/tmp/bx-frame-XXXXXX";
  int fd = mkstemp (path);
  ck_assert_int_ge (fd, 0);
  unlink (path);
  char *big = malloc (100000);
  memset (big, 'z', 99999);
  big[99999] = '\0';
  json_t *obj = json_pack ("{s:s, s:i}", "content", big, "n", 7);
  bx_error err = NULL;
  ck_assert_int_eq (bx_frame_write (fd, obj, bx_deadline_in (2000), &err), 0);
  ck_assert_int_eq (lseek (fd, 0, SEEK_SET), 0);
  json_t *got = NULL;
  ck_assert_int_eq (bx_frame_read (fd, bx_deadline_in (2000), &got, &err), 0);
  ck_assert (json_equal (got, obj));
  /* The end of the file is a peer that closed before the next frame. */
  json_decref (got);
  ck_assert_int_lt (bx_frame_read (fd, bx_deadline_in (2000), &got, &err), 0);
  ck_assert_int_eq (bx_error_code (err), BX_FRAME_CLOSED);
  bx_error_free (&err);
  json_decref (obj);
  free (big);
  close (fd);
}
END_TEST

/* ---- the deadline arithmetic ---- */

START_TEST (test_deadline_arithmetic_saturates_and_caps)
{
  int64_t now = bx_now_ms ();
  ck_assert_int_ge (now, 0);
  ck_assert_int_le (bx_deadline_in (-5) - now, 50);
  ck_assert_int_ge (bx_deadline_in (0), now);
  ck_assert_int_eq (bx_deadline_in (INT64_MAX), BX_NO_DEADLINE);
  ck_assert_int_eq (bx_deadline_in (INT64_MAX - 1), BX_NO_DEADLINE);
  ck_assert_int_eq (bx_deadline_left (BX_NO_DEADLINE), -1);
  ck_assert_int_eq (bx_deadline_left (now - 1), 0);
  ck_assert_int_eq (bx_deadline_left (INT64_MIN), 0);
  int left = bx_deadline_left (bx_deadline_in (5000));
  ck_assert_int_gt (left, 4900);
  ck_assert_int_le (left, 5000);
  ck_assert_int_eq (bx_deadline_left (now + ((int64_t)1 << 40)), INT32_MAX);
}
END_TEST

START_TEST (test_read_full_returns_a_short_count_when_the_peer_closes)
{
  int sv[2];
  pair (sv);
  write_all (sv[0], "abc", 3);
  close (sv[0]);
  char buf[10];
  bx_error err = NULL;
  ck_assert_int_eq (bx_read_full (sv[1], buf, sizeof buf, bx_deadline_in (1000), &err), 3);
  ck_assert_mem_eq (buf, "abc", 3);
  ck_assert_int_eq (bx_read_full (sv[1], buf, 0, bx_deadline_in (1000), &err), 0);
  ck_assert_int_eq (bx_read_full (-1, buf, 1, bx_deadline_in (1000), &err), -1);
  ck_assert_int_eq (bx_error_code (err), EBADF);
  bx_error_free (&err);
  close (sv[1]);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("proto_frame");
  TCase *tc = tcase_create ("frame");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_frame_decode_follows_the_body_table);
  tcase_add_test (tc, test_frame_decode_checks_the_length_against_the_bytes);
  tcase_add_test (tc, test_frame_round_trips_over_a_socket);
  tcase_add_test (tc, test_frame_write_sends_compact_json_after_a_big_endian_length);
  tcase_add_test (tc, test_frame_read_tells_a_close_inside_a_frame_from_one_before);
  tcase_add_test (tc, test_frame_read_refuses_an_oversized_header_at_once);
  tcase_add_test (tc, test_frame_read_refuses_a_zero_length);
  tcase_add_test (tc, test_frame_read_refuses_duplicate_keys_and_garbage);
  tcase_add_test (tc, test_frame_read_cuts_off_a_peer_sending_a_byte_every_100_ms);
  tcase_add_test (tc, test_frame_read_takes_a_slow_frame_that_ends_before_the_deadline);
  tcase_add_test (tc, test_frame_read_times_out_on_a_silent_peer);
  tcase_add_test (tc, test_frame_write_to_a_closed_peer_is_an_error_not_sigpipe);
  tcase_add_test (tc, test_frame_write_refuses_an_oversized_object_and_sends_nothing);
  tcase_add_test (tc, test_frame_write_stops_at_the_deadline_when_nobody_reads);
  tcase_add_test (tc, test_frame_write_falls_back_to_write_on_a_pipe);
  tcase_add_test (tc, test_frame_round_trips_through_a_regular_file);
  tcase_add_test (tc, test_deadline_arithmetic_saturates_and_caps);
  tcase_add_test (tc, test_read_full_returns_a_short_count_when_the_peer_closes);
  suite_add_tcase (s, tc);
  return s;
}

BX_TEST_MAIN (make_suite)
