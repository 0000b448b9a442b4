/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy over socketpair() with the fake Dial: every exit of the handshake (numbered
 * in egress.c), the reply codes, the deadline, the copy with its half-closes, and the
 * connection limit. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "dial_fake.h"
#include "egress.h"
#include "egress_test_util.h"
#include "brokerd_fixture.h"
#include "test_main.h"

/* Short deadlines keep the suite fast; one test runs at the real 10 s. */
#define TEST_HANDSHAKE_MS 1000

static char dir[64];
static char server_path[128];
static int server_listener = -1;
static struct bx_dial_fake *fake;
static struct bx_egress *proxy;

#define MAX_HANDLERS 16
static pthread_t handlers[MAX_HANDLERS];
static int n_handlers;
static int open_fds[64];
static int n_open_fds;

static int
keep_fd (int fd)
{
  ck_assert_int_ge (fd, 0);
  ck_assert_int_lt (n_open_fds, 64);
  open_fds[n_open_fds++] = fd;
  return fd;
}

static struct bx_egress *
make_proxy (int handshake_ms, enum bx_egress_copy copy)
{
  struct bx_allow *allow = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_allow_parse ("*.example,exact.org,ports.test:8443,any.test:*", &allow, &err),
                    0);
  struct bx_egress_config config = bx_egress_default_config ();
  config.handshake_ms = handshake_ms;
  config.connect_ms = 1000;
  config.copy = copy;
  return bx_egress_new (allow, bx_dial_fake_dial (fake), &config);
}

static void
setup (void)
{
  signal (SIGPIPE, SIG_IGN);
  snprintf (dir, sizeof dir, "/tmp/bx-egress-test-XXXXXX");
  ck_assert_ptr_nonnull (mkdtemp (dir));
  snprintf (server_path, sizeof server_path, "%s/server.sock", dir);
  cleanup_error bx_error err = NULL;
  server_listener = bx_egress_listen (server_path, &err);
  ck_assert_msg (server_listener >= 0, "%s", bx_error_msg (err));

  fake = bx_dial_fake_new_unix (server_path);
  const char *public1[] = { "93.184.216.34" };
  bx_dial_fake_add (fake, "allowed.example", public1, 1);
  bx_dial_fake_add (fake, "exact.org", public1, 1);
  bx_dial_fake_add (fake, "ports.test", public1, 1);
  bx_dial_fake_add (fake, "any.test", public1, 1);
  const char *mixed[] = { "10.0.0.1", "127.0.0.1", "::1", "100.64.0.1", "93.184.216.35" };
  bx_dial_fake_add (fake, "mixed.example", mixed, 5);
  const char *private[]
      = { "10.0.0.1",        "192.168.1.1",     "::1",           "::ffff:127.0.0.1", "fe80::1",
          "100.100.100.100", "169.254.169.254", "64:ff9b::a00:1" };
  bx_dial_fake_add (fake, "private.example", private, 8);
  bx_dial_fake_add (fake, "empty.example", NULL, 0);
  bx_dial_fake_add_failure (fake, "fails.example");
  bx_dial_fake_add_hang (fake, "hangs.example", 4000);
  const char *refusing[] = { "93.184.216.36" };
  bx_dial_fake_add (fake, "refused.example", refusing, 1);
  bx_dial_fake_refuse (fake, "93.184.216.36");
  const char *slow[] = { "93.184.216.37" };
  bx_dial_fake_add (fake, "slow.example", slow, 1);
  bx_dial_fake_fail_connect (fake, "93.184.216.37", ETIMEDOUT);
  /* A name the allow list does not grant, but the table knows: proves the check comes
   * before the lookup. */
  bx_dial_fake_add (fake, "other.com", public1, 1);
  bx_dial_fake_add (fake, "127.0.0.1", public1, 1);

  proxy = make_proxy (TEST_HANDSHAKE_MS, bx_egress_default_config ().copy);
  n_handlers = 0;
  n_open_fds = 0;
}

static void
teardown (void)
{
  for (int i = 0; i < n_open_fds; i++)
    close (open_fds[i]);
  /* Connections the test never accepted end with the listener. */
  close (server_listener);
  for (int i = 0; i < n_handlers; i++)
    pthread_join (handlers[i], NULL);
  bx_egress_free (proxy);
  bx_dial_fake_free (fake);
  unlink (server_path);
  rmdir (dir);
}

struct handle_arg
{
  struct bx_egress *proxy;
  int fd;
};

static void *
handle_thread (void *p)
{
  struct handle_arg *a = p;
  bx_egress_handle (a->proxy, a->fd);
  free (a);
  return NULL;
}

/* A connection handled by bx_egress_handle on a thread; returns the client's end. */
static int
open_conn (void)
{
  int sv[2];
  ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  struct handle_arg *a = malloc (sizeof *a);
  a->proxy = proxy;
  a->fd = sv[1];
  ck_assert_int_lt (n_handlers, MAX_HANDLERS);
  ck_assert_int_eq (pthread_create (&handlers[n_handlers++], NULL, handle_thread, a), 0);
  return keep_fd (sv[0]);
}

static void
send_bytes (int fd, const void *buf, size_t len)
{
  ck_assert_msg (test_send (fd, buf, len), "send: %s", strerror (errno));
}

static void
greet (int fd)
{
  const uint8_t hello[] = { 5, 1, 0 };
  send_bytes (fd, hello, sizeof hello);
  uint8_t answer[2];
  bool closed;
  ck_assert_uint_eq (test_read (fd, answer, 2, 3000, &closed), 2);
  ck_assert_uint_eq (answer[0], 5);
  ck_assert_uint_eq (answer[1], 0);
}

static void
ask (int fd, const char *name, size_t name_len, uint16_t port)
{
  uint8_t req[300];
  size_t n = test_request (req, name, name_len, port);
  send_bytes (fd, req, n);
}

static void
expect_reply (int fd, uint8_t code)
{
  uint8_t reply[10];
  bool closed;
  ck_assert_uint_eq (test_read (fd, reply, 10, 3000, &closed), 10);
  const uint8_t want[10] = { 5, code, 0, 1, 0, 0, 0, 0, 0, 0 };
  ck_assert_msg (memcmp (reply, want, 10) == 0, "reply code %u, expected %u", reply[1], code);
}

static void
expect_refusal (int fd, uint8_t code)
{
  expect_reply (fd, code);
  ck_assert_msg (test_closed_without_bytes (fd, 3000), "not closed after the refusal");
}

