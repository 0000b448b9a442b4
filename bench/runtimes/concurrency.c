/* SPDX-License-Identifier: Apache-2.0 */
/* The timing side of concurrency.sh: N clients at once, each running its side's program
 * once per call, one call after the other, for each N given; the sides alternate round by
 * round (the order rotating), and each side's figures are over all its rounds.  Prints, per
 * N and side, calls/s (the calls answered over the wall time of the rounds), calls lost (a
 * program that did not exit 0), p50 and p99 of a call's wall time and the CPU time per call; then,
 * per N, the throughput ratio of each side to the first.
 *
 *   concurrency SIDES ROUNDS CALLS N...
 *
 * SIDES is a sides file (sides.h) of one tool; the first side is the one the others are
 * compared with, and RATIO lines are not read.  CALLS is the calls of one side in one round,
 * shared out between the N clients, at least 8 each. */
#include "sides.h" /* first: it asks for _GNU_SOURCE */

#include <pthread.h>

#define MIN_EACH 8

struct side
{
  struct side_cmd cmd;
  /* Over the rounds of one N: */
  double *latency; /* ms, every call */
  long calls, lost;
  double wall_ms, cpu_ms;
};

static struct side sides[MAX_SIDES];
static size_t n_sides;

static void
read_sides (const char *path)
{
  struct side_cmd cmds[MAX_SIDES];
  struct ratio ratios[MAX_RATIOS];
  size_t n_ratios;
  read_sides_file (path, cmds, &n_sides, ratios, &n_ratios);
  for (size_t i = 0; i < n_sides; i++)
    sides[i].cmd = cmds[i];
}

/* Runs S once: its wall and CPU time, and whether it exited 0. */
static bool
run_once (const struct side *s, double *wall, double *cpu)
{
  int status = run_side_once (&s->cmd, "/dev/null", wall, cpu);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

struct client
{
  struct side *side;
  long each;
  double *latency; /* EACH entries */
  double cpu_ms;
  long lost;
};

static void *
client_main (void *arg)
{
  struct client *c = arg;
  for (long i = 0; i < c->each; i++)
    {
      double cpu;
      if (!run_once (c->side, &c->latency[i], &cpu))
        c->lost++;
      c->cpu_ms += cpu;
    }
  return NULL;
}

/* One round of S: N clients at once, EACH calls each. */
static void
round_of (struct side *s, int n, long each)
{
  struct client *c = calloc ((size_t)n, sizeof *c);
  pthread_t *t = calloc ((size_t)n, sizeof *t);
  double charged = side_charged_ms (&s->cmd);
  double t0 = now_ms ();
  for (int i = 0; i < n; i++)
    {
      c[i]
          = (struct client){ .side = s, .each = each, .latency = s->latency + s->calls + i * each };
      if (pthread_create (&t[i], NULL, client_main, &c[i]) != 0)
        die ("pthread_create");
    }
  for (int i = 0; i < n; i++)
    {
      pthread_join (t[i], NULL);
      s->cpu_ms += c[i].cpu_ms;
      s->lost += c[i].lost;
    }
  s->wall_ms += now_ms () - t0;
  s->cpu_ms += side_charged_ms (&s->cmd) - charged;
  s->calls += (long)n * each;
  free (c);
  free (t);
}

int
main (int argc, char **argv)
{
  if (argc < 5)
    {
      fprintf (stderr, "usage: concurrency SIDES ROUNDS CALLS N...\n");
      return 2;
    }
  read_sides (argv[1]);
  int rounds = atoi (argv[2]);
  long calls = atol (argv[3]);
  if (n_sides == 0 || rounds < 1 || calls < 1)
    return 2;
  long lost_all = 0;
  printf ("%4s %-12s %9s %6s %9s %9s %12s\n", "N", "side", "calls/s", "lost", "p50 ms", "p99 ms",
          "CPU ms/call");
  for (int a = 4; a < argc; a++)
    {
      int n = atoi (argv[a]);
      if (n < 1)
        return 2;
      long each = (calls + n - 1) / n;
      if (each < MIN_EACH)
        each = MIN_EACH;
      for (size_t k = 0; k < n_sides; k++)
        {
          struct side *s = &sides[k];
          free (s->latency);
          s->latency = calloc ((size_t)rounds * (size_t)n * (size_t)each, sizeof (double));
          s->calls = s->lost = 0;
          s->wall_ms = s->cpu_ms = 0;
        }
      for (int r = 0; r < rounds; r++)
        for (size_t k = 0; k < n_sides; k++)
          round_of (&sides[(k + (size_t)r) % n_sides], n, each);
      for (size_t k = 0; k < n_sides; k++)
        {
          struct side *s = &sides[k];
          printf ("%4d %-12s %9.1f %6ld %9.2f %9.2f %12.2f\n", n, s->cmd.name,
                  (double)(s->calls - s->lost) * 1e3 / s->wall_ms, s->lost,
                  quantile (s->latency, s->calls, 0.5), quantile (s->latency, s->calls, 0.99),
                  s->cpu_ms / (double)s->calls);
          lost_all += s->lost;
        }
      for (size_t k = 1; k < n_sides; k++)
        printf ("%4d %s / %s: throughput %.2fx, p50 %.2fx, p99 %.2fx, CPU %.2fx\n", n,
                sides[k].cmd.name, sides[0].cmd.name,
                ((double)(sides[k].calls - sides[k].lost) / sides[k].wall_ms)
                    / ((double)(sides[0].calls - sides[0].lost) / sides[0].wall_ms),
                quantile (sides[k].latency, sides[k].calls, 0.5)
                    / quantile (sides[0].latency, sides[0].calls, 0.5),
                quantile (sides[k].latency, sides[k].calls, 0.99)
                    / quantile (sides[0].latency, sides[0].calls, 0.99),
                (sides[k].cpu_ms / sides[k].calls) / (sides[0].cpu_ms / sides[0].calls));
      fflush (stdout);
    }
  for (size_t k = 0; k < n_sides; k++)
    remove_side_cgroup (&sides[k].cmd);
  return lost_all > 0;
}
