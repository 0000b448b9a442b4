/* SPDX-License-Identifier: Apache-2.0 */
/* Arbitrary bytes as a client of shell's local forwarder, through a socketpair into
 * bx_egress_local_handle with no proxy behind it: every input must end in one answer or a
 * close, never a crash or a hang (the client's end is half-closed after the bytes). */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress_local.h"

static void *
handle_thread (void *arg)
{
  bx_egress_local_handle ("/nonexistent/boxmaker-fuzz/egress.sock", *(int *)arg);
  return NULL;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static int once;
  if (!once)
    {
      signal (SIGPIPE, SIG_IGN);
      once = 1;
    }
  if (size > 2 * BX_EGRESS_LOCAL_HEAD_MAX)
    return 0;
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return 0;
  pthread_t t;
  if (pthread_create (&t, NULL, handle_thread, &sv[1]) != 0)
    {
      close (sv[0]);
      close (sv[1]);
      return 0;
    }
  size_t sent = 0;
  while (sent < size)
    {
      ssize_t n = send (sv[0], data + sent, size - sent, MSG_NOSIGNAL);
      if (n <= 0)
        break;
      sent += (size_t)n;
    }
  shutdown (sv[0], SHUT_WR);
  char buf[4096];
  while (recv (sv[0], buf, sizeof buf, 0) > 0)
    ;
  pthread_join (t, NULL);
  close (sv[0]);
  return 0;
}