static void
expect_silent_close (int fd)
{
  ck_assert_msg (test_closed_without_bytes (fd, 3000), "not closed without a reply");
}

/* Accepts the proxy's connection on the test server. */
static int
accept_server (void)
{
  struct pollfd p = { .fd = server_listener, .events = POLLIN };
  ck_assert_int_eq (poll (&p, 1, 3000), 1);
  return keep_fd (accept4 (server_listener, NULL, NULL, SOCK_CLOEXEC));
}

static void
expect_bytes (int fd, const char *want)
{
  char buf[64];
  bool closed;
  size_t len = strlen (want);
  ck_assert_uint_eq (test_read (fd, buf, len, 3000, &closed), len);
  ck_assert (memcmp (buf, want, len) == 0);
}

static int
connect_through (const char *name)
{
  int fd = open_conn ();
  greet (fd);
  ask (fd, name, strlen (name), 443);
  expect_reply (fd, BX_SOCKS_SUCCEEDED);
  return fd;
}

/* ---- the records ---- */

/* A proxy whose records go to a file of the test's own; returns the file's descriptor. */
static int
recording_proxy (void)
{
  char path[128];
  snprintf (path, sizeof path, "%s/records", dir);
  int fd = keep_fd (open (path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  unlink (path);
  bx_egress_free (proxy);
  struct bx_allow *allow = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_allow_parse ("*.example,exact.org", &allow, &err), 0);
  struct bx_egress_config config = bx_egress_default_config ();
  config.handshake_ms = TEST_HANDSHAKE_MS;
  config.connect_ms = 1000;
  config.records_fd = fd;
  proxy = bx_egress_new (allow, bx_dial_fake_dial (fake), &config);
  return fd;
}

/* Waits for the handlers, then returns what the records file holds. */
static char *
records_text (int fd)
{
  for (int i = 0; i < n_handlers; i++)
    pthread_join (handlers[i], NULL);
  n_handlers = 0;
  static char buf[BX_EGRESS_RECORDS_MAX * 256];
  ssize_t n = pread (fd, buf, sizeof buf - 1, 0);
  ck_assert_int_ge (n, 0);
  buf[n] = '\0';
  return buf;
}

START_TEST (test_each_reply_is_recorded_with_host_port_code_and_address)
{
  int rec = recording_proxy ();
  int fd = connect_through ("allowed.example");
  int server = accept_server ();
  /* Both ends shut, so its copy ends and its handler can be joined. */
  shutdown (fd, SHUT_RDWR);
  shutdown (server, SHUT_RDWR);
  fd = open_conn ();
  greet (fd);
  ask (fd, "other.com", 9, 443);
  expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
  fd = open_conn ();
  greet (fd);
  ask (fd, "allowed.example", 15, 8443);
  expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
  fd = open_conn ();
  greet (fd);
  ask (fd, "private.example", 15, 443);
  expect_refusal (fd, BX_SOCKS_NETWORK_UNREACHABLE);
  fd = open_conn ();
  greet (fd);
  ask (fd, "fails.example", 13, 443);
  expect_refusal (fd, BX_SOCKS_HOST_UNREACHABLE);
  fd = open_conn ();
  greet (fd);
  ask (fd, "slow.example", 12, 443);
  expect_refusal (fd, BX_SOCKS_TTL_EXPIRED);
  fd = open_conn ();
  greet (fd);
  ask (fd, "refused.example", 15, 443);
  expect_refusal (fd, BX_SOCKS_CONNECTION_REFUSED);
  /* A name outside host syntax is recorded without it; an IP literal's address type too. */
  fd = open_conn ();
  greet (fd);
  ask (fd, "a\"b.example", 11, 443);
  expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
  const char *text = records_text (rec);
  /* Each handler writes its line when its connection ends: the order is the tests'. */
  static const char *const want[]
      = { "{\"host\":\"allowed.example\",\"port\":443,\"reply\":0,\"address\":\"93.184.216.34\"}\n",
          "{\"host\":\"other.com\",\"port\":443,\"reply\":2}\n",
          "{\"host\":\"allowed.example\",\"port\":8443,\"reply\":2}\n",
          "{\"host\":\"private.example\",\"port\":443,\"reply\":3}\n",
          "{\"host\":\"fails.example\",\"port\":443,\"reply\":4}\n",
          "{\"host\":\"slow.example\",\"port\":443,\"reply\":6}\n",
          "{\"host\":\"refused.example\",\"port\":443,\"reply\":5}\n",
          "{\"host\":null,\"port\":443,\"reply\":2}\n" };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    ck_assert_msg (strstr (text, want[i]) != NULL, "no %s in\n%s", want[i], text);
}
END_TEST

START_TEST (test_records_stop_at_the_maximum)
{
  int rec = recording_proxy ();
  for (int i = 0; i < BX_EGRESS_RECORDS_MAX + 5; i++)
    {
      int fd = open_conn ();
      greet (fd);
      ask (fd, "other.com", 9, 443);
      expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
      /* The client's end is done with: closed here rather than kept for teardown. */
      n_open_fds--;
      close (fd);
      if (n_handlers == MAX_HANDLERS)
        records_text (rec);
    }
  const char *text = records_text (rec);
  int lines = 0;
  for (const char *p = text; (p = strchr (p, '\n')) != NULL; p++)
    lines++;
  ck_assert_int_eq (lines, BX_EGRESS_RECORDS_MAX);
}
END_TEST

/* Records spent on refusals: a connection to a granted host is then refused, not made
 * unrecorded. */
START_TEST (test_no_connection_past_the_last_record)
{
  int rec = recording_proxy ();
  for (int i = 0; i < BX_EGRESS_RECORDS_MAX; i++)
    {
      int fd = open_conn ();
      greet (fd);
      ask (fd, "other.com", 9, 443);
      expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
      n_open_fds--;
      close (fd);
      if (n_handlers == MAX_HANDLERS)
        records_text (rec);
    }
  int fd = open_conn ();
  greet (fd);
  ask (fd, "allowed.example", 15, 443);
  expect_refusal (fd, BX_SOCKS_GENERAL_FAILURE);
  const char *text = records_text (rec);
  ck_assert_ptr_null (strstr (text, "allowed.example"));
  int lines = 0;
  for (const char *p = text; (p = strchr (p, '\n')) != NULL; p++)
    lines++;
  ck_assert_int_eq (lines, BX_EGRESS_RECORDS_MAX);
}
END_TEST

/* ---- the allow list ---- */

START_TEST (test_allow_list_refuses_empty_pieces_and_bad_patterns)
{
  const char *bad[] = { "",           ",",        "a.com,",      ",a.com",     "a.com,,b.com",
                        "bad host",   "*.",       "*",           "127.0.0.1",  "a.com,0x7f000001",
                        "*.*.a.com",  "a..com",   "a.com.",      "-a.com",     "a_b.com",
                        "a.com:",     "a.com:0",  "a.com:65536", "a.com:0443", "a.com:-1",
                        "a.com:+443", "a.com:**", "a.com:1:2",   "a.com: 443", "127.0.0.1:443",
                        ":443",       "*:443" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      struct bx_allow *allow = NULL;
      cleanup_error bx_error err = NULL;
      ck_assert_msg (bx_allow_parse (bad[i], &allow, &err) < 0, "accepted \"%s\"", bad[i]);
      ck_assert_ptr_null (allow);
      ck_assert_str_ne (bx_error_msg (err), "");
    }
}
END_TEST

START_TEST (test_allow_list_permits_its_hosts_without_regard_to_case)
{
  struct bx_allow *allow = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_allow_parse ("Example.com,*.wikipedia.org", &allow, &err), 0);
  ck_assert (bx_allow_permits (allow, "example.com", 443));
  ck_assert (bx_allow_permits (allow, "EXAMPLE.COM", 443));
  ck_assert (bx_allow_permits (allow, "en.Wikipedia.org", 443));
  ck_assert (bx_allow_permits (allow, "a.b.wikipedia.org", 443));
  ck_assert (!bx_allow_permits (allow, "wikipedia.org", 443));
  ck_assert (!bx_allow_permits (allow, "www.example.com", 443));
  ck_assert (!bx_allow_permits (allow, "example.com.evil.net", 443));
  ck_assert (!bx_allow_permits (allow, "127.0.0.1", 443));
  bx_allow_free (allow);
}
END_TEST

