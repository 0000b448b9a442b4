/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd's metrics.  See metrics.h. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/fd.h"

#include "metrics.h"

static const char *const tools[]
    = { "read_file", "write_file", "shell", "http_fetch", "unknown", "none" };
#define N_TOOLS 6

/* The calls are counted by their final outcome, and a result the tool refused apart from
 * the others, in one more slot: a refusal is no tool's content. */
#define OUTCOME_REFUSED BX_OUTCOME_FINAL_COUNT
#define N_CALL_OUTCOMES (BX_OUTCOME_FINAL_COUNT + 1)

/* Upper bounds in seconds, as Prometheus prints them. */
static const double decide_bounds[]
    = { 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.1, 1 };
#define N_DECIDE (sizeof decide_bounds / sizeof decide_bounds[0])
static const double run_bounds[]
    = { 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120 };
#define N_RUN (sizeof run_bounds / sizeof run_bounds[0])

struct histogram
{
  const double *bounds;
  size_t n;
  atomic_ullong buckets[16]; /* not cumulative; the +Inf bucket is count */
  atomic_ullong count;
  atomic_ullong sum_ns;
};

struct bx_metrics
{
  atomic_ullong calls[N_TOOLS][BX_DECISION_COUNT][N_CALL_OUTCOMES];
  struct histogram decide;
  struct histogram run;
  atomic_uint in_flight;
  atomic_ullong module_failures;
  atomic_ullong audit_failures;
  atomic_ullong reloads_ok;
  atomic_ullong reloads_refused;
  atomic_ullong egress_allowed;
  atomic_ullong egress_refused;
  /* The socket server. */
  int listen_fd;
  char *path;
  pthread_t thread;
  bool serving;
};

struct bx_metrics *
bx_metrics_new (void)
{
  struct bx_metrics *m = bx_xzalloc (sizeof *m);
  m->decide.bounds = decide_bounds;
  m->decide.n = N_DECIDE;
  m->run.bounds = run_bounds;
  m->run.n = N_RUN;
  m->listen_fd = -1;
  return m;
}

void
bx_metrics_free (struct bx_metrics *m)
{
  if (m == NULL)
    return;
  bx_metrics_stop (m);
  free (m);
}

static int
index_of (const char *const *names, int n, const char *name, int otherwise)
{
  if (name == NULL)
    return otherwise;
  for (int i = 0; i < n; i++)
    if (strcmp (names[i], name) == 0)
      return i;
  return otherwise;
}

static void
observe (struct histogram *h, int64_t ns)
{
  if (ns < 0)
    ns = 0;
  double s = (double)ns / 1e9;
  size_t i = 0;
  while (i < h->n && s > h->bounds[i])
    i++;
  if (i < h->n)
    atomic_fetch_add_explicit (&h->buckets[i], 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&h->count, 1, memory_order_relaxed);
  atomic_fetch_add_explicit (&h->sum_ns, (unsigned long long)ns, memory_order_relaxed);
}

void
bx_metrics_call_started (struct bx_metrics *m)
{
  atomic_fetch_add_explicit (&m->in_flight, 1, memory_order_relaxed);
}

void
bx_metrics_call_ended (struct bx_metrics *m, const struct bx_audit_record *r, int64_t decide_ns,
                       int64_t run_ns)
{
  int t = r->tool == NULL ? 5 : index_of (tools, 4, r->tool, 4);
  unsigned d = (unsigned)r->decision < BX_DECISION_COUNT ? r->decision : BX_DECISION_ERROR;
  /* A line before the end is never a call's last: counted as an error if it were. */
  unsigned o = (unsigned)r->outcome < BX_OUTCOME_FINAL_COUNT ? r->outcome : BX_OUTCOME_ERROR;
  unsigned slot = o == BX_OUTCOME_RESULT && r->refused ? OUTCOME_REFUSED : o;
  atomic_fetch_add_explicit (&m->calls[t][d][slot], 1, memory_order_relaxed);
  if (decide_ns >= 0)
    observe (&m->decide, decide_ns);
  if (run_ns >= 0)
    {
      observe (&m->run, run_ns);
      if (o == BX_OUTCOME_FAILED)
        atomic_fetch_add_explicit (&m->module_failures, 1, memory_order_relaxed);
    }
  const json_t *egress = r->egress;
  for (size_t i = 0; i < json_array_size (egress); i++)
    {
      bool ok = json_integer_value (json_object_get (json_array_get (egress, i), "reply")) == 0;
      atomic_fetch_add_explicit (ok ? &m->egress_allowed : &m->egress_refused, 1,
                                 memory_order_relaxed);
    }
  atomic_fetch_sub_explicit (&m->in_flight, 1, memory_order_relaxed);
}

