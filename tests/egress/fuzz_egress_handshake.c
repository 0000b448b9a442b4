/* SPDX-License-Identifier: Apache-2.0 */
/* Arbitrary bytes as a client's whole side of a connection: greeting, request and whatever
 * follows, through a socketpair into bx_egress_handle with the fake Dial.  The client's end
 * is half-closed after the bytes, so every input ends the handshake at once (no waiting for
 * the deadline).  A granted name reaches a local server that answers and closes, so the copy
 * runs and ends too. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "dial_fake.h"
#include "egress.h"

static struct bx_egress *proxy;
static int server_listener = -1;

/* The local server: reads a little, answers, closes. */
static void *
server_loop (void *arg)
{
  for (;;)
    {
      int fd = accept4 (server_listener, NULL, NULL, SOCK_CLOEXEC);
      if (fd < 0)
        continue;
      char buf[256];
      (void)!recv (fd, buf, sizeof buf, MSG_DONTWAIT);
      (void)!send (fd, "HTTP/1.1 200 OK\r\n\r\n", 19, MSG_NOSIGNAL | MSG_DONTWAIT);
      close (fd);
    }
  return NULL;
}

static void
init (void)
{
  signal (SIGPIPE, SIG_IGN);
  static char dir[] = "/tmp/bx-egress-fuzz-XXXXXX";
  if (mkdtemp (dir) == NULL)
    abort ();
  char path[96];
  snprintf (path, sizeof path, "%s/server.sock", dir);
  cleanup_error bx_error err = NULL;
  server_listener = bx_egress_listen (path, &err);
  if (server_listener < 0)
    abort ();
  /* The socket file's name is kept only by the fake; the folder is left for the run. */
  struct bx_dial_fake *fake = bx_dial_fake_new_unix (path);
  const char *pub[] = { "93.184.216.34" };
  const char *mixed[] = { "10.0.0.1", "::1", "93.184.216.35" };
  const char *priv[] = { "127.0.0.1", "192.168.0.1" };
  bx_dial_fake_add (fake, "a.example", pub, 1);
  bx_dial_fake_add (fake, "m.example", mixed, 3);
  bx_dial_fake_add (fake, "p.example", priv, 2);
  bx_dial_fake_add_failure (fake, "f.example");
  bx_dial_fake_add (fake, "r.example", (const char *[]){ "93.184.216.36" }, 1);
  bx_dial_fake_refuse (fake, "93.184.216.36");
  struct bx_allow *allow = NULL;
  if (bx_allow_parse ("*.example,a.test", &allow, &err) < 0)
    abort ();
  struct bx_egress_config config = bx_egress_default_config ();
  config.handshake_ms = 2000;
  config.connect_ms = 1000;
  proxy = bx_egress_new (allow, bx_dial_fake_dial (fake), &config);
  pthread_t t;
  if (pthread_create (&t, NULL, server_loop, NULL) != 0)
    abort ();
  pthread_detach (t);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once (&once, init);
  /* A socket buffer holds far more; larger inputs say nothing new about the handshake. */
  if (size > 4096)
    size = 4096;
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    abort ();
  if (size > 0 && send (sv[0], data, size, MSG_NOSIGNAL) != (ssize_t)size)
    abort ();
  shutdown (sv[0], SHUT_WR);
  bx_egress_handle (proxy, sv[1]);
  /* Whatever the proxy answered: a reply is at most 2 + 10 bytes before the copy. */
  char buf[512];
  while (recv (sv[0], buf, sizeof buf, MSG_DONTWAIT) > 0)
    ;
  close (sv[0]);
  return 0;
}
