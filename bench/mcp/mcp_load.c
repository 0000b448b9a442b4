/* SPDX-License-Identifier: Apache-2.0 */
/* The MCP benchmark's load generator (bench/mcp/run.sh):
 *
 *   bx_bench_mcp SOCKET BOXMAKER CALLS
 *
 * The same read_file call, CALLS times each way, alternating in blocks of 50 so both sides
 * see the same machine: through the client library straight to brokerd, and as a
 * tools/call through one `boxmaker mcp` process over its stdio (a line written, the answer
 * line read).  Prints each side's percentiles and what MCP adds at p50. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <boxmaker/client.h>

#define BLOCK 50

static double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
pct (double *v, size_t n, double p)
{
  return v[(size_t)(p * (double)(n - 1) + 0.5)];
}

struct mcp
{
  pid_t pid;
  FILE *in;  /* its standard input */
  FILE *out; /* its standard output */
  char *line;
  size_t cap;
};

static void
mcp_start (struct mcp *m, const char *boxmaker, const char *sock)
{
  int to[2], from[2];
  if (pipe (to) < 0 || pipe (from) < 0)
    exit (1);
  m->pid = fork ();
  if (m->pid == 0)
    {
      dup2 (to[0], 0);
      dup2 (from[1], 1);
      close (to[1]);
      close (from[0]);
      execl (boxmaker, boxmaker, "mcp", "--socket", sock, (char *)NULL);
      _exit (127);
    }
  close (to[0]);
  close (from[1]);
  m->in = fdopen (to[1], "w");
  m->out = fdopen (from[0], "r");
}

/* One request line out, one answer line in. */
static const char *
mcp_round_trip (struct mcp *m, const char *request)
{
  fputs (request, m->in);
  fputc ('\n', m->in);
  fflush (m->in);
  if (getline (&m->line, &m->cap, m->out) < 0)
    {
      fprintf (stderr, "bench: boxmaker mcp closed its output\n");
      exit (1);
    }
  return m->line;
}

int
main (int argc, char **argv)
{
  if (argc != 4)
    {
      fprintf (stderr, "usage: bx_bench_mcp SOCKET BOXMAKER CALLS\n");
      return 2;
    }
  const char *sock = argv[1];
  size_t calls = strtoul (argv[3], NULL, 10);
  calls -= calls % BLOCK;
  if (calls == 0)
    calls = BLOCK;
  double *lib = calloc (calls, sizeof *lib), *mcp = calloc (calls, sizeof *mcp);

  struct mcp m = { 0 };
  mcp_start (&m, argv[2], sock);
  mcp_round_trip (&m, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
                      "\"name\":\"bench\",\"version\":\"1\"}}}");
  fputs ("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n", m.in);

  json_t *args = json_pack ("{s:s}", "path", getenv ("BENCH_PATH"));
  struct bx_client_options opts = { .socket = sock, .timeout_ms = 10000 };
  char request[512];
  size_t n_lib = 0, n_mcp = 0;
  for (int warm = 1; warm >= 0; warm--)
    for (size_t done = 0; done < (warm ? 2 * BLOCK : calls); done += BLOCK)
      {
        for (int i = 0; i < BLOCK; i++)
          {
            char id[64];
            snprintf (id, sizeof id, "bench-%zu", n_lib + i);
            struct bx_client_response r;
            double t0 = now_us ();
            if (bx_client_call (&opts, id, "bench", "read_file", args, &r, NULL) < 0
                || r.kind != BX_CLIENT_RESULT)
              {
                fprintf (stderr, "bench: the library call did not return a result\n");
                return 1;
              }
            double t1 = now_us ();
            bx_client_response_free (&r);
            if (!warm)
              lib[n_lib + i] = t1 - t0;
          }
        for (int i = 0; i < BLOCK; i++)
          {
            snprintf (request, sizeof request,
                      "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"tools/call\",\"params\":{"
                      "\"name\":\"read_file\",\"arguments\":{\"path\":\"%s\"}}}",
                      n_mcp + i + 1, getenv ("BENCH_PATH"));
            double t0 = now_us ();
            const char *answer = mcp_round_trip (&m, request);
            double t1 = now_us ();
            if (strstr (answer, "\"isError\":false") == NULL)
              {
                fprintf (stderr, "bench: boxmaker mcp answered %s", answer);
                return 1;
              }
            if (!warm)
              mcp[n_mcp + i] = t1 - t0;
          }
        if (!warm)
          {
            n_lib += BLOCK;
            n_mcp += BLOCK;
          }
      }
  fclose (m.in);
  waitpid (m.pid, NULL, 0);

  qsort (lib, calls, sizeof *lib, cmp);
  qsort (mcp, calls, sizeof *mcp, cmp);
  printf ("%zu read_file calls each way, alternating in blocks of %d (brokerd + fake.so)\n", calls,
          BLOCK);
  printf ("%-28s %9s %9s %9s\n", "side (microseconds)", "p50", "p90", "p99");
  printf ("%-28s %9.0f %9.0f %9.0f\n", "client library", pct (lib, calls, .5), pct (lib, calls, .9),
          pct (lib, calls, .99));
  printf ("%-28s %9.0f %9.0f %9.0f\n", "boxmaker mcp (stdio)", pct (mcp, calls, .5),
          pct (mcp, calls, .9), pct (mcp, calls, .99));
  double added = pct (mcp, calls, .5) - pct (lib, calls, .5);
  printf ("MCP adds at p50: %.0f us (ratio %.2f); goal <= 1000 us: %s\n", added,
          pct (mcp, calls, .5) / pct (lib, calls, .5), added <= 1000 ? "met" : "NOT met");
  json_decref (args);
  free (lib);
  free (mcp);
  return 0;
}