START_TEST (test_allow_list_permits_port_443_unless_a_pattern_names_its_ports)
{
  struct bx_allow *allow = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_allow_parse ("plain.com,git.example:8443,*.registry.test:*", &allow, &err),
                    0);
  ck_assert (bx_allow_permits (allow, "plain.com", 443));
  ck_assert (!bx_allow_permits (allow, "plain.com", 80));
  ck_assert (!bx_allow_permits (allow, "plain.com", 8443));
  ck_assert (bx_allow_permits (allow, "git.example", 8443));
  ck_assert (!bx_allow_permits (allow, "git.example", 443));
  ck_assert (bx_allow_permits (allow, "a.registry.test", 1));
  ck_assert (bx_allow_permits (allow, "a.registry.test", 443));
  ck_assert (bx_allow_permits (allow, "a.registry.test", 65535));
  ck_assert (!bx_allow_permits (allow, "a.registry.test", 0));
  ck_assert (!bx_allow_permits (allow, "registry.test", 443));
  bx_allow_free (allow);
}
END_TEST

/* ---- the greeting ---- */

START_TEST (test_a_greeting_of_another_version_closes_without_a_reply)
{
  int fd = open_conn ();
  const uint8_t hello[] = { 4, 1, 0 };
  send_bytes (fd, hello, sizeof hello);
  expect_silent_close (fd);
}
END_TEST

START_TEST (test_methods_without_no_authentication_are_answered_ff_then_closed)
{
  int fd = open_conn ();
  const uint8_t hello[] = { 5, 2, 1, 2 };
  send_bytes (fd, hello, sizeof hello);
  uint8_t answer[2];
  bool closed;
  ck_assert_uint_eq (test_read (fd, answer, 2, 3000, &closed), 2);
  ck_assert_uint_eq (answer[0], 5);
  ck_assert_uint_eq (answer[1], 0xff);
  expect_silent_close (fd);
}
END_TEST

START_TEST (test_an_empty_method_list_is_answered_ff)
{
  int fd = open_conn ();
  const uint8_t hello[] = { 5, 0 };
  send_bytes (fd, hello, sizeof hello);
  uint8_t answer[2];
  bool closed;
  ck_assert_uint_eq (test_read (fd, answer, 2, 3000, &closed), 2);
  ck_assert_uint_eq (answer[1], 0xff);
  expect_silent_close (fd);
}
END_TEST

START_TEST (test_curls_methods_0_and_2_are_accepted)
{
  int fd = open_conn ();
  const uint8_t hello[] = { 5, 2, 0, 2 };
  send_bytes (fd, hello, sizeof hello);
  uint8_t answer[2];
  bool closed;
  ck_assert_uint_eq (test_read (fd, answer, 2, 3000, &closed), 2);
  ck_assert_uint_eq (answer[0], 5);
  ck_assert_uint_eq (answer[1], 0);
  ask (fd, "allowed.example", 15, 443);
  expect_reply (fd, BX_SOCKS_SUCCEEDED);
}
END_TEST

START_TEST (test_a_greeting_cut_short_closes_without_a_reply)
{
  int fd = open_conn ();
  const uint8_t hello[] = { 5, 3, 0 };
  send_bytes (fd, hello, sizeof hello);
  shutdown (fd, SHUT_WR);
  expect_silent_close (fd);
}
END_TEST

/* The method list is read exactly: what follows it is the request, not more methods. */
START_TEST (test_the_greeting_reads_exactly_its_methods)
{
  int fd = open_conn ();
  uint8_t all[300];
  size_t n = 0;
  all[n++] = 5;
  all[n++] = 1;
  all[n++] = 0;
  n += test_request (all + n, "allowed.example", 15, 443);
  send_bytes (fd, all, n);
  uint8_t answer[2];
  bool closed;
  ck_assert_uint_eq (test_read (fd, answer, 2, 3000, &closed), 2);
  ck_assert_uint_eq (answer[1], 0);
  expect_reply (fd, BX_SOCKS_SUCCEEDED);
}
END_TEST

/* ---- the request ---- */

START_TEST (test_a_request_of_another_version_closes_without_a_reply)
{
  int fd = open_conn ();
  greet (fd);
  const uint8_t req[] = { 4, 1, 0, 3 };
  send_bytes (fd, req, sizeof req);
  expect_silent_close (fd);
}
END_TEST

