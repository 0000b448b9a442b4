/* SPDX-License-Identifier: Apache-2.0 */
/* The egress proxy: handshake, copy, serve.  Everything read during the handshake comes from
 * the untrusted side (a sandbox a model steers): it reads exactly the bytes the protocol
 * gives, never more, under one deadline for the whole handshake, and never indexes or
 * allocates by a number it has not checked (every length here is one byte, so the buffers
 * are fixed). */
#include "egress.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bx/addr.h"
#include "bx/cidr.h"
#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/fd.h"
#include "bx/hosts.h"

/* ---- the allow list ---- */

struct bx_allow
{
  size_t n;
  char **patterns;
  size_t n_private;
  struct bx_cidr *ranges;
};

void
bx_allow_free (struct bx_allow *allow)
{
  if (allow == NULL)
    return;
  for (size_t i = 0; i < allow->n; i++)
    free (allow->patterns[i]);
  free (allow->patterns);
  free (allow->ranges);
  free (allow);
}

int
bx_allow_parse (const char *list, struct bx_allow **out, bx_error *err)
{
  struct bx_allow *allow = bx_xzalloc (sizeof *allow);
  size_t pieces = 1;
  for (const char *c = list; *c; c++)
    pieces += *c == ',';
  allow->patterns = bx_xzalloc (pieces * sizeof *allow->patterns);

  const char *start = list;
  for (;;)
    {
      const char *end = strchrnul (start, ',');
      if (end == start)
        {
          bx_allow_free (allow);
          if (*list == '\0')
            return bx_error_setc (err, EINVAL, "no host pattern");
          return bx_error_setc (err, EINVAL, "an empty host pattern in \"%s\"", list);
        }
      char *piece = bx_xstrndup (start, end - start);
      allow->patterns[allow->n++] = piece;
      if (!bx_valid_host_port_pattern (piece))
        {
          int r = bx_error_setc (err, EINVAL, "not a host pattern: \"%s\"", piece);
          bx_allow_free (allow);
          return r;
        }
      if (*end == '\0')
        break;
      start = end + 1;
    }
  *out = allow;
  return 0;
}

bool
bx_allow_permits (const struct bx_allow *allow, const char *host, unsigned port)
{
  if (!bx_valid_host (host))
    return false;
  for (size_t i = 0; i < allow->n; i++)
    if (bx_host_port_matches (allow->patterns[i], host, port))
      return true;
  return false;
}

int
bx_allow_parse_private (struct bx_allow *allow, const char *list, bx_error *err)
{
  size_t pieces = 1;
  for (const char *c = list; *c; c++)
    pieces += *c == ',';
  struct bx_cidr *ranges = bx_xzalloc (pieces * sizeof *ranges);
  size_t n = 0;
  const char *start = list;
  for (;;)
    {
      const char *end = strchrnul (start, ',');
      size_t len = (size_t)(end - start);
      char piece[BX_CIDR_TEXT_MAX + 1];
      cleanup_error bx_error why = NULL;
      bool ok = len >= 1 && len <= BX_CIDR_TEXT_MAX;
      if (ok)
        {
          memcpy (piece, start, len);
          piece[len] = '\0';
          ok = bx_cidr_parse (piece, &ranges[n], &why) == 0;
        }
      if (!ok)
        {
          free (ranges);
          int shown = len > BX_CIDR_TEXT_MAX ? BX_CIDR_TEXT_MAX : (int)len;
          return bx_error_setc (err, EINVAL, "not an address range: \"%.*s\": %s", shown, start,
                                why != NULL ? bx_error_msg (why)
                                : len == 0  ? "an empty range"
                                            : "too long");
        }
      n++;
      if (*end == '\0')
        break;
      start = end + 1;
    }
  free (allow->ranges);
  allow->ranges = ranges;
  allow->n_private = n;
  return 0;
}

bool
bx_allow_address (const struct bx_allow *allow, const struct sockaddr *addr)
{
  if (bx_is_public (addr))
    return true;
  for (size_t i = 0; i < allow->n_private; i++)
    if (bx_cidr_contains (&allow->ranges[i], addr))
      return true;
  return false;
}

