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
 * SIDES has one line per side, fields separated by tabs:
 *   SIDE  UID  STDIN  CPU_FILES  ARGV
 * as tiers.c reads them (UID -1: this one's; CPU_FILES: cgroup v1 cpuacct.usage files whose
 * growth during a round is charged to the side, or -; ARGV split at spaces).  CALLS is the
 * calls of one side in one round, shared out between the N clients, at least 8 each. */
#define _GNU_SOURCE /* setresuid, setresgid */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIDES 4
#define MAX_ARGS  96
#define MIN_EACH  8

struct side
{
  char *name, *in, *cpu_files;
  int uid;
  char *argv[MAX_ARGS];
  /* Over the rounds of one N: */
  double *latency; /* ms, every call */
  long calls, lost;
  double wall_ms, cpu_ms;
};

static struct side sides[MAX_SIDES];
static size_t n_sides;

static void
die (const char *what)
{
  perror (what);
  exit (1);
}

static double
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The sum of the cpuacct.usage files in LIST, in ms. */
static double
charged_ms (const char *list)
{
  if (strcmp (list, "-") == 0)
    return 0;
  char *copy = strdup (list), *save = NULL;
  double ms = 0;
  for (char *f = strtok_r (copy, ",", &save); f != NULL; f = strtok_r (NULL, ",", &save))
    {
      FILE *fp = fopen (f, "re");
      unsigned long long ns = 0;
      if (fp == NULL || fscanf (fp, "%llu", &ns) != 1)
        die (f);
      fclose (fp);
      ms += (double)ns / 1e6;
    }
  free (copy);
  return ms;
}

static void
read_sides (const char *path)
{
  FILE *fp = fopen (path, "re");
  if (fp == NULL)
    die (path);
  char *line = NULL;
  size_t cap = 0;
  while (getline (&line, &cap, fp) > 0 && n_sides < MAX_SIDES)
    {
      line[strcspn (line, "\n")] = '\0';
      char *save = NULL, *f[5] = { NULL };
      f[0] = strtok_r (line, "\t", &save);
      for (int i = 1; i < 5 && f[i - 1] != NULL; i++)
        f[i] = strtok_r (NULL, "\t", &save);
      if (f[4] == NULL)
        continue;
      struct side *s = &sides[n_sides++];
      s->name = strdup (f[0]);
      s->uid = atoi (f[1]);
      s->in = strdup (f[2]);
      s->cpu_files = strdup (f[3]);
      char *args = strdup (f[4]), *asave = NULL;
      size_t n = 0;
      for (char *a = strtok_r (args, " ", &asave); a != NULL && n < MAX_ARGS - 1;
           a = strtok_r (NULL, " ", &asave))
        s->argv[n++] = a;
    }
  free (line);
  fclose (fp);
}

/* Runs S once, its output to /dev/null: its wall time, the CPU time of it and the
 * descendants it waited for, and whether it exited 0. */
static bool
run_once (const struct side *s, double *wall, double *cpu)
{
  double t0 = now_ms ();
  pid_t pid = fork ();
  if (pid < 0)
    die ("fork");
  if (pid == 0)
    {
      int in = open (s->in, O_RDONLY | O_CLOEXEC);
      int o = open ("/dev/null", O_WRONLY | O_CLOEXEC);
      if (in < 0 || o < 0 || dup2 (in, 0) < 0 || dup2 (o, 1) < 0 || dup2 (o, 2) < 0)
        _exit (126);
      if (s->uid >= 0
          && (setgroups (0, NULL) < 0 || setresgid (s->uid, s->uid, s->uid) < 0
              || setresuid (s->uid, s->uid, s->uid) < 0))
        _exit (126);
      execv (s->argv[0], s->argv);
      _exit (127);
    }
  int status;
  struct rusage ru;
  while (wait4 (pid, &status, 0, &ru) < 0)
    if (errno != EINTR)
      die ("wait4");
  *wall = now_ms () - t0;
  *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3
         + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
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
  double charged = charged_ms (s->cpu_files);
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
  s->cpu_ms += charged_ms (s->cpu_files) - charged;
  s->calls += (long)n * each;
  free (c);
  free (t);
}

static int
by_value (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The Q quantile of the N sorted values in V, nearest rank. */
static double
quantile (const double *v, long n, double q)
{
  long i = (long)(q * (double)n + 0.999999) - 1;
  return v[i < 0 ? 0 : i >= n ? n - 1 : i];
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
          qsort (s->latency, (size_t)s->calls, sizeof (double), by_value);
          printf ("%4d %-12s %9.1f %6ld %9.2f %9.2f %12.2f\n", n, s->name,
                  (double)(s->calls - s->lost) * 1e3 / s->wall_ms, s->lost,
                  quantile (s->latency, s->calls, 0.5), quantile (s->latency, s->calls, 0.99),
                  s->cpu_ms / (double)s->calls);
          lost_all += s->lost;
        }
      for (size_t k = 1; k < n_sides; k++)
        printf ("%4d %s / %s: throughput %.2fx, p50 %.2fx, p99 %.2fx, CPU %.2fx\n", n,
                sides[k].name, sides[0].name,
                ((double)(sides[k].calls - sides[k].lost) / sides[k].wall_ms)
                    / ((double)(sides[0].calls - sides[0].lost) / sides[0].wall_ms),
                quantile (sides[k].latency, sides[k].calls, 0.5)
                    / quantile (sides[0].latency, sides[0].calls, 0.5),
                quantile (sides[k].latency, sides[k].calls, 0.99)
                    / quantile (sides[0].latency, sides[0].calls, 0.99),
                (sides[k].cpu_ms / sides[k].calls) / (sides[0].cpu_ms / sides[0].calls));
      fflush (stdout);
    }
  return lost_all > 0;
}