START_TEST (test_a_nonzero_reserved_byte_closes_without_a_reply)
{
  int fd = open_conn ();
  greet (fd);
  const uint8_t req[] = { 5, 1, 1, 3 };
  send_bytes (fd, req, sizeof req);
  expect_silent_close (fd);
}
END_TEST

START_TEST (test_bind_and_udp_associate_are_refused_with_7)
{
  const uint8_t commands[] = { 0, 2, 3, 0xff };
  for (size_t i = 0; i < sizeof commands; i++)
    {
      int fd = open_conn ();
      greet (fd);
      const uint8_t req[] = { 5, commands[i], 0, 3 };
      send_bytes (fd, req, sizeof req);
      expect_refusal (fd, BX_SOCKS_COMMAND_NOT_SUPPORTED);
    }
}
END_TEST

START_TEST (test_ip_address_types_are_refused_with_8_without_reading_the_address)
{
  const uint8_t kinds[] = { 1, 4, 0, 2, 5, 0xff };
  for (size_t i = 0; i < sizeof kinds; i++)
    {
      int fd = open_conn ();
      greet (fd);
      const uint8_t req[] = { 5, 1, 0, kinds[i] };
      /* Nothing after the type: the refusal must not wait for an address. */
      send_bytes (fd, req, sizeof req);
      int64_t start = test_now_ms ();
      expect_refusal (fd, BX_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED);
      ck_assert_int_lt (test_now_ms () - start, TEST_HANDSHAKE_MS / 2);
    }
  ck_assert_uint_eq (bx_dial_fake_resolves (fake), 0);
}
END_TEST

START_TEST (test_a_zero_length_name_is_refused_with_2)
{
  int fd = open_conn ();
  greet (fd);
  const uint8_t req[] = { 5, 1, 0, 3, 0 };
  send_bytes (fd, req, sizeof req);
  expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
}
END_TEST

START_TEST (test_a_request_cut_short_closes_without_a_reply)
{
  /* The four-byte head cut after 2 bytes, and a whole head with no length byte. */
  const uint8_t parts[][4] = { { 5, 1 }, { 5, 1, 0, 3 } };
  const size_t lens[] = { 2, 4 };
  for (size_t i = 0; i < 2; i++)
    {
      int fd = open_conn ();
      greet (fd);
      send_bytes (fd, parts[i], lens[i]);
      shutdown (fd, SHUT_WR);
      int64_t start = test_now_ms ();
      expect_silent_close (fd);
      ck_assert_int_lt (test_now_ms () - start, TEST_HANDSHAKE_MS / 2);
    }
  ck_assert_uint_eq (bx_dial_fake_resolves (fake), 0);
}
END_TEST

START_TEST (test_a_name_cut_short_closes_without_a_reply)
{
  int fd = open_conn ();
  greet (fd);
  const uint8_t req[] = { 5, 1, 0, 3, 15, 'a', 'l', 'l' };
  send_bytes (fd, req, sizeof req);
  shutdown (fd, SHUT_WR);
  expect_silent_close (fd);
}
END_TEST

START_TEST (test_a_missing_port_closes_without_a_reply)
{
  int fd = open_conn ();
  greet (fd);
  uint8_t req[300];
  size_t n = test_request (req, "allowed.example", 15, 443);
  send_bytes (fd, req, n - 1);
  shutdown (fd, SHUT_WR);
  expect_silent_close (fd);
  ck_assert_uint_eq (bx_dial_fake_resolves (fake), 0);
}
END_TEST

START_TEST (test_a_port_other_than_443_is_refused_with_2)
{
  const uint16_t ports[] = { 8443, 80, 0, 65535, 442, 444 };
  for (size_t i = 0; i < sizeof ports / sizeof *ports; i++)
    {
      int fd = open_conn ();
      greet (fd);
      ask (fd, "allowed.example", 15, ports[i]);
      expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
    }
  ck_assert_uint_eq (bx_dial_fake_resolves (fake), 0);
}
END_TEST

START_TEST (test_a_pattern_with_a_port_lets_that_port_through_and_no_other)
{
  const uint16_t refused[] = { 443, 80, 0, 8444 };
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
    {
      int fd = open_conn ();
      greet (fd);
      ask (fd, "ports.test", 10, refused[i]);
      expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
    }
  ck_assert_uint_eq (bx_dial_fake_resolves (fake), 0);
  int fd = open_conn ();
  greet (fd);
  ask (fd, "ports.test", 10, 8443);
  expect_reply (fd, BX_SOCKS_SUCCEEDED);
}
END_TEST

START_TEST (test_a_pattern_with_any_port_lets_every_port_but_0_through)
{
  const uint16_t ports[] = { 1, 80, 443, 65535 };
  for (size_t i = 0; i < sizeof ports / sizeof *ports; i++)
    {
      int fd = open_conn ();
      greet (fd);
      ask (fd, "any.test", 8, ports[i]);
      expect_reply (fd, BX_SOCKS_SUCCEEDED);
    }
  int fd = open_conn ();
  greet (fd);
  ask (fd, "any.test", 8, 0);
  expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
}
END_TEST

START_TEST (test_a_name_not_granted_is_refused_with_2_and_never_looked_up)
{
  const char *names[]
      = { "other.com", "example", "allowed.example.com", "exact.org.evil.net", "www.exact.org" };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    {
      int fd = open_conn ();
      greet (fd);
      ask (fd, names[i], strlen (names[i]), 443);
      expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
    }
  ck_assert_uint_eq (bx_dial_fake_resolves (fake), 0);
}
END_TEST

START_TEST (test_names_are_matched_without_regard_to_case)
{
  const char *names[] = { "ALLOWED.EXAMPLE", "Exact.Org", "MiXeD.eXaMpLe" };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    {
      int fd = connect_through (names[i]);
      int server = accept_server ();
      send_bytes (fd, "hi", 2);
      expect_bytes (server, "hi");
    }
}
END_TEST

START_TEST (test_ip_literals_as_names_are_refused_with_2_before_any_lookup)
{
  const char *names[]
      = { "127.0.0.1", "0x7f000001", "127.1",   "2130706433",    "0177.0.0.1",  "::1",
          "[::1]",     "0x7f.1",     "1.2.3.4", "::ffff:7f00:1", "017700000001" };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    {
      int fd = open_conn ();
      greet (fd);
      ask (fd, names[i], strlen (names[i]), 443);
      expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
    }
  ck_assert_uint_eq (bx_dial_fake_resolves (fake), 0);
}
END_TEST