/* ---- the proxy ---- */

struct bx_egress
{
  struct bx_allow *allow;
  const struct bx_dial *dial;
  struct bx_egress_config config;
  atomic_int active;  /* connections accepted and not yet closed */
  atomic_int records; /* records written, at most BX_EGRESS_RECORDS_MAX */
  /* The threads that serve (serve, below): how many wait in accept, how many there are. */
  int listener;
  atomic_int waiting;
  pthread_mutex_t lock; /* for threads */
  int threads;
};

struct bx_egress_config
bx_egress_default_config (void)
{
  /* The copy: one thread, poll and splice, which bench/egress/run.sh measured fastest of
   * the copies it offers, against a buffer and a thread per direction (bench/README.md). */
  return (struct bx_egress_config){ .handshake_ms = BX_EGRESS_HANDSHAKE_MS,
                                    .connect_ms = BX_EGRESS_CONNECT_MS,
                                    .copy = BX_EGRESS_COPY_POLL_SPLICE,
                                    .records_fd = -1 };
}

struct bx_egress *
bx_egress_new (struct bx_allow *allow, const struct bx_dial *dial,
               const struct bx_egress_config *config)
{
  struct bx_egress *proxy = bx_xzalloc (sizeof *proxy);
  proxy->allow = allow;
  proxy->dial = dial;
  proxy->config = config ? *config : bx_egress_default_config ();
  atomic_init (&proxy->active, 0);
  atomic_init (&proxy->waiting, 0);
  pthread_mutex_init (&proxy->lock, NULL);
  return proxy;
}

void
bx_egress_free (struct bx_egress *proxy)
{
  if (proxy == NULL)
    return;
  bx_allow_free (proxy->allow);
  pthread_mutex_destroy (&proxy->lock);
  free (proxy);
}

int
bx_egress_active (struct bx_egress *proxy)
{
  return atomic_load (&proxy->active);
}

/* Small stacks: the proxy's threads hold no big frames (the largest, the copy's first
 * buffers, is 32 KiB; egress_copy.c), and 8 connections' worth of default 8 MiB stacks is
 * address space for nothing. */
#define THREAD_STACK (256 * 1024)
/* getaddrinfo and the NSS modules under it want more than that. */
#define RESOLVER_STACK (1024 * 1024)

static int
start_thread (pthread_t *thread, size_t stack, bool detached, void *(*fn) (void *), void *arg)
{
  pthread_attr_t attr;
  if (pthread_attr_init (&attr) != 0)
    return -1;
  pthread_attr_setstacksize (&attr, stack);
  if (detached)
    pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  int r = pthread_create (thread, &attr, fn, arg);
  pthread_attr_destroy (&attr);
  return r == 0 ? 0 : -1;
}

/* ---- resolution bounded by the handshake's deadline ----
 *
 * The Dial's resolve may block (getaddrinfo has no timeout of its own, and a resolver can
 * hang), so it runs on a resolver thread; the handler waits for it until the deadline and
 * then walks away.  The job is shared by the two and freed by whichever lets go last.
 *
 * Resolver threads are kept for a while and reused: starting a thread per lookup cost about
 * 80 us a connection here, a tenth of the proxy's connection time.  They are a process-wide
 * resource (like the resolver itself), bounded, so clients that keep asking for names whose
 * resolver hangs cannot pile up threads: with all of them busy, a lookup fails (reply 4). */

#define MAX_RESOLVER_THREADS 64
/* An idle resolver thread ends after this long. */
#define RESOLVER_IDLE_MS 10000

struct resolve_job
{
  atomic_int refs;
  pthread_mutex_t lock;
  pthread_cond_t done_cond;
  bool done;
  const struct bx_dial *dial;
  char host[BX_HOST_MAX + 1];
  uint16_t port;
  int64_t deadline;
  int rc;
  struct bx_dial_addrs addrs;
  struct resolve_job *next; /* in the pool's queue */
};