void
bx_metrics_call_left (struct bx_metrics *m)
{
  atomic_fetch_sub_explicit (&m->in_flight, 1, memory_order_relaxed);
}

void
bx_metrics_audit_failed (struct bx_metrics *m)
{
  atomic_fetch_add_explicit (&m->audit_failures, 1, memory_order_relaxed);
}

void
bx_metrics_reload (struct bx_metrics *m, bool ok)
{
  atomic_fetch_add_explicit (ok ? &m->reloads_ok : &m->reloads_refused, 1, memory_order_relaxed);
}

unsigned
bx_metrics_in_flight (struct bx_metrics *m)
{
  return atomic_load_explicit (&m->in_flight, memory_order_relaxed);
}

static unsigned long long
get (atomic_ullong *v)
{
  return atomic_load_explicit (v, memory_order_relaxed);
}

static void
render_histogram (FILE *f, const char *name, const char *help, struct histogram *h)
{
  fprintf (f, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
  /* Read count first: buckets read after it may hold a few more observations, never fewer,
   * and the +Inf bucket must be at least the last finite one. */
  unsigned long long count = get (&h->count);
  unsigned long long sum_ns = get (&h->sum_ns);
  unsigned long long cum = 0;
  for (size_t i = 0; i < h->n; i++)
    {
      cum += get (&h->buckets[i]);
      if (cum > count)
        cum = count;
      fprintf (f, "%s_bucket{le=\"%g\"} %llu\n", name, h->bounds[i], cum);
    }
  fprintf (f, "%s_bucket{le=\"+Inf\"} %llu\n", name, count);
  fprintf (f, "%s_sum %.9f\n%s_count %llu\n", name, (double)sum_ns / 1e9, name, count);
}

char *
bx_metrics_render (struct bx_metrics *m)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    abort ();
  fputs ("# HELP boxmaker_calls_total Calls by tool, decision and outcome (their final audit "
         "line).\n# TYPE boxmaker_calls_total counter\n",
         f);
  for (int t = 0; t < N_TOOLS; t++)
    for (int d = 0; d < BX_DECISION_COUNT; d++)
      for (int o = 0; o < N_CALL_OUTCOMES; o++)
        {
          unsigned long long v = get (&m->calls[t][d][o]);
          if (v > 0)
            fprintf (f, "boxmaker_calls_total{tool=\"%s\",decision=\"%s\",outcome=\"%s\"} %llu\n",
                     tools[t], bx_call_decision_name (d),
                     o == OUTCOME_REFUSED ? "refused" : bx_outcome_name (o), v);
        }
  render_histogram (f, "boxmaker_decision_seconds",
                    "Time from the connection to the decision (reading, parsing, policy).",
                    &m->decide);
  render_histogram (f, "boxmaker_run_seconds", "Time the runtime module took to run a call.",
                    &m->run);
  fprintf (f,
           "# HELP boxmaker_calls_in_flight Calls being served now.\n"
           "# TYPE boxmaker_calls_in_flight gauge\nboxmaker_calls_in_flight %u\n",
           bx_metrics_in_flight (m));
  fprintf (f,
           "# HELP boxmaker_module_failures_total Allowed calls the runtime module answered "
           "failed.\n# TYPE boxmaker_module_failures_total counter\n"
           "boxmaker_module_failures_total %llu\n",
           get (&m->module_failures));
  fprintf (f,
           "# HELP boxmaker_audit_failures_total Audit lines that could not be written.\n"
           "# TYPE boxmaker_audit_failures_total counter\nboxmaker_audit_failures_total %llu\n",
           get (&m->audit_failures));
  fprintf (f,
           "# HELP boxmaker_reloads_total Config reloads, taken (ok) or refused.\n"
           "# TYPE boxmaker_reloads_total counter\n"
           "boxmaker_reloads_total{result=\"ok\"} %llu\n"
           "boxmaker_reloads_total{result=\"refused\"} %llu\n",
           get (&m->reloads_ok), get (&m->reloads_refused));
  fprintf (f,
           "# HELP boxmaker_egress_connections_total Connections the egress proxies allowed "
           "or refused.\n# TYPE boxmaker_egress_connections_total counter\n"
           "boxmaker_egress_connections_total{verdict=\"allowed\"} %llu\n"
           "boxmaker_egress_connections_total{verdict=\"refused\"} %llu\n",
           get (&m->egress_allowed), get (&m->egress_refused));
  fclose (f);
  return buf;
}