START_TEST (test_names_with_bytes_outside_host_syntax_are_refused_with_2)
{
  static const struct
  {
    const char *name;
    size_t len;
  } names[] = {
    { "allowed.example\0.evil", 21 },
    { "a\0.example", 10 },
    { "allowed .example", 16 },
    { "allowed.example.", 16 },
    { "-a.example", 10 },
    { "a_b.example", 11 },
    { "a..example", 10 },
    { "\xc3\xa4.example", 10 },
    { "\xff.example", 9 },
    { "a.example\r\n", 11 },
    { "a/b.example", 11 },
    { ".example", 8 },
  };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    {
      int fd = open_conn ();
      greet (fd);
      ask (fd, names[i].name, names[i].len, 443);
      expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
    }
  ck_assert_uint_eq (bx_dial_fake_resolves (fake), 0);
}
END_TEST

START_TEST (test_a_255_byte_name_is_read_whole_and_refused_with_2)
{
  char name[255];
  memset (name, 'a', sizeof name);
  int fd = open_conn ();
  greet (fd);
  ask (fd, name, sizeof name, 443);
  expect_refusal (fd, BX_SOCKS_NOT_ALLOWED);
}
END_TEST

/* ---- resolution and connecting ---- */

START_TEST (test_a_name_with_only_non_public_addresses_is_3_and_none_is_tried)
{
  int fd = open_conn ();
  greet (fd);
  ask (fd, "private.example", 15, 443);
  expect_refusal (fd, BX_SOCKS_NETWORK_UNREACHABLE);
  ck_assert_uint_eq (bx_dial_fake_resolves (fake), 1);
  ck_assert_uint_eq (bx_dial_fake_connects (fake), 0);
}
END_TEST

START_TEST (test_non_public_addresses_are_skipped_for_the_first_public_one)
{
  int fd = connect_through ("mixed.example");
  accept_server ();
  char last[64];
  bx_dial_fake_last_connect (fake, last, sizeof last);
  ck_assert_str_eq (last, "93.184.216.35");
  ck_assert_uint_eq (bx_dial_fake_connects (fake), 1);
  (void)fd;
}
END_TEST

/* The proxy of these tests, with PRIVATE as its --allow-private list. */
static void
use_private_ranges (const char *private)
{
  bx_egress_free (proxy);
  struct bx_allow *allow = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_allow_parse ("*.example", &allow, &err), 0);
  ck_assert_msg (bx_allow_parse_private (allow, private, &err) == 0, "%s", bx_error_msg (err));
  struct bx_egress_config config = bx_egress_default_config ();
  config.handshake_ms = TEST_HANDSHAKE_MS;
  config.connect_ms = 1000;
  proxy = bx_egress_new (allow, bx_dial_fake_dial (fake), &config);
}

START_TEST (test_a_private_range_lets_its_addresses_through_and_no_other)
{
  /* private.example: 10.0.0.1, 192.168.1.1, ::1, ::ffff:127.0.0.1, fe80::1, 100.100.100.100,
   * 169.254.169.254, 64:ff9b::a00:1.  Only 192.168.0.0/16 is listed: its address is the one
   * tried, not 10.0.0.1 before it. */
  use_private_ranges ("192.168.0.0/16,fd00::/8");
  int fd = connect_through ("private.example");
  accept_server ();
  char last[64];
  bx_dial_fake_last_connect (fake, last, sizeof last);
  ck_assert_str_eq (last, "192.168.1.1");
  ck_assert_uint_eq (bx_dial_fake_connects (fake), 1);
  (void)fd;
}
END_TEST

START_TEST (test_a_private_range_that_holds_none_of_the_addresses_is_3)
{
  use_private_ranges ("172.16.0.0/12,10.0.0.2");
  int fd = open_conn ();
  greet (fd);
  ask (fd, "private.example", 15, 443);
  expect_refusal (fd, BX_SOCKS_NETWORK_UNREACHABLE);
  ck_assert_uint_eq (bx_dial_fake_connects (fake), 0);
}
END_TEST

START_TEST (test_a_private_range_never_parses_over_loopback_or_link_local)
{
  const char *bad[] = { "127.0.0.0/8", "0.0.0.0/0",        "169.254.0.0/16", "::1",
                        "fe80::/10",   "::ffff:127.0.0.1", "10.0.0.0/8,",    "",
                        "10.1.0.0/8",  "10.0.0.0/33" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      struct bx_allow *allow = NULL;
      cleanup_error bx_error err = NULL;
      ck_assert_int_eq (bx_allow_parse ("a.example", &allow, &err), 0);
      ck_assert_msg (bx_allow_parse_private (allow, bad[i], &err) < 0, "accepted \"%s\"", bad[i]);
      ck_assert_ptr_nonnull (strstr (bx_error_msg (err), "not an address range"));
      bx_allow_free (allow);
    }
}
END_TEST

START_TEST (test_an_empty_answer_is_4)
{
  int fd = open_conn ();
  greet (fd);
  ask (fd, "empty.example", 13, 443);
  expect_refusal (fd, BX_SOCKS_HOST_UNREACHABLE);
  ck_assert_uint_eq (bx_dial_fake_connects (fake), 0);
}
END_TEST

START_TEST (test_a_failed_lookup_is_4)
{
  const char *names[] = { "fails.example", "unknown.example" };
  for (size_t i = 0; i < 2; i++)
    {
      int fd = open_conn ();
      greet (fd);
      ask (fd, names[i], strlen (names[i]), 443);
      expect_refusal (fd, BX_SOCKS_HOST_UNREACHABLE);
    }
  ck_assert_uint_eq (bx_dial_fake_connects (fake), 0);
}
END_TEST

START_TEST (test_a_connect_failure_is_5)
{
  int fd = open_conn ();
  greet (fd);
  ask (fd, "refused.example", 15, 443);
  expect_refusal (fd, BX_SOCKS_CONNECTION_REFUSED);
  ck_assert_uint_eq (bx_dial_fake_connects (fake), 1);
}
END_TEST

START_TEST (test_a_connect_that_times_out_is_6)
{
  int fd = open_conn ();
  greet (fd);
  ask (fd, "slow.example", 12, 443);
  expect_refusal (fd, BX_SOCKS_TTL_EXPIRED);
  ck_assert_uint_eq (bx_dial_fake_connects (fake), 1);
}
END_TEST

