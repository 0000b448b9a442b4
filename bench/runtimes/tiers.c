/* SPDX-License-Identifier: Apache-2.0 */
/* The timing side of run.sh: runs each side of each tool once per round, the order of the
 * sides rotating from round to round, and prints p50 and p90 of the wall time and the CPU
 * time per call (mean) of every side, and the ratios of each module to its floors.
 *
 *   tiers SIDES ROUNDS IDLE_MS [CHECK_DIR]
 *
 * SIDES has one line per tool and side, fields separated by tabs:
 *   TOOL  SIDE  UID  STDIN  CPU_FILES  ARGV
 * UID is the uid the side's program starts as (-1: this one's), STDIN the file it reads,
 * CPU_FILES cgroup v1 cpuacct.usage files whose growth is charged to the side as well
 * (comma-separated, or -): where a side's work happens in a daemon rather than in the
 * program started, and ARGV the program and its arguments, separated by spaces.  A side's
 * CPU time is what its program and the descendants it waited for used (wait4), plus that
 * growth.  Lines RATIO  NUMERATOR  DENOMINATOR in SIDES name the ratios printed, per tool.
 * IDLE_MS of sleep comes before each call.  With CHECK_DIR, each side runs once, its
 * standard output in CHECK_DIR/TOOL.SIDE and its errors in CHECK_DIR/TOOL.SIDE.err, and
 * nothing is timed.  Timed calls write to /dev/null. */
#define _GNU_SOURCE /* setresuid, setresgid */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIDES  32
#define MAX_RATIOS 32
#define MAX_ARGS   96

struct side
{
  char *tool, *name, *in, *cpu_files;
  int uid;
  char *argv[MAX_ARGS];
  double *wall, *cpu; /* ms, one per round */
};

struct ratio
{
  char *num, *den;
};

static struct side sides[MAX_SIDES];
static size_t n_sides;
static struct ratio ratios[MAX_RATIOS];
static size_t n_ratios;

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
read_sides (const char *path, int rounds)
{
  FILE *fp = fopen (path, "re");
  if (fp == NULL)
    die (path);
  char *line = NULL;
  size_t cap = 0;
  while (getline (&line, &cap, fp) > 0)
    {
      line[strcspn (line, "\n")] = '\0';
      char *save = NULL;
      char *f[6] = { NULL };
      f[0] = strtok_r (line, "\t", &save);
      for (int i = 1; i < 6 && f[i - 1] != NULL; i++)
        f[i] = strtok_r (NULL, "\t", &save);
      if (f[0] != NULL && strcmp (f[0], "RATIO") == 0 && f[2] != NULL && n_ratios < MAX_RATIOS)
        {
          ratios[n_ratios++] = (struct ratio){ strdup (f[1]), strdup (f[2]) };
          continue;
        }
      if (f[5] == NULL || n_sides == MAX_SIDES)
        continue;
      struct side *s = &sides[n_sides++];
      s->tool = strdup (f[0]);
      s->name = strdup (f[1]);
      s->uid = atoi (f[2]);
      s->in = strdup (f[3]);
      s->cpu_files = strdup (f[4]);
      char *args = strdup (f[5]), *asave = NULL;
      size_t n = 0;
      for (char *a = strtok_r (args, " ", &asave); a != NULL && n < MAX_ARGS - 1;
           a = strtok_r (NULL, " ", &asave))
        s->argv[n++] = a;
      s->wall = calloc ((size_t)rounds, sizeof (double));
      s->cpu = calloc ((size_t)rounds, sizeof (double));
    }
  free (line);
  fclose (fp);
}

