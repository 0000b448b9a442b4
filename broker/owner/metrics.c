/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd's metrics.  See metrics.h. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"

#include "metrics.h"
#include "loop.h"

static const char *const tools[]
    = { "read_file", "write_file", "shell", "http_fetch", "mcp_call", "unknown", "none" };
#define N_TOOLS 7

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
  /* The socket, served by brokerd's loop, and the readers being answered. */
  int listen_fd;
  char *path;
  sd_event_source *listening;
  struct reader *readers;
  unsigned n_readers;
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
  /* Every MCP server's tool is one label: the label set cannot grow with the config. */
  int t = r->tool == NULL ? 6 : r->mcp_server ? 4 : index_of (tools, 4, r->tool, 5);
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
/* Readers served at once; past this the socket is not accepted from until one ends. */
#define METRICS_MAX_READERS 16

/* One reader, served by brokerd's loop: its request read (for at most METRICS_REQUEST_MS),
 * then the exposition written (for at most METRICS_IO_MS), then closed. */
struct reader
{
  struct bx_metrics *m;
  int fd;
  sd_event_source *io;
  sd_event_source *timer;
  char req[1024];
  size_t got;
  char *out; /* the answer, once the request is read */
  size_t len, sent;
  struct reader *prev, *next;
};

static void
reader_free (struct reader *r)
{
  struct bx_metrics *m = r->m;
  if (r->prev != NULL)
    r->prev->next = r->next;
  else
    m->readers = r->next;
  if (r->next != NULL)
    r->next->prev = r->prev;
  if (m->n_readers-- == METRICS_MAX_READERS && m->listening != NULL)
    sd_event_source_set_enabled (m->listening, SD_EVENT_ON);
  sd_event_source_disable_unref (r->io);
  sd_event_source_disable_unref (r->timer);
  close (r->fd);
  free (r->out);
  free (r);
}

/* The request is read (or never came): the answer is made and written from now on.  An
 * HTTP GET gets an HTTP answer; end of input or silence gets the bare text. */
static void
start_answer (struct reader *r, bool http)
{
  cleanup_free char *text = bx_metrics_render (r->m);
  if (http)
    r->out = bx_xasprintf ("HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
                           "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
                           strlen (text), text);
  else
    r->out = steal_pointer (&text);
  r->len = strlen (r->out);
  sd_event_source_set_io_events (r->io, EPOLLOUT);
  sd_event_source_set_time_relative (r->timer, METRICS_IO_MS * 1000ULL);
}

/* Reads what came; true when the request is complete (or will never be). */
static bool
read_request (struct reader *r, bool *http)
{
  *http = false;
  while (r->got < sizeof r->req)
    {
      ssize_t n = TEMP_FAILURE_RETRY (
          recv (r->fd, r->req + r->got, sizeof r->req - r->got, MSG_DONTWAIT));
      if (n < 0 && errno == EAGAIN)
        return false;
      if (n <= 0)
        return true;
      r->got += (size_t)n;
      if (r->got < 4 || memcmp (r->req, "GET ", 4) != 0)
        return true;
      if (memmem (r->req, r->got, "\r\n\r\n", 4) != NULL
          || memmem (r->req, r->got, "\n\n", 2) != NULL)
        {
          *http = true;
          return true;
        }
    }
  return true;
}

/* Writes what is left; true when all is written or the reader is gone. */
static bool
write_answer (struct reader *r)
{
  while (r->sent < r->len)
    {
      ssize_t w = TEMP_FAILURE_RETRY (
          send (r->fd, r->out + r->sent, r->len - r->sent, MSG_DONTWAIT | MSG_NOSIGNAL));
      if (w < 0 && errno == EAGAIN)
        return false;
      if (w <= 0)
        return true;
      r->sent += (size_t)w;
    }
  return true;
}

static int
on_reader_io (sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
  (void)src;
  (void)fd;
  (void)revents;
  struct reader *r = userdata;
  if (r->out == NULL)
    {
      bool http;
      if (read_request (r, &http))
        start_answer (r, http);
      return 0;
    }
  if (write_answer (r))
    reader_free (r);
  return 0;
}

static int
on_reader_time (sd_event_source *src, uint64_t usec, void *userdata)
{
  (void)src;
  (void)usec;
  struct reader *r = userdata;
  if (r->out == NULL)
    start_answer (r, false);
  else
    reader_free (r);
  return 0;
}

static int
on_accept (sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
  (void)src;
  (void)revents;
  struct bx_metrics *m = userdata;
  int cfd = accept4 (fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (cfd < 0)
    return 0; /* gone before it was taken, or out of descriptors: the next one is tried */
  struct reader *r = bx_xzalloc (sizeof *r);
  r->m = m;
  r->fd = cfd;
  sd_event *loop = sd_event_source_get_event (src);
  if (sd_event_add_io (loop, &r->io, cfd, EPOLLIN, on_reader_io, r) < 0
      || sd_event_add_time_relative (loop, &r->timer, CLOCK_MONOTONIC, METRICS_REQUEST_MS * 1000ULL,
                                     BX_LOOP_ACCURACY_US, on_reader_time, r)
             < 0)
    {
      sd_event_source_disable_unref (r->io);
      close (cfd);
      free (r);
      return 0;
    }
  r->next = m->readers;
  if (m->readers != NULL)
    m->readers->prev = r;
  m->readers = r;
  if (++m->n_readers == METRICS_MAX_READERS)
    sd_event_source_set_enabled (m->listening, SD_EVENT_OFF);
  return 0;
}

int
bx_metrics_serve (struct bx_metrics *m, sd_event *loop, const char *path, bx_error *err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    return bx_error_setc (err, ENAMETOOLONG, "metrics socket %s: the path is too long", path);
  strcpy (addr.sun_path, path);
  cleanup_close int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
  r = sd_event_add_io (loop, &m->listening, fd, EPOLLIN, on_accept, m);
  if (r < 0)
    {
      unlink (path);
      return bx_error_set (err, -r, "metrics socket %s: cannot serve it", path);
    }
  m->listen_fd = steal_fd (&fd);
  m->path = bx_xstrdup (path);
  return 0;
}

void
bx_metrics_stop (struct bx_metrics *m)
{
  if (m->listening == NULL)
    return;
  m->listening = sd_event_source_disable_unref (m->listening);
  for (struct reader *r = m->readers, *next; r != NULL; r = next)
    {
      next = r->next;
      reader_free (r);
    }
  close (m->listen_fd);
  m->listen_fd = -1;
  unlink (m->path);
  free (m->path);
  m->path = NULL;
}
