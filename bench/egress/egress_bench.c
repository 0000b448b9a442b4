/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy's benchmark client and its loopback server, one program so every path
 * (direct, through the proxy over its Unix socket, through microsocks over TCP) runs the same
 * client code and only the way in differs.
 *
 *   egress_bench server PORT
 *       a loopback TCP server: each connection sends a header (mode, byte count); "b" sends
 *       that many bytes while reading as many, then closes; "c" answers one byte and closes.
 *   egress_bench bulk  VIA BYTES          BYTES each way at once on one connection
 *   egress_bench conns VIA COUNT          COUNT connections one after the other
 *   egress_bench hold  VIA COUNT          COUNT connections open, 1 MiB through each, then
 *                                         prints "ready" and waits for standard input to end
 *   bulk and conns print their figure (MB/s each way, connections/s) and the client's CPU
 *   seconds (all its threads, user and system).
 *   VIA: direct:PORT | socks-tcp:PORT:TARGETPORT | socks-unix:PATH:NAME
 *       socks-tcp asks for 127.0.0.1:TARGETPORT (address type 1, what microsocks serves);
 *       socks-unix asks for NAME:443 (address type 3, what the egress proxy serves).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

static void __attribute__ ((noreturn)) die (const char *what)
{
  perror (what);
  exit (1);
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* This process's CPU time so far, all threads, user and system, in seconds. */
static double
cpu_s (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec
         + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The server's side: a failure ends one connection, never the server. */
static bool
try_write_all (int fd, const void *buf, size_t len)
{
  for (size_t off = 0; off < len;)
    {
      ssize_t n = send (fd, (const char *)buf + off, len - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      off += n;
    }
  return true;
}

static bool
try_read_all (int fd, void *buf, size_t len)
{
  for (size_t off = 0; off < len;)
    {
      ssize_t n = read (fd, (char *)buf + off, len - off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      off += n;
    }
  return true;
}

static void
write_all (int fd, const void *buf, size_t len)
{
  if (!try_write_all (fd, buf, len))
    die ("send");
}

static void
read_all (int fd, void *buf, size_t len)
{
  for (size_t off = 0; off < len;)
    {
      ssize_t n = read (fd, (char *)buf + off, len - off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          fprintf (stderr, "read: %s\n", n == 0 ? "the end came early" : strerror (errno));
          exit (1);
        }
      off += n;
    }
}

/* ---- the server ---- */

struct drain
{
  int fd;
  uint64_t bytes;
};

/* Reads exactly BYTES: the benchmark sends no half-close, which microsocks does not pass on
 * (it ends the whole connection at the first end it reads). */
static void *
drain (void *arg)
{
  struct drain *d = arg;
  char *buf = malloc (CHUNK);
  for (uint64_t got = 0; got < d->bytes;)
    {
      size_t want = d->bytes - got < CHUNK ? d->bytes - got : CHUNK;
      ssize_t n = read (d->fd, buf, want);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += n;
    }
  free (buf);
  return NULL;
}

static void *
serve_one (void *arg)
{
  int fd = (int)(intptr_t)arg;
  uint8_t head[9];
  if (!try_read_all (fd, head, sizeof head))
    {
      close (fd);
      return NULL;
    }
  uint64_t bytes = 0;
  for (int i = 1; i < 9; i++)
    bytes = bytes << 8 | head[i];
  if (head[0] == 'c')
    (void)try_write_all (fd, "k", 1);
  else
    {
      /* Both ways at once: read to the end on a thread, send here. */
      static char zeros[CHUNK];
      pthread_t t;
      struct drain d = { fd, bytes };
      pthread_create (&t, NULL, drain, &d);
      for (uint64_t sent = 0; sent < bytes;)
        {
          size_t n = bytes - sent < CHUNK ? bytes - sent : CHUNK;
          if (!try_write_all (fd, zeros, n))
            break;
          sent += n;
        }
      pthread_join (t, NULL);
    }
  close (fd);
  return NULL;
}

static int
server (int port)
{
  int l = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt (l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons (port) };
  in.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (bind (l, (struct sockaddr *)&in, sizeof in) < 0 || listen (l, 256) < 0)
    die ("server: bind");
  printf ("listening\n");
  fflush (stdout);
  for (;;)
    {
      int fd = accept4 (l, NULL, NULL, SOCK_CLOEXEC);
      if (fd < 0)
        continue;
      setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      pthread_t t;
      pthread_attr_t attr;
      pthread_attr_init (&attr);
      pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
      if (pthread_create (&t, &attr, serve_one, (void *)(intptr_t)fd) != 0)
        close (fd);
      pthread_attr_destroy (&attr);
    }
  return 0;
}

/* ---- the client ---- */

enum via_kind
{
  VIA_DIRECT,
  VIA_SOCKS_TCP,
  VIA_SOCKS_UNIX
};

struct via
{
  enum via_kind kind;
  int port, target_port;
  char path[108];
  char name[256];
};

static void
parse_via (const char *s, struct via *v)
{
  memset (v, 0, sizeof *v);
  if (sscanf (s, "direct:%d", &v->port) == 1)
    v->kind = VIA_DIRECT;
  else if (sscanf (s, "socks-tcp:%d:%d", &v->port, &v->target_port) == 2)
    v->kind = VIA_SOCKS_TCP;
  else if (strncmp (s, "socks-unix:", 11) == 0 && strrchr (s, ':') > s + 11)
    {
      v->kind = VIA_SOCKS_UNIX;
      const char *colon = strrchr (s, ':');
      snprintf (v->path, sizeof v->path, "%.*s", (int)(colon - (s + 11)), s + 11);
      snprintf (v->name, sizeof v->name, "%s", colon + 1);
    }
  else
    {
      fprintf (stderr, "bad VIA: %s\n", s);
      exit (2);
    }
}

static int
tcp_connect (int port)
{
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons (port) };
  in.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (connect (fd, (struct sockaddr *)&in, sizeof in) < 0)
    die ("connect");
  int one = 1;
  setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

/* A connected stream to the server, through whatever VIA says. */
static int
open_via (const struct via *v)
{
  if (v->kind == VIA_DIRECT)
    return tcp_connect (v->port);
  int fd;
  uint8_t req[300];
  size_t n = 0;
  req[n++] = 5;
  req[n++] = 1;
  req[n++] = 0;
  if (v->kind == VIA_SOCKS_TCP)
    {
      fd = tcp_connect (v->port);
      req[n++] = 1;
      req[n++] = 127;
      req[n++] = 0;
      req[n++] = 0;
      req[n++] = 1;
      req[n++] = v->target_port >> 8;
      req[n++] = v->target_port & 0xff;
    }
  else
    {
      fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      struct sockaddr_un sun = { .sun_family = AF_UNIX };
      memcpy (sun.sun_path, v->path, strlen (v->path));
      if (connect (fd, (struct sockaddr *)&sun, sizeof sun) < 0)
        die ("connect to the proxy");
      size_t len = strlen (v->name);
      req[n++] = 3;
      req[n++] = (uint8_t)len;
      memcpy (req + n, v->name, len);
      n += len;
      req[n++] = 443 >> 8;
      req[n++] = 443 & 0xff;
    }
  /* Greeting, its answer, then the request: the order curl keeps (microsocks reads the
   * greeting with one large recv, so a request sent along with it would be lost). */
  const uint8_t hello[3] = { 5, 1, 0 };
  write_all (fd, hello, sizeof hello);
  uint8_t answer[10];
  read_all (fd, answer, 2);
  if (answer[1] != 0)
    {
      fprintf (stderr, "the proxy refused the greeting\n");
      exit (1);
    }
  write_all (fd, req, n);
  read_all (fd, answer, 10);
  if (answer[1] != 0)
    {
      fprintf (stderr, "the proxy refused: reply %u\n", answer[1]);
      exit (1);
    }
  return fd;
}

static void
send_header (int fd, char mode, uint64_t bytes)
{
  uint8_t head[9] = { (uint8_t)mode };
  for (int i = 8; i >= 1; i--, bytes >>= 8)
    head[i] = bytes & 0xff;
  write_all (fd, head, sizeof head);
}

struct pump
{
  int fd;
  uint64_t bytes;
};

static void *
pump_out (void *p)
{
  struct pump *a = p;
  static char zeros[CHUNK];
  for (uint64_t sent = 0; sent < a->bytes;)
    {
      size_t n = a->bytes - sent < CHUNK ? a->bytes - sent : CHUNK;
      write_all (a->fd, zeros, n);
      sent += n;
    }
  return NULL;
}

static int
bulk (const struct via *v, uint64_t bytes)
{
  double start = now_s ();
  int fd = open_via (v);
  send_header (fd, 'b', bytes);
  struct pump out = { fd, bytes };
  pthread_t t;
  pthread_create (&t, NULL, pump_out, &out);
  char *buf = malloc (CHUNK);
  uint64_t got = 0;
  while (got < bytes)
    {
      size_t want = bytes - got < CHUNK ? bytes - got : CHUNK;
      ssize_t n = read (fd, buf, want);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += n;
    }
  pthread_join (t, NULL);
  double took = now_s () - start;
  close (fd);
  free (buf);
  if (got != bytes)
    {
      fprintf (stderr, "received %llu of %llu bytes\n", (unsigned long long)got,
               (unsigned long long)bytes);
      return 1;
    }
  /* MB/s each way (both directions ran at once), and the client's CPU seconds. */
  printf ("%.1f %.4f\n", bytes / took / 1e6, cpu_s ());
  return 0;
}

static int
conns (const struct via *v, int count)
{
  double start = now_s ();
  for (int i = 0; i < count; i++)
    {
      int fd = open_via (v);
      send_header (fd, 'c', 0);
      char k;
      read_all (fd, &k, 1);
      close (fd);
    }
  printf ("%.0f %.4f\n", count / (now_s () - start), cpu_s ());
  return 0;
}

static int
hold (const struct via *v, int count)
{
  int fds[64];
  if (count > 64)
    count = 64;
  for (int i = 0; i < count; i++)
    {
      fds[i] = open_via (v);
      send_header (fds[i], 'b', 1 << 20);
      char *buf = malloc (1 << 20);
      memset (buf, 0, 1 << 20);
      write_all (fds[i], buf, 1 << 20);
      read_all (fds[i], buf, 1 << 20);
      free (buf);
    }
  printf ("ready\n");
  fflush (stdout);
  char c;
  while (read (0, &c, 1) > 0)
    ;
  for (int i = 0; i < count; i++)
    close (fds[i]);
  return 0;
}

int
main (int argc, char **argv)
{
  signal (SIGPIPE, SIG_IGN);
  if (argc == 3 && strcmp (argv[1], "server") == 0)
    return server (atoi (argv[2]));
  if (argc != 4)
    {
      fprintf (stderr, "usage: egress_bench server PORT | (bulk|conns|hold) VIA N\n");
      return 2;
    }
  struct via v;
  parse_via (argv[2], &v);
  if (strcmp (argv[1], "bulk") == 0)
    return bulk (&v, strtoull (argv[3], NULL, 10));
  if (strcmp (argv[1], "conns") == 0)
    return conns (&v, atoi (argv[3]));
  if (strcmp (argv[1], "hold") == 0)
    return hold (&v, atoi (argv[3]));
  return 2;
}