START_TEST (test_a_hanging_resolver_is_cut_at_the_deadline)
{
  int fd = open_conn ();
  int64_t start = test_now_ms ();
  greet (fd);
  ask (fd, "hangs.example", 13, 443);
  expect_refusal (fd, BX_SOCKS_HOST_UNREACHABLE);
  int64_t took = test_now_ms () - start;
  ck_assert_int_ge (took, TEST_HANDSHAKE_MS - 50);
  ck_assert_int_lt (took, TEST_HANDSHAKE_MS + 500);
  /* The handler is gone although the resolver still hangs. */
  pthread_join (handlers[--n_handlers], NULL);
}
END_TEST

/* ---- the deadline ---- */

struct slow_arg
{
  int fd;
  int every_ms;
};

static void *
slow_writer (void *p)
{
  struct slow_arg *a = p;
  uint8_t all[300];
  size_t n = 0;
  all[n++] = 5;
  all[n++] = 1;
  all[n++] = 0;
  n += test_request (all + n, "allowed.example", 15, 443);
  for (size_t i = 0; i < n; i++)
    {
      if (send (a->fd, all + i, 1, MSG_NOSIGNAL) != 1)
        break;
      poll (NULL, 0, a->every_ms);
    }
  return NULL;
}

/* A client that sends one byte every 100 ms would take 2.5 s; the handshake's one deadline
 * cuts it off, with the greeting's answer and nothing more. */
static void
slow_client_is_cut (int deadline_ms)
{
  if (deadline_ms != TEST_HANDSHAKE_MS)
    {
      bx_egress_free (proxy);
      proxy = make_proxy (deadline_ms, bx_egress_default_config ().copy);
    }
  int fd = open_conn ();
  int every_ms = deadline_ms > 5000 ? 500 : 100; /* 25 bytes: 2.5 s, or 12.5 s */
  struct slow_arg arg = { fd, every_ms };
  pthread_t writer;
  int64_t start = test_now_ms ();
  ck_assert_int_eq (pthread_create (&writer, NULL, slow_writer, &arg), 0);
  uint8_t got[16];
  bool closed;
  size_t n = test_read (fd, got, sizeof got, deadline_ms + 3000, &closed);
  int64_t took = test_now_ms () - start;
  ck_assert_msg (closed, "still open after %lld ms", (long long)took);
  ck_assert_uint_eq (n, 2);
  ck_assert_uint_eq (got[0], 5);
  ck_assert_uint_eq (got[1], 0);
  ck_assert_int_ge (took, deadline_ms - 50);
  ck_assert_int_lt (took, deadline_ms + 500);
  ck_assert_uint_eq (bx_dial_fake_resolves (fake), 0);
  shutdown (fd, SHUT_RDWR);
  pthread_join (writer, NULL);
}

START_TEST (test_a_slow_client_is_cut_at_the_deadline)
{
  slow_client_is_cut (TEST_HANDSHAKE_MS);
}
END_TEST

START_TEST (test_a_slow_client_is_cut_at_the_real_10_s_deadline)
{
  slow_client_is_cut (BX_EGRESS_HANDSHAKE_MS);
}
END_TEST

START_TEST (test_a_silent_client_is_cut_at_the_deadline)
{
  int fd = open_conn ();
  int64_t start = test_now_ms ();
  const uint8_t part[] = { 5, 1 };
  send_bytes (fd, part, sizeof part);
  expect_silent_close (fd);
  int64_t took = test_now_ms () - start;
  ck_assert_int_ge (took, TEST_HANDSHAKE_MS - 50);
  ck_assert_int_lt (took, TEST_HANDSHAKE_MS + 500);
}
END_TEST

/* ---- the copy ---- */

static void
copy_mode_setup (enum bx_egress_copy copy)
{
  bx_egress_free (proxy);
  proxy = make_proxy (TEST_HANDSHAKE_MS, copy);
}

START_TEST (test_bytes_pass_both_ways_after_the_handshake)
{
  copy_mode_setup ((enum bx_egress_copy)_i);
  int fd = connect_through ("allowed.example");
  int server = accept_server ();
  send_bytes (fd, "GET", 3);
  expect_bytes (server, "GET");
  send_bytes (server, "200 OK", 6);
  expect_bytes (fd, "200 OK");
}
END_TEST

START_TEST (test_a_half_close_from_the_client_reaches_the_server)
{
  copy_mode_setup ((enum bx_egress_copy)_i);
  int fd = connect_through ("allowed.example");
  int server = accept_server ();
  send_bytes (fd, "request", 7);
  ck_assert_int_eq (shutdown (fd, SHUT_WR), 0);
  expect_bytes (server, "request");
  ck_assert (test_closed_without_bytes (server, 3000));
  /* The other direction still works after the half-close. */
  send_bytes (server, "answer", 6);
  expect_bytes (fd, "answer");
  close (server);
  ck_assert (test_closed_without_bytes (fd, 3000));
}
END_TEST

START_TEST (test_a_half_close_from_the_server_reaches_the_client)
{
  copy_mode_setup ((enum bx_egress_copy)_i);
  int fd = connect_through ("allowed.example");
  int server = accept_server ();
  send_bytes (server, "banner", 6);
  ck_assert_int_eq (shutdown (server, SHUT_WR), 0);
  expect_bytes (fd, "banner");
  ck_assert (test_closed_without_bytes (fd, 3000));
  send_bytes (fd, "late", 4);
  expect_bytes (server, "late");
  ck_assert_int_eq (shutdown (fd, SHUT_WR), 0);
  ck_assert (test_closed_without_bytes (server, 3000));
  /* Both directions ended: the handler returns. */
  pthread_join (handlers[--n_handlers], NULL);
}
END_TEST

/* 64 MiB in the production copy mode; the measured alternatives carry 16 MiB, which keeps
 * the suite quick under the sanitizers. */
#define BIG       (64u << 20)
#define BIG_OTHER (16u << 20)

struct pump
{
  int fd;
  size_t total;
  uint32_t seed;
  uint64_t sum;
  size_t count;
};

static uint32_t
next_byte_state (uint32_t x)
{
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}

static void *
pump_out (void *p)
{
  struct pump *a = p;
  static __thread uint8_t buf[65536];
  uint32_t x = a->seed;
  for (size_t sent = 0; sent < a->total;)
    {
      for (size_t i = 0; i < sizeof buf; i++)
        {
          x = next_byte_state (x);
          buf[i] = (uint8_t)x;
          a->sum = a->sum * 31 + buf[i];
        }
      if (!test_send (a->fd, buf, sizeof buf))
        break;
      sent += sizeof buf;
      a->count = sent;
    }
  shutdown (a->fd, SHUT_WR);
  return NULL;
}