/* Runs S once, its output to OUT; its wall and CPU time in ms. */
static int
run (const struct side *s, const char *out, double *wall, double *cpu)
{
  double charged = charged_ms (s->cpu_files);
  double t0 = now_ms ();
  pid_t pid = fork ();
  if (pid < 0)
    die ("fork");
  if (pid == 0)
    {
      int in = open (s->in, O_RDONLY | O_CLOEXEC);
      int o = open (out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      char err[4200];
      snprintf (err, sizeof err, "%s.err", out);
      bool timed = strcmp (out, "/dev/null") == 0;
      int e = open (timed ? out : err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (in < 0 || o < 0 || e < 0 || dup2 (in, 0) < 0 || dup2 (o, 1) < 0 || dup2 (e, 2) < 0)
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
         + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3
         + (charged_ms (s->cpu_files) - charged);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      fprintf (stderr, "%s %s: exit status %#x\n", s->tool, s->name, (unsigned)status);
      return -1;
    }
  return 0;
}

static int
by_value (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The Q quantile of the N values in V (sorted in place), nearest rank. */
static double
quantile (double *v, int n, double q)
{
  qsort (v, (size_t)n, sizeof *v, by_value);
  int i = (int)(q * n + 0.999999) - 1;
  return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

struct figures
{
  double p50, p90, cpu;
};

static struct figures
figures_of (const struct side *s, int rounds)
{
  double *w = malloc ((size_t)rounds * sizeof (double));
  memcpy (w, s->wall, (size_t)rounds * sizeof (double));
  struct figures f = { quantile (w, rounds, 0.5), quantile (w, rounds, 0.9), 0 };
  free (w);
  /* CPU per call: the mean, the whole cost of ROUNDS calls shared out. */
  for (int r = 0; r < rounds; r++)
    f.cpu += s->cpu[r] / rounds;
  return f;
}

static const struct side *
find (const char *tool, const char *name)
{
  for (size_t i = 0; i < n_sides; i++)
    if (strcmp (sides[i].tool, tool) == 0 && strcmp (sides[i].name, name) == 0)
      return &sides[i];
  return NULL;
}

int
main (int argc, char **argv)
{
  if (argc < 4)
    {
      fprintf (stderr, "usage: tiers SIDES ROUNDS IDLE_MS [CHECK_DIR]\n");
      return 2;
    }
  int rounds = atoi (argv[2]), idle_ms = atoi (argv[3]);
  if (argc > 4)
    rounds = 1;
  if (rounds < 1)
    return 2;
  read_sides (argv[1], rounds);
  if (argc > 4)
    {
      int failed = 0;
      for (size_t i = 0; i < n_sides; i++)
        {
          char out[4096];
          double w, c;
          snprintf (out, sizeof out, "%s/%s.%s", argv[4], sides[i].tool, sides[i].name);
          failed |= run (&sides[i], out, &w, &c) < 0;
        }
      return failed;
    }
  int failed = 0;
  for (int r = 0; r < rounds; r++)
    for (size_t k = 0; k < n_sides; k++)
      {
        struct side *s = &sides[(k + (size_t)r) % n_sides];
        if (idle_ms > 0)
          {
            struct timespec t = { idle_ms / 1000, (idle_ms % 1000) * 1000000L };
            nanosleep (&t, NULL);
          }
        failed |= run (s, "/dev/null", &s->wall[r], &s->cpu[r]) < 0;
      }

  printf ("%-11s %-22s %9s %9s %12s\n", "tool", "side", "p50 ms", "p90 ms", "CPU ms/call");
  for (size_t i = 0; i < n_sides; i++)
    {
      struct figures f = figures_of (&sides[i], rounds);
      printf ("%-11s %-22s %9.2f %9.2f %12.2f\n", sides[i].tool, sides[i].name, f.p50, f.p90,
              f.cpu);
    }
  printf ("\n%-11s %-40s %7s %7s %7s\n", "tool", "ratio", "p50", "p90", "CPU");
  for (size_t i = 0; i < n_sides; i++)
    {
      /* Once per tool, in the order the sides came. */
      if (find (sides[i].tool, sides[i].name) != &sides[i]
          || (i > 0 && strcmp (sides[i - 1].tool, sides[i].tool) == 0))
        continue;
      for (size_t q = 0; q < n_ratios; q++)
        {
          const struct side *a = find (sides[i].tool, ratios[q].num);
          const struct side *b = find (sides[i].tool, ratios[q].den);
          if (a == NULL || b == NULL)
            continue;
          struct figures fa = figures_of (a, rounds), fb = figures_of (b, rounds);
          char label[128];
          snprintf (label, sizeof label, "%s / %s", a->name, b->name);
          printf ("%-11s %-40s %6.2fx %6.2fx %6.2fx\n", sides[i].tool, label, fa.p50 / fb.p50,
                  fa.p90 / fb.p90, fa.cpu / fb.cpu);
        }
    }
  return failed;
}
