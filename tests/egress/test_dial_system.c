/* SPDX-License-Identifier: Apache-2.0 */
/* The system Dial, with no network: connecting to loopback listeners (a connection, a refusal,
 * a connect that hangs and is cut at its timeout), resolving a name from the hosts file, and
 * the proxy with the system Dial refusing a granted name that resolves to loopback. */
#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/addr.h"
#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "dial.h"
#include "egress.h"
#include "egress_test_util.h"
#include "test_main.h"

/* A TCP listener on 127.0.0.1 with BACKLOG; its address in *ADDR. */
static int
listen_loopback (int backlog, struct sockaddr_in *addr)
{
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge (fd, 0);
  struct sockaddr_in in = { .sin_family = AF_INET };
  in.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  ck_assert_int_eq (bind (fd, (struct sockaddr *)&in, sizeof in), 0);
  ck_assert_int_eq (listen (fd, backlog), 0);
  socklen_t len = sizeof *addr;
  ck_assert_int_eq (getsockname (fd, (struct sockaddr *)addr, &len), 0);
  return fd;
}

START_TEST (test_the_system_dial_connects_and_gives_a_blocking_socket)
{
  struct sockaddr_in addr;
  cleanup_close int l = listen_loopback (8, &addr);
  const struct bx_dial *dial = bx_dial_system ();
  cleanup_error bx_error err = NULL;
  cleanup_close int fd
      = dial->connect (dial->ctx, (struct sockaddr *)&addr, sizeof addr, 2000, &err);
  ck_assert_msg (fd >= 0, "%s", bx_error_msg (err));
  ck_assert_int_eq (fcntl (fd, F_GETFL) & O_NONBLOCK, 0);
  cleanup_close int peer = accept (l, NULL, NULL);
  ck_assert_int_ge (peer, 0);
  ck_assert (test_send (fd, "hi", 2));
  char buf[2];
  bool closed;
  ck_assert_uint_eq (test_read (peer, buf, 2, 2000, &closed), 2);
}
END_TEST

START_TEST (test_the_system_dial_reports_a_refused_connect)
{
  struct sockaddr_in addr;
  int l = listen_loopback (8, &addr);
  close (l); /* nothing listens on that port now */
  const struct bx_dial *dial = bx_dial_system ();
  cleanup_error bx_error err = NULL;
  int fd = dial->connect (dial->ctx, (struct sockaddr *)&addr, sizeof addr, 2000, &err);
  ck_assert_int_lt (fd, 0);
  ck_assert_int_eq (bx_error_code (err), ECONNREFUSED);
}
END_TEST

/* A full accept queue drops the SYN, so the connect waits: the timeout cuts it. */
START_TEST (test_the_system_dial_cuts_a_connect_that_hangs_at_its_timeout)
{
  struct sockaddr_in addr;
  int l = listen_loopback (0, &addr);
  int fill[4];
  for (int i = 0; i < 4; i++)
    {
      fill[i] = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      connect (fill[i], (struct sockaddr *)&addr, sizeof addr);
    }
  poll (NULL, 0, 100);
  const struct bx_dial *dial = bx_dial_system ();
  cleanup_error bx_error err = NULL;
  int64_t start = bx_now_ms ();
  int fd = dial->connect (dial->ctx, (struct sockaddr *)&addr, sizeof addr, 300, &err);
  int64_t took = bx_now_ms () - start;
  for (int i = 0; i < 4; i++)
    close (fill[i]);
  close (l);
  if (fd >= 0)
    {
      /* Some kernels keep more than the backlog; then there is nothing to cut. */
      close (fd);
      BX_TEST_SKIP ("the kernel accepted past a full backlog");
    }
  ck_assert_int_eq (bx_error_code (err), ETIMEDOUT);
  ck_assert_int_ge (took, 250);
  ck_assert_int_lt (took, 1000);
}
END_TEST

START_TEST (test_the_system_dial_resolves_localhost_from_the_hosts_file)
{
  const struct bx_dial *dial = bx_dial_system ();
  cleanup_error bx_error err = NULL;
  struct bx_dial_addrs addrs;
  int r = dial->resolve (dial->ctx, "localhost", 443, bx_deadline_in (5000), &addrs, &err);
  ck_assert_msg (r == 0, "%s", bx_error_msg (err));
  ck_assert_uint_ge (addrs.n, 1);
  for (size_t i = 0; i < addrs.n; i++)
    {
      const struct sockaddr *sa = (const struct sockaddr *)&addrs.a[i].ss;
      ck_assert (sa->sa_family == AF_INET || sa->sa_family == AF_INET6);
      ck_assert (!bx_is_public (sa));
      uint16_t port = sa->sa_family == AF_INET ? ((const struct sockaddr_in *)sa)->sin_port
                                               : ((const struct sockaddr_in6 *)sa)->sin6_port;
      ck_assert_uint_eq (ntohs (port), 443);
    }
}
END_TEST

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
  return NULL;
}

/* A granted name that resolves to loopback through the real resolver: refused with 4, and
 * nothing is connected. */
START_TEST (test_the_proxy_with_the_system_dial_refuses_a_name_resolving_to_loopback)
{
  signal (SIGPIPE, SIG_IGN);
  struct bx_allow *allow = NULL;
  cleanup_error bx_error err = NULL;
  ck_assert_int_eq (bx_allow_parse ("localhost", &allow, &err), 0);
  struct bx_egress *proxy = bx_egress_new (allow, bx_dial_system (), NULL);
  int sv[2];
  ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  struct handle_arg a = { proxy, sv[1] };
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, handle_thread, &a), 0);
  const uint8_t hello[] = { 5, 1, 0 };
  ck_assert (test_send (sv[0], hello, sizeof hello));
  uint8_t buf[12];
  bool closed;
  ck_assert_uint_eq (test_read (sv[0], buf, 2, 3000, &closed), 2);
  uint8_t req[64];
  size_t n = test_request (req, "localhost", 9, 443);
  ck_assert (test_send (sv[0], req, n));
  ck_assert_uint_eq (test_read (sv[0], buf, 10, 8000, &closed), 10);
  ck_assert_uint_eq (buf[1], BX_SOCKS_NETWORK_UNREACHABLE);
  ck_assert (test_closed_without_bytes (sv[0], 3000));
  pthread_join (t, NULL);
  close (sv[0]);
  bx_egress_free (proxy);
}
END_TEST

static Suite *
make_suite (void)
{
  Suite *s = suite_create ("dial_system");
  TCase *tc = tcase_create ("system");
  tcase_set_timeout (tc, 30);
  tcase_add_test (tc, test_the_system_dial_connects_and_gives_a_blocking_socket);
  tcase_add_test (tc, test_the_system_dial_reports_a_refused_connect);
  tcase_add_test (tc, test_the_system_dial_resolves_localhost_from_the_hosts_file);
  tcase_add_test (tc, test_the_proxy_with_the_system_dial_refuses_a_name_resolving_to_loopback);
  suite_add_tcase (s, tc);
  /* A connect that hangs needs a kernel that keeps no more than the backlog. */
  TCase *may = bx_test_case_may_skip (s, "backlog");
  tcase_set_timeout (may, 30);
  tcase_add_test (may, test_the_system_dial_cuts_a_connect_that_hangs_at_its_timeout);
  return s;
}

BX_TEST_MAIN (make_suite)