static void *
pump_in (void *p)
{
  struct pump *a = p;
  static __thread uint8_t buf[65536];
  for (;;)
    {
      ssize_t n = recv (a->fd, buf, sizeof buf, 0);
      if (n <= 0)
        break;
      for (ssize_t i = 0; i < n; i++)
        a->sum = a->sum * 31 + buf[i];
      a->count += n;
    }
  return NULL;
}

START_TEST (test_64_mib_pass_each_way_at_once_unchanged)
{
  copy_mode_setup ((enum bx_egress_copy)_i);
  int fd = connect_through ("allowed.example");
  int server = accept_server ();
  size_t total = (enum bx_egress_copy)_i == bx_egress_default_config ().copy ? BIG : BIG_OTHER;
  struct pump up_out = { .fd = fd, .total = total, .seed = 0x12345678 };
  struct pump up_in = { .fd = server };
  struct pump down_out = { .fd = server, .total = total, .seed = 0x9abcdef0 };
  struct pump down_in = { .fd = fd };
  pthread_t t[4];
  pthread_create (&t[0], NULL, pump_out, &up_out);
  pthread_create (&t[1], NULL, pump_in, &up_in);
  pthread_create (&t[2], NULL, pump_out, &down_out);
  pthread_create (&t[3], NULL, pump_in, &down_in);
  for (int i = 0; i < 4; i++)
    pthread_join (t[i], NULL);
  ck_assert_uint_eq (up_out.count, total);
  ck_assert_uint_eq (up_in.count, total);
  ck_assert_uint_eq (down_out.count, total);
  ck_assert_uint_eq (down_in.count, total);
  ck_assert_uint_eq (up_in.sum, up_out.sum);
  ck_assert_uint_eq (down_in.sum, down_out.sum);
}
END_TEST

START_TEST (test_a_server_that_goes_away_ends_the_connection)
{
  copy_mode_setup ((enum bx_egress_copy)_i);
  int fd = connect_through ("allowed.example");
  int server = accept_server ();
  send_bytes (fd, "x", 1);
  expect_bytes (server, "x");
  close (server);
  /* The client sees the end; what it sends after that cannot be delivered, and the proxy
   * lets go of the connection instead of reading it for ever. */
  ck_assert (test_closed_without_bytes (fd, 3000));
  send_bytes (fd, "more", 4);
  pthread_join (handlers[--n_handlers], NULL);
}
END_TEST

/* ---- serve: the connection limit ---- */

static void *
serve_thread (void *p)
{
  int *listener = p;
  cleanup_error bx_error err = NULL;
  bx_egress_serve (proxy, *listener, &err);
  return NULL;
}

static int
connect_unix (const char *path)
{
  int fd = bx_test_connect (path);
  ck_assert_int_ge (fd, 0);
  return fd;
}

START_TEST (test_the_ninth_connection_is_closed_at_once)
{
  /* A long deadline: the first eight must stay open on their own, mid-handshake. */
  bx_egress_free (proxy);
  proxy = make_proxy (BX_EGRESS_HANDSHAKE_MS, bx_egress_default_config ().copy);
  char path[160];
  snprintf (path, sizeof path, "%s/proxy.sock", dir);
  cleanup_error bx_error err = NULL;
  static int listener;
  listener = bx_egress_listen (path, &err);
  ck_assert_msg (listener >= 0, "%s", bx_error_msg (err));
  pthread_t serving;
  ck_assert_int_eq (pthread_create (&serving, NULL, serve_thread, &listener), 0);
  pthread_detach (serving);

  int fds[BX_EGRESS_MAX_CONNECTIONS];
  /* Connect all eight before greeting any: a loop that waited for a handler would answer
   * only the first. */
  for (int i = 0; i < BX_EGRESS_MAX_CONNECTIONS; i++)
    fds[i] = connect_unix (path);
  for (int i = 0; i < BX_EGRESS_MAX_CONNECTIONS; i++)
    greet (fds[i]);
  ck_assert_int_eq (bx_egress_active (proxy), BX_EGRESS_MAX_CONNECTIONS);

  int64_t start = test_now_ms ();
  int ninth = connect_unix (path);
  ck_assert (test_closed_without_bytes (ninth, 2000));
  ck_assert_int_lt (test_now_ms () - start, 500);
  close (ninth);

  /* One leaves; a new one is served again. */
  close (fds[0]);
  for (int i = 0; i < 200 && bx_egress_active (proxy) >= BX_EGRESS_MAX_CONNECTIONS; i++)
    poll (NULL, 0, 10);
  ck_assert_int_lt (bx_egress_active (proxy), BX_EGRESS_MAX_CONNECTIONS);
  fds[0] = connect_unix (path);
  greet (fds[0]);
  ask (fds[0], "allowed.example", 15, 443);
  expect_reply (fds[0], BX_SOCKS_SUCCEEDED);
  for (int i = 0; i < BX_EGRESS_MAX_CONNECTIONS; i++)
    close (fds[i]);
  for (int i = 0; i < 300 && bx_egress_active (proxy) > 0; i++)
    poll (NULL, 0, 10);
  /* The proxy stays: serve never returns, and its thread still uses it. */
  proxy = NULL;
  unlink (path);
}
END_TEST

/* A uid no account on a test machine uses: its task count is the serving child's alone. */
#define LONE_UID 61457

/* A proxy that can start no more threads (a pids limit, a full table) serves with the ones
 * it has, and closes at once a connection it has no thread for: none may wait unanswered in
 * the backlog, where the next ones would pile up for as long as the first lasts. */