/* ---- The socket. ------------------------------------------------------------------------- */

#define METRICS_IO_MS 1000
/* How long a connection may take to show whether it speaks HTTP. */
#define METRICS_REQUEST_MS 200

static void
write_all (int fd, const char *s, size_t n, int64_t deadline)
{
  while (n > 0)
    {
      struct pollfd p = { .fd = fd, .events = POLLOUT };
      if (poll (&p, 1, bx_deadline_left (deadline)) <= 0)
        return;
      ssize_t w = send (fd, s, n, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (w <= 0)
        return;
      s += w;
      n -= (size_t)w;
    }
}

static void
answer (struct bx_metrics *m, int fd)
{
  /* The request, if any: an HTTP GET gets an HTTP answer; end of input or silence gets the
   * bare text. */
  char req[1024];
  size_t got = 0;
  int64_t deadline = bx_deadline_in (METRICS_REQUEST_MS);
  bool http = false;
  while (got < sizeof req)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      if (poll (&p, 1, bx_deadline_left (deadline)) <= 0)
        break;
      ssize_t n = recv (fd, req + got, sizeof req - got, MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n <= 0)
        break;
      got += (size_t)n;
      if (got >= 4 && memcmp (req, "GET ", 4) == 0)
        {
          if (memmem (req, got, "\r\n\r\n", 4) == NULL && memmem (req, got, "\n\n", 2) == NULL)
            continue;
          http = true;
        }
      break;
    }
  cleanup_free char *text = bx_metrics_render (m);
  deadline = bx_deadline_in (METRICS_IO_MS);
  if (http)
    {
      cleanup_free char *head
          = bx_xasprintf ("HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
                          "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                          strlen (text));
      write_all (fd, head, strlen (head), deadline);
    }
  write_all (fd, text, strlen (text), deadline);
}

static void *
serve_main (void *arg)
{
  struct bx_metrics *m = arg;
  for (;;)
    {
      int fd = bx_accept_retrying (m->listen_fd);
      if (fd < 0)
        return NULL; /* shut down */
      answer (m, fd);
      close (fd);
    }
}

int
bx_metrics_serve (struct bx_metrics *m, const char *path, bx_error *err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    return bx_error_setc (err, ENAMETOOLONG, "metrics socket %s: the path is too long", path);
  strcpy (addr.sun_path, path);
  cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return bx_error_set (err, errno, "metrics socket %s: cannot make a socket", path);
  struct stat st;
  if (lstat (path, &st) == 0)
    {
      if (!S_ISSOCK (st.st_mode))
        return bx_error_setc (err, EEXIST,
                              "metrics socket %s: the path exists and is not a socket; refusing "
                              "to replace it",
                              path);
      cleanup_close int probe = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (probe >= 0 && connect (probe, (struct sockaddr *)&addr, sizeof addr) == 0)
        return bx_error_setc (
            err, EADDRINUSE, "metrics socket %s: another brokerd is already listening on it", path);
      unlink (path);
    }
  mode_t old = umask (0117);
  int r = bind (fd, (struct sockaddr *)&addr, sizeof addr);
  int e = errno;
  umask (old);
  if (r < 0)
    return bx_error_set (err, e, "metrics socket %s: cannot bind", path);
  if (listen (fd, 16) < 0)
    {
      e = errno;
      unlink (path);
      return bx_error_set (err, e, "metrics socket %s: cannot listen", path);
    }
  m->listen_fd = steal_fd (&fd);
  m->path = bx_xstrdup (path);
  r = pthread_create (&m->thread, NULL, serve_main, m);
  if (r != 0)
    {
      close (m->listen_fd);
      m->listen_fd = -1;
      unlink (path);
      return bx_error_set (err, r, "metrics socket %s: cannot start its thread", path);
    }
  m->serving = true;
  return 0;
}

void
bx_metrics_stop (struct bx_metrics *m)
{
  if (!m->serving)
    return;
  m->serving = false;
  shutdown (m->listen_fd, SHUT_RDWR);
  pthread_join (m->thread, NULL);
  close (m->listen_fd);
  m->listen_fd = -1;
  unlink (m->path);
  free (m->path);
  m->path = NULL;
}
