/* SPDX-License-Identifier: Apache-2.0 */
/* The brokerd benchmark's load generator: CLIENTS threads, each making calls one after the
 * other through the client library (one connection per call, as every real caller does),
 * until CALLS calls are done.  Prints one line:
 *
 *   calls=N clients=C seconds=S calls_per_s=R p50_us=A p99_us=B max_us=M failures=F
 *   client_cpu_us=U
 *
 * client_cpu_us is this process's CPU time (user + system) per call: with the clients on the
 * same cores as the server, it bounds the throughput together with the server's.
 *
 * usage: bx_bench_broker SOCKET CALLS CLIENTS TOOL 'JSON' */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include <boxmaker/client.h>

struct shared
{
  const char *socket;
  const char *tool;
  json_t *arguments;
  long calls_each;
  atomic_long failures;
  atomic_flag told; /* the first failure is printed, the rest only counted */
};

struct worker
{
  struct shared *sh;
  int index;
  int64_t *latency_ns; /* calls_each entries */
};

static void
quiet_log (const char *line, void *data)
{
  struct shared *sh = data;
  if (!atomic_flag_test_and_set (&sh->told))
    fprintf (stderr, "bench: %s\n", line);
}

static void *
work (void *p)
{
  struct worker *w = p;
  struct shared *sh = w->sh;
  struct bx_client_options opts
      = { .socket = sh->socket, .timeout_ms = 10000, .log = quiet_log, .data = sh };
  char call[32];
  for (long i = 0; i < sh->calls_each; i++)
    {
      snprintf (call, sizeof call, "b%d-%ld", w->index, i);
      struct bx_client_response r;
      cleanup_error bx_error err = NULL;
      int64_t t0 = bx_now_ns ();
      int rc = bx_client_call (&opts, call, "bench", sh->tool, sh->arguments, &r, &err);
      w->latency_ns[i] = bx_now_ns () - t0;
      if (rc < 0 || r.kind != BX_CLIENT_RESULT)
        {
          atomic_fetch_add (&sh->failures, 1);
          if (rc == 0 && !r.unavailable && !atomic_flag_test_and_set (&sh->told))
            fprintf (stderr, "bench: answer %d: %s\n", (int)r.kind, r.message);
        }
      if (rc == 0)
        bx_client_response_free (&r);
    }
  return NULL;
}

static int
cmp_i64 (const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int
main (int argc, char **argv)
{
  if (argc != 6)
    {
      fputs ("usage: bx_bench_broker SOCKET CALLS CLIENTS TOOL 'JSON'\n", stderr);
      return 2;
    }
  long calls = atol (argv[2]);
  int clients = atoi (argv[3]);
  json_error_t jerr;
  struct shared sh = { .socket = argv[1], .tool = argv[4], .told = ATOMIC_FLAG_INIT };
  sh.arguments = json_loads (argv[5], 0, &jerr);
  if (calls < 1 || clients < 1 || clients > 256 || !json_is_object (sh.arguments))
    {
      fputs ("bx_bench_broker: bad CALLS, CLIENTS or JSON\n", stderr);
      return 2;
    }
  sh.calls_each = calls / clients;
  calls = sh.calls_each * clients;

  int64_t *all = bx_xmalloc (sizeof *all * (size_t)calls);
  struct worker *w = bx_xzalloc (sizeof *w * (size_t)clients);
  pthread_t *t = bx_xmalloc (sizeof *t * (size_t)clients);
  int64_t start = bx_now_ns ();
  for (int i = 0; i < clients; i++)
    {
      w[i] = (struct worker){ .sh = &sh, .index = i, .latency_ns = all + i * sh.calls_each };
      if (pthread_create (&t[i], NULL, work, &w[i]) != 0)
        return 1;
    }
  for (int i = 0; i < clients; i++)
    pthread_join (t[i], NULL);
  double seconds = (double)(bx_now_ns () - start) / 1e9;

  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  double cpu_us = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6
                  + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);

  qsort (all, (size_t)calls, sizeof *all, cmp_i64);
  printf ("calls=%ld clients=%d seconds=%.3f calls_per_s=%.0f p50_us=%.1f p99_us=%.1f "
          "max_us=%.1f failures=%ld client_cpu_us=%.1f\n",
          calls, clients, seconds, (double)calls / seconds, (double)all[calls / 2] / 1e3,
          (double)all[calls * 99 / 100] / 1e3, (double)all[calls - 1] / 1e3,
          (long)atomic_load (&sh.failures), cpu_us / (double)calls);
  json_decref (sh.arguments);
  free (all);
  free (w);
  free (t);
  return atomic_load (&sh.failures) == 0 ? 0 : 1;
}