START_TEST (test_a_proxy_that_cannot_start_threads_closes_a_second_connection_at_once)
{
  if (geteuid () != 0)
    BX_TEST_SKIP ("a uid whose task limit is already reached needs root to take");
  /* The real 10 s deadline: the first connection must outlast the wait for the second. */
  bx_egress_free (proxy);
  proxy = make_proxy (BX_EGRESS_HANDSHAKE_MS, bx_egress_default_config ().copy);
  char path[160];
  snprintf (path, sizeof path, "%s/proxy.sock", dir);
  cleanup_error bx_error err = NULL;
  int listener = bx_egress_listen (path, &err);
  ck_assert_msg (listener >= 0, "%s", bx_error_msg (err));
  pid_t child = fork ();
  ck_assert_int_ge (child, 0);
  if (child == 0)
    {
      /* RLIMIT_NPROC counts the tasks of the real uid: this process and one thread.  The
       * thread started for the first connection takes the second, and can start none. */
      struct rlimit two = { 2, 2 };
      if (setgid (LONE_UID) < 0 || setuid (LONE_UID) < 0 || setrlimit (RLIMIT_NPROC, &two) < 0)
        _exit (3);
      bx_egress_serve (proxy, listener, &err);
      _exit (2);
    }
  close (listener);
  /* The first is served: its thread answers the greeting and then waits for the request. */
  int first = connect_unix (path);
  greet (first);
  int second = connect_unix (path);
  bool closed = test_closed_without_bytes (second, 3000);
  close (second);
  close (first);
  kill (child, SIGKILL);
  waitpid (child, NULL, 0);
  unlink (path);
  ck_assert_msg (closed, "a second connection waited unanswered while the first was served");
}
END_TEST

static Suite *
egress_suite (void)
{
  Suite *s = suite_create ("egress");
  TCase *tc = tcase_create ("handshake");
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 30);
  tcase_add_test (tc, test_allow_list_refuses_empty_pieces_and_bad_patterns);
  tcase_add_test (tc, test_each_reply_is_recorded_with_host_port_code_and_address);
  tcase_add_test (tc, test_records_stop_at_the_maximum);
  tcase_add_test (tc, test_no_connection_past_the_last_record);
  tcase_add_test (tc, test_allow_list_permits_its_hosts_without_regard_to_case);
  tcase_add_test (tc, test_allow_list_permits_port_443_unless_a_pattern_names_its_ports);
  tcase_add_test (tc, test_a_greeting_of_another_version_closes_without_a_reply);
  tcase_add_test (tc, test_methods_without_no_authentication_are_answered_ff_then_closed);
  tcase_add_test (tc, test_an_empty_method_list_is_answered_ff);
  tcase_add_test (tc, test_curls_methods_0_and_2_are_accepted);
  tcase_add_test (tc, test_a_greeting_cut_short_closes_without_a_reply);
  tcase_add_test (tc, test_the_greeting_reads_exactly_its_methods);
  tcase_add_test (tc, test_a_request_of_another_version_closes_without_a_reply);
  tcase_add_test (tc, test_a_nonzero_reserved_byte_closes_without_a_reply);
  tcase_add_test (tc, test_bind_and_udp_associate_are_refused_with_7);
  tcase_add_test (tc, test_ip_address_types_are_refused_with_8_without_reading_the_address);
  tcase_add_test (tc, test_a_zero_length_name_is_refused_with_2);
  tcase_add_test (tc, test_a_request_cut_short_closes_without_a_reply);
  tcase_add_test (tc, test_a_name_cut_short_closes_without_a_reply);
  tcase_add_test (tc, test_a_missing_port_closes_without_a_reply);
  tcase_add_test (tc, test_a_port_other_than_443_is_refused_with_2);
  tcase_add_test (tc, test_a_private_range_lets_its_addresses_through_and_no_other);
  tcase_add_test (tc, test_a_private_range_that_holds_none_of_the_addresses_is_3);
  tcase_add_test (tc, test_a_private_range_never_parses_over_loopback_or_link_local);
  tcase_add_test (tc, test_a_pattern_with_a_port_lets_that_port_through_and_no_other);
  tcase_add_test (tc, test_a_pattern_with_any_port_lets_every_port_but_0_through);
  tcase_add_test (tc, test_a_name_not_granted_is_refused_with_2_and_never_looked_up);
  tcase_add_test (tc, test_names_are_matched_without_regard_to_case);
  tcase_add_test (tc, test_ip_literals_as_names_are_refused_with_2_before_any_lookup);
  tcase_add_test (tc, test_names_with_bytes_outside_host_syntax_are_refused_with_2);
  tcase_add_test (tc, test_a_255_byte_name_is_read_whole_and_refused_with_2);
  tcase_add_test (tc, test_a_name_with_only_non_public_addresses_is_3_and_none_is_tried);
  tcase_add_test (tc, test_non_public_addresses_are_skipped_for_the_first_public_one);
  tcase_add_test (tc, test_an_empty_answer_is_4);
  tcase_add_test (tc, test_a_failed_lookup_is_4);
  tcase_add_test (tc, test_a_connect_failure_is_5);
  tcase_add_test (tc, test_a_connect_that_times_out_is_6);
  tcase_add_test (tc, test_a_hanging_resolver_is_cut_at_the_deadline);
  tcase_add_test (tc, test_a_slow_client_is_cut_at_the_deadline);
  tcase_add_test (tc, test_a_silent_client_is_cut_at_the_deadline);
  suite_add_tcase (s, tc);

  TCase *copy = tcase_create ("copy");
  tcase_add_checked_fixture (copy, setup, teardown);
  tcase_set_timeout (copy, 120);
  /* Each copy test runs in every copy mode (the enum bx_egress_copy values). */
  tcase_add_loop_test (copy, test_bytes_pass_both_ways_after_the_handshake, 0, 4);
  tcase_add_loop_test (copy, test_a_half_close_from_the_client_reaches_the_server, 0, 4);
  tcase_add_loop_test (copy, test_a_half_close_from_the_server_reaches_the_client, 0, 4);
  tcase_add_loop_test (copy, test_64_mib_pass_each_way_at_once_unchanged, 0, 4);
  tcase_add_loop_test (copy, test_a_server_that_goes_away_ends_the_connection, 0, 4);
  suite_add_tcase (s, copy);

  TCase *limits = tcase_create ("limits");
  tcase_add_checked_fixture (limits, setup, teardown);
  tcase_set_timeout (limits, 30);
  tcase_add_test (limits, test_the_ninth_connection_is_closed_at_once);
  tcase_add_test (limits, test_a_slow_client_is_cut_at_the_real_10_s_deadline);
  suite_add_tcase (s, limits);

  /* Another uid with its own task limit: only root can take it. */
  TCase *root = bx_test_case_may_skip (s, "as_root");
  tcase_add_checked_fixture (root, setup, teardown);
  tcase_set_timeout (root, 30);
  tcase_add_test (root, test_a_proxy_that_cannot_start_threads_closes_a_second_connection_at_once);
  return s;
}

BX_TEST_MAIN (egress_suite)