static struct
{
  pthread_mutex_t lock;
  pthread_cond_t work;
  struct resolve_job *head, *tail;
  int queued;
  int idle;
  int threads;
} resolvers = { .lock = PTHREAD_MUTEX_INITIALIZER };
static pthread_once_t resolvers_once = PTHREAD_ONCE_INIT;

static void
resolvers_init (void)
{
  pthread_condattr_t cattr;
  pthread_condattr_init (&cattr);
  pthread_condattr_setclock (&cattr, CLOCK_MONOTONIC);
  pthread_cond_init (&resolvers.work, &cattr);
  pthread_condattr_destroy (&cattr);
}

static struct timespec
monotonic_at (int64_t ms)
{
  return (struct timespec){ .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
}

static void
resolve_job_unref (struct resolve_job *job)
{
  if (atomic_fetch_sub (&job->refs, 1) != 1)
    return;
  pthread_mutex_destroy (&job->lock);
  pthread_cond_destroy (&job->done_cond);
  free (job);
}

static void
run_job (struct resolve_job *job)
{
  cleanup_error bx_error err = NULL;
  struct bx_dial_addrs addrs;
  addrs.n = 0;
  /* A job that waited past its deadline has nobody left to answer. */
  int rc = -1;
  if (bx_now_ms () < job->deadline)
    rc = job->dial->resolve (job->dial->ctx, job->host, job->port, job->deadline, &addrs, &err);
  pthread_mutex_lock (&job->lock);
  job->rc = rc;
  if (rc == 0)
    job->addrs = addrs;
  job->done = true;
  pthread_cond_signal (&job->done_cond);
  pthread_mutex_unlock (&job->lock);
  resolve_job_unref (job);
}

static void *
resolver_thread (void *arg)
{
  pthread_mutex_lock (&resolvers.lock);
  for (;;)
    {
      const struct timespec until = monotonic_at (bx_now_ms () + RESOLVER_IDLE_MS);
      resolvers.idle++;
      int r = 0;
      while (resolvers.head == NULL && r != ETIMEDOUT)
        r = pthread_cond_timedwait (&resolvers.work, &resolvers.lock, &until);
      resolvers.idle--;
      if (resolvers.head == NULL)
        break;
      struct resolve_job *job = resolvers.head;
      resolvers.head = job->next;
      if (resolvers.head == NULL)
        resolvers.tail = NULL;
      resolvers.queued--;
      pthread_mutex_unlock (&resolvers.lock);
      run_job (job);
      pthread_mutex_lock (&resolvers.lock);
    }
  resolvers.threads--;
  pthread_mutex_unlock (&resolvers.lock);
  return NULL;
}

/* Queues JOB for a resolver thread, starting one when none is idle; -1 when there is no
 * thread to run it on. */
static int
submit (struct resolve_job *job)
{
  pthread_once (&resolvers_once, resolvers_init);
  pthread_mutex_lock (&resolvers.lock);
  int rc = 0;
  if (resolvers.idle <= resolvers.queued)
    {
      pthread_t thread;
      if (resolvers.threads >= MAX_RESOLVER_THREADS
          || start_thread (&thread, RESOLVER_STACK, true, resolver_thread, NULL) < 0)
        rc = -1;
      else
        resolvers.threads++;
    }
  if (rc == 0)
    {
      job->next = NULL;
      if (resolvers.tail)
        resolvers.tail->next = job;
      else
        resolvers.head = job;
      resolvers.tail = job;
      resolvers.queued++;
      pthread_cond_signal (&resolvers.work);
    }
  pthread_mutex_unlock (&resolvers.lock);
  return rc;
}

/* 0 with OUT filled, or -1 (failure, timeout, or no thread to run it on). */
static int
resolve_before (const struct bx_dial *dial, const char *host, uint16_t port, int64_t deadline,
                struct bx_dial_addrs *out)
{
  struct resolve_job *job = bx_xzalloc (sizeof *job);
  atomic_init (&job->refs, 2);
  pthread_mutex_init (&job->lock, NULL);
  pthread_condattr_t cattr;
  pthread_condattr_init (&cattr);
  pthread_condattr_setclock (&cattr, CLOCK_MONOTONIC);
  pthread_cond_init (&job->done_cond, &cattr);
  pthread_condattr_destroy (&cattr);
  job->dial = dial;
  size_t host_len = strnlen (host, BX_HOST_MAX);
  memcpy (job->host, host, host_len);
  job->host[host_len] = '\0';
  job->port = port;
  job->deadline = deadline;

  if (submit (job) < 0)
    {
      atomic_store (&job->refs, 1);
      resolve_job_unref (job);
      return -1;
    }

  /* bx_now_ms is CLOCK_MONOTONIC in ms, the clock the condition waits on. */
  const struct timespec until = monotonic_at (deadline);
  int rc = -1;
  pthread_mutex_lock (&job->lock);
  while (!job->done)
    if (pthread_cond_timedwait (&job->done_cond, &job->lock, &until) == ETIMEDOUT)
      break;
  if (job->done && job->rc == 0)
    {
      *out = job->addrs;
      rc = 0;
    }
  pthread_mutex_unlock (&job->lock);
  /* Still queued or running after the deadline: the resolver thread frees it. */
  resolve_job_unref (job);
  return rc;
}

/* ---- the handshake ---- */

/* "Refuse with CODE": the reply, then the caller closes.  The reply is ten bytes on a socket
 * nobody has written to yet: it fits the socket buffer, so it never waits, and a failure
 * changes nothing (the connection closes either way). */
static int
refuse (int client, uint8_t code)
{
  const uint8_t reply[10] = { 5, code, 0, 1, 0, 0, 0, 0, 0, 0 };
  (void)!send (client, reply, sizeof reply, MSG_NOSIGNAL | MSG_DONTWAIT);
  return -1;
}

/* The same, noting CODE for the connection's record. */
static int
refuse_as (struct bx_egress_conn *conn, int client, uint8_t code)
{
  conn->replied = true;
  conn->reply = code;
  return refuse (client, code);
}

/* Reads exactly LEN bytes before DEADLINE; false when the peer closed, the read failed or
 * the deadline passed (each means: stop without a reply). */
static bool
read_exact (int fd, void *buf, size_t len, int64_t deadline)
{
  cleanup_error bx_error err = NULL;
  if (len == 0)
    return true;
  return bx_read_full (fd, buf, len, deadline, &err) == (ssize_t)len;
}

/* The handshake, in the numbered steps below.  Returns the connected server socket, or -1
 * when the connection must close (after a refusal, or silently). */
static int
handshake (struct bx_egress *proxy, int client, struct bx_egress_conn *conn)
{
  const int64_t deadline = bx_deadline_in (proxy->config.handshake_ms);
  uint8_t head[4];

  /* 1. version, count of methods. */
  if (!read_exact (client, head, 2, deadline) || head[0] != 5)
    return -1;
  /* 2. the methods: 0 (no authentication) must be among them. */
  uint8_t methods[255];
  size_t n_methods = head[1];
  if (!read_exact (client, methods, n_methods, deadline))
    return -1;
  if (memchr (methods, 0, n_methods) == NULL)
    {
      cleanup_error bx_error err = NULL;
      const uint8_t no[2] = { 5, 0xff };
      bx_write_full (client, no, sizeof no, deadline, &err);
      return -1;
    }
  {
    cleanup_error bx_error err = NULL;
    const uint8_t yes[2] = { 5, 0 };
    if (bx_write_full (client, yes, sizeof yes, deadline, &err) < 0)
      return -1;
  }

  /* 3. version, command, reserved, address type. */
  if (!read_exact (client, head, 4, deadline) || head[0] != 5 || head[2] != 0)
    return -1;
  /* 4. CONNECT only. */
  if (head[1] != 1)
    return refuse_as (conn, client, BX_SOCKS_COMMAND_NOT_SUPPORTED);
  /* 5. a domain name only: an IP literal (1, 4) is refused without reading it. */
  if (head[3] != 3)
    return refuse_as (conn, client, BX_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED);
  /* 6. the name's length. */
  uint8_t len;
  if (!read_exact (client, &len, 1, deadline))
    return -1;
  if (len == 0)
    return refuse_as (conn, client, BX_SOCKS_NOT_ALLOWED);
  /* 7. the name and the port. */
  char name[256];
  uint8_t port_be[2];
  if (!read_exact (client, name, len, deadline) || !read_exact (client, port_be, 2, deadline))
    return -1;
  name[len] = '\0';
  uint16_t port = (uint16_t)(port_be[0] << 8 | port_be[1]);
  conn->port = port;
  if (bx_valid_host_n (name, len))
    memcpy (conn->host, name, (size_t)len + 1);
  /* 8. a host name (bx_valid_host_n refuses a NUL, bytes outside host syntax and every
   * numeric form glibc would read as an address, before any lookup), granted with this
   * port. */
  if (!bx_valid_host_n (name, len) || !bx_allow_permits (proxy->allow, name, port))
    return refuse_as (conn, client, BX_SOCKS_NOT_ALLOWED);

  /* 9. resolve before the deadline (a failure or an empty answer: 4); the first public
   * address (or one in a range of --allow-private), the others never tried (none: 3, so
   * the tool can say the name is there but out of reach). */
  struct bx_dial_addrs addrs;
  if (resolve_before (proxy->dial, name, port, deadline, &addrs) < 0 || addrs.n == 0)
    return refuse_as (conn, client, BX_SOCKS_HOST_UNREACHABLE);
  const struct bx_dial_addr *chosen = NULL;
  for (size_t i = 0; i < addrs.n && i < BX_DIAL_MAX_ADDRS && chosen == NULL; i++)
    if (bx_allow_address (proxy->allow, (const struct sockaddr *)&addrs.a[i].ss))
      chosen = &addrs.a[i];
  if (chosen == NULL)
    return refuse_as (conn, client, BX_SOCKS_NETWORK_UNREACHABLE);

  /* 10. its record, taken before it connects: a proxy that cannot record a connection does
   * not make it. */
  if (proxy->config.records_fd >= 0)
    {
      if (atomic_fetch_add (&proxy->records, 1) >= BX_EGRESS_RECORDS_MAX)
        return refuse_as (conn, client, BX_SOCKS_GENERAL_FAILURE); /* past the cap: no record */
      conn->reserved = true;
    }

  /* 11. connect, with its own timeout (past it: 6; any other failure: 5). */
  cleanup_error bx_error err = NULL;
  cleanup_close int server
      = proxy->dial->connect (proxy->dial->ctx, (const struct sockaddr *)&chosen->ss, chosen->len,
                              proxy->config.connect_ms, &err);
  if (server < 0)
    return refuse_as (conn, client,
                      bx_error_code (err) == ETIMEDOUT ? BX_SOCKS_TTL_EXPIRED
                                                       : BX_SOCKS_CONNECTION_REFUSED);

  /* 12. success. */
  conn->replied = true;
  conn->reply = BX_SOCKS_SUCCEEDED;
  memcpy (&conn->address, &chosen->ss, chosen->len);
  conn->address_len = chosen->len;
  const uint8_t ok[10] = { 5, BX_SOCKS_SUCCEEDED, 0, 1, 0, 0, 0, 0, 0, 0 };
  if (bx_write_full (client, ok, sizeof ok, bx_deadline_in (proxy->config.connect_ms), &err) < 0)
    return -1;
  return steal_fd (&server);
}

void
bx_egress_handle (struct bx_egress *proxy, int client_fd)
{
  cleanup_close int client = client_fd;
  struct bx_egress_conn conn = { 0 };
  cleanup_close int server = handshake (proxy, client, &conn);
  /* A connection that got a reply is recorded; one that closed silently (a bad greeting, a
   * request cut short) never said where it wanted to go. */
  if (conn.replied)
    bx_egress_record (proxy->config.records_fd, &proxy->records, &conn);
  if (server < 0)
    return;

  bx_egress_copy (client, server, proxy->config.copy);
}

/* ---- serve ----
 *
 * Every thread of the proxy, the caller of bx_egress_serve and the threads it starts alike,
 * waits in accept when it has no connection and handles the one it accepts itself: the
 * kernel wakes one waiter per connection, and no connection passes from thread to thread
 * (a hand-off costs a wake-up and a switch of threads per connection).
 *
 * A thread handles a connection only while fewer than MAX_CONNECTIONS are active, and up to
 * MAX_CONNECTIONS + 1 threads serve: with the most connections active, one of them still
 * waits in accept and closes the next connection at once.  A thread that takes a connection
 * when no other waits starts one more; threads are kept for the next connections, since
 * starting a thread per connection is a large part of a connection's cost. */

static void *serve_thread (void *arg);

/* Whether another thread will accept while the caller handles its connection: one waits in
 * accept, or all MAX_CONNECTIONS + 1 serve (then one that handles nothing is on its way
 * back to accept), or one could be started now. */
static bool
keep_one_waiting (struct bx_egress *proxy)
{
  if (atomic_load (&proxy->waiting) > 0)
    return true;
  pthread_mutex_lock (&proxy->lock);
  bool ok = proxy->threads >= BX_EGRESS_MAX_CONNECTIONS + 1;
  pthread_t thread;
  if (!ok && start_thread (&thread, THREAD_STACK, true, serve_thread, proxy) == 0)
    {
      proxy->threads++;
      ok = true;
    }
  pthread_mutex_unlock (&proxy->lock);
  return ok;
}

/* Accepts and handles connections; returns when accept fails, with errno. */
static void
serve_connections (struct bx_egress *proxy)
{
  for (;;)
    {
      atomic_fetch_add (&proxy->waiting, 1);
      int client = bx_accept_retrying (proxy->listener);
      atomic_fetch_sub (&proxy->waiting, 1);
      if (client < 0)
        return;
      if (atomic_fetch_add (&proxy->active, 1) >= BX_EGRESS_MAX_CONNECTIONS)
        {
          atomic_fetch_sub (&proxy->active, 1);
          close (client);
          continue;
        }
      /* No thread would be left to accept (none can start: a pids limit, a full table):
       * the connection is closed rather than the next ones left unanswered in the backlog
       * for as long as this one lasts. */
      if (!keep_one_waiting (proxy))
        {
          atomic_fetch_sub (&proxy->active, 1);
          close (client);
          continue;
        }
      bx_egress_handle (proxy, client);
      atomic_fetch_sub (&proxy->active, 1);
    }
}

static void *
serve_thread (void *arg)
{
  struct bx_egress *proxy = arg;
  serve_connections (proxy);
  /* The listener failed: the caller of bx_egress_serve sees it too and reports it. */
  pthread_mutex_lock (&proxy->lock);
  proxy->threads--;
  pthread_mutex_unlock (&proxy->lock);
  return NULL;
}

int
bx_egress_serve (struct bx_egress *proxy, int listener, bx_error *err)
{
  proxy->listener = listener;
  pthread_mutex_lock (&proxy->lock);
  proxy->threads++;
  pthread_mutex_unlock (&proxy->lock);
  serve_connections (proxy);
  int e = errno;
  pthread_mutex_lock (&proxy->lock);
  proxy->threads--;
  pthread_mutex_unlock (&proxy->lock);
  return bx_error_set (err, e, "accept");
}

int
bx_egress_listen (const char *path, bx_error *err)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  size_t len = strlen (path);
  /* An empty path would autobind in the abstract namespace: not a file anyone can find. */
  if (len == 0)
    return bx_error_set (err, ENOENT, "cannot listen on %s", path);
  if (len >= sizeof sun.sun_path)
    return bx_error_set (err, ENAMETOOLONG, "cannot listen on %s", path);
  memcpy (sun.sun_path, path, len);

  cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return bx_error_set (err, errno, "cannot listen on %s", path);
  /* bind fails with EADDRINUSE on an existing file: a file already there is a mistake, and
   * it is never removed. */
  if (bind (fd, (struct sockaddr *)&sun, offsetof (struct sockaddr_un, sun_path) + len + 1) < 0
      || listen (fd, 64) < 0)
    return bx_error_set (err, errno, "cannot listen on %s", path);
  return steal_fd (&fd);
}
