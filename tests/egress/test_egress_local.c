/* SPDX-License-Identifier: Apache-2.0 */
/* The shell's local forwarder (toolkit/egress_local.h) against hostile clients, over
 * socketpair(): every malformed head, an address, a missing port, a head past the cap, and
 * a proxy that is not there each get one HTTP answer with the reason, and the connection
 * ends.  The ways through are proven end to end in shell_forwarder.sh. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "egress_local.h"

#define NO_PROXY_HERE "/nonexistent/boxmaker-test/egress.sock"

struct handled
{
  int fd;
};

static void *
handle_thread (void *arg)
{
  struct handled *h = arg;
  bx_egress_local_handle (NO_PROXY_HERE, h->fd);
  return NULL;
}

/* Sends REQUEST (LEN bytes), half-closes, and returns everything the forwarder answered. */
static char *
exchange (const char *request, size_t len)
{
  int sv[2];
  ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  struct handled h = { sv[1] };
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, handle_thread, &h), 0);
  size_t sent = 0;
  while (sent < len)
    {
      ssize_t n = send (sv[0], request + sent, len - sent, MSG_NOSIGNAL);
      if (n <= 0)
        break; /* the forwarder may answer and close before it read everything */
      sent += (size_t)n;
    }
  shutdown (sv[0], SHUT_WR);
  size_t cap = 4096, got = 0;
  char *out = malloc (cap + 1);
  for (;;)
    {
      ssize_t n = recv (sv[0], out + got, cap - got, 0);
      if (n <= 0)
        break;
      got += (size_t)n;
      if (got == cap)
        break;
    }
  out[got] = '\0';
  pthread_join (t, NULL);
  close (sv[0]);
  return out;
}

static void
expect_answer (const char *request, const char *status_line)
{
  cleanup_free char *out = exchange (request, strlen (request));
  ck_assert_msg (strncmp (out, status_line, strlen (status_line)) == 0,
                 "request \"%s\": got \"%s\", expected \"%s\"", request, out, status_line);
  ck_assert_ptr_nonnull (strstr (out, "Connection: close\r\n"));
}

START_TEST (test_malformed_heads_get_400_with_the_reason)
{
  expect_answer ("garbage\r\n\r\n",
                 "HTTP/1.1 400 boxmaker egress: expected an HTTP/1 request line\r\n");
  expect_answer ("GET / HTTP/2\r\n\r\n",
                 "HTTP/1.1 400 boxmaker egress: expected an HTTP/1 request line\r\n");
  expect_answer ("GET /index.html HTTP/1.1\r\nHost: a.example\r\n\r\n",
                 "HTTP/1.1 400 boxmaker egress: expected CONNECT host:port, or a request for an "
                 "http:// URL\r\n");
  expect_answer ("CONNECT a.example HTTP/1.1\r\n\r\n",
                 "HTTP/1.1 400 boxmaker egress: CONNECT expects host:port\r\n");
  expect_answer ("CONNECT a.example:0 HTTP/1.1\r\n\r\n",
                 "HTTP/1.1 400 boxmaker egress: CONNECT expects host:port\r\n");
  expect_answer ("CONNECT a.example:0443 HTTP/1.1\r\n\r\n",
                 "HTTP/1.1 400 boxmaker egress: CONNECT expects host:port\r\n");
  expect_answer ("CONNECT a.example:65536 HTTP/1.1\r\n\r\n",
                 "HTTP/1.1 400 boxmaker egress: CONNECT expects host:port\r\n");
  expect_answer ("GET http://user@a.example/ HTTP/1.1\r\n\r\n",
                 "HTTP/1.1 400 boxmaker egress: expected http://host[:port]/path\r\n");
  expect_answer ("GET https://a.example/ HTTP/1.1\r\n\r\n",
                 "HTTP/1.1 400 boxmaker egress: expected CONNECT host:port, or a request for an "
                 "http:// URL\r\n");
  /* Closed before the blank line. */
  expect_answer ("CONNECT a.example:443 HTTP/1.1\r\n",
                 "HTTP/1.1 400 boxmaker egress: expected an HTTP request head\r\n");
}
END_TEST

START_TEST (test_a_head_past_the_cap_gets_400)
{
  size_t len = BX_EGRESS_LOCAL_HEAD_MAX + 100;
  char *big = malloc (len + 1);
  memcpy (big, "GET http://a.example/ HTTP/1.1\r\nX: ", 35);
  memset (big + 35, 'a', len - 35);
  big[len] = '\0';
  cleanup_free char *out = exchange (big, len);
  free (big);
  ck_assert_msg (strncmp (out, "HTTP/1.1 400 boxmaker egress: expected an HTTP request head", 59)
                     == 0,
                 "got \"%s\"", out);
}
END_TEST

START_TEST (test_an_address_is_refused_before_the_proxy)
{
  const char *addresses[] = { "127.0.0.1", "0x7f000001", "127.1", "[::1]", "10.0.0.1" };
  for (size_t i = 0; i < sizeof addresses / sizeof *addresses; i++)
    {
      char req[128], want[256];
      snprintf (req, sizeof req, "CONNECT %s:443 HTTP/1.1\r\n\r\n", addresses[i]);
      snprintf (want, sizeof want,
                "HTTP/1.1 403 boxmaker egress: \"%s\" is not a host name (an address is never "
                "granted)\r\n",
                addresses[i]);
      expect_answer (req, want);
    }
}
END_TEST

START_TEST (test_no_proxy_is_502)
{
  expect_answer ("CONNECT a.example:443 HTTP/1.1\r\n\r\n",
                 "HTTP/1.1 502 boxmaker egress: the egress proxy is not there\r\n");
  expect_answer ("GET http://a.example/x HTTP/1.1\r\nHost: a.example\r\n\r\n",
                 "HTTP/1.1 502 boxmaker egress: the egress proxy is not there\r\n");
  /* SOCKS5 with nowhere to go: closed without a byte. */
  cleanup_free char *out = exchange ("\x05\x01\x00", 3);
  ck_assert_str_eq (out, "");
}
END_TEST

int
main (void)
{
  signal (SIGPIPE, SIG_IGN);
  Suite *s = suite_create ("egress_local");
  TCase *tc = tcase_create ("forwarder");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_malformed_heads_get_400_with_the_reason);
  tcase_add_test (tc, test_a_head_past_the_cap_gets_400);
  tcase_add_test (tc, test_an_address_is_refused_before_the_proxy);
  tcase_add_test (tc, test_no_proxy_is_502);
  suite_add_tcase (s, tc);
  SRunner *sr = srunner_create (s);
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
