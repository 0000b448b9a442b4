/* SPDX-License-Identifier: Apache-2.0 */
/* The timing side of run.sh: runs each side of each tool once per round, the order of the
 * sides rotating from round to round, and prints p50 and p90 of the wall time and the CPU
 * time per call (mean) of every side, and the ratios of each module to its floors.
 *
 *   tiers SIDES ROUNDS IDLE_MS [CHECK_DIR]
 *
 * SIDES has one line per tool and side (sides.h).  A side's CPU time is what its program
 * and all its descendants used (its own cgroup, sides.h), plus the growth of its CPU_FILES.  Lines
 * RATIO  NUMERATOR  DENOMINATOR in SIDES name the ratios printed, per tool.
 * IDLE_MS of sleep comes before each call.  With CHECK_DIR, each side runs once, its
 * standard output in CHECK_DIR/TOOL.SIDE and its errors in CHECK_DIR/TOOL.SIDE.err, and
 * nothing is timed.  Timed calls write to /dev/null. */
#include "sides.h"

struct side
{
  struct side_cmd cmd;
  double *wall, *cpu; /* ms, one per round */
};

static struct side sides[MAX_SIDES];
static size_t n_sides;
static struct ratio ratios[MAX_RATIOS];
static size_t n_ratios;

static void
read_sides (const char *path, int rounds)
{
  struct side_cmd cmds[MAX_SIDES];
  read_sides_file (path, cmds, &n_sides, ratios, &n_ratios);
  for (size_t i = 0; i < n_sides; i++)
    {
      sides[i].cmd = cmds[i];
      sides[i].wall = calloc ((size_t)rounds, sizeof (double));
      sides[i].cpu = calloc ((size_t)rounds, sizeof (double));
    }
}

/* Runs S once, its output to OUT; its wall and CPU time in ms, the CPU time charged to its
 * cgroups included. */
static int
run (const struct side *s, const char *out, double *wall, double *cpu)
{
  double charged = side_charged_ms (&s->cmd);
  int status = run_side_once (&s->cmd, out, wall, cpu);
  *cpu += side_charged_ms (&s->cmd) - charged;
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      fprintf (stderr, "%s %s: exit status %#x\n", s->cmd.tool, s->cmd.name, (unsigned)status);
      return -1;
    }
  return 0;
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
    if (strcmp (sides[i].cmd.tool, tool) == 0 && strcmp (sides[i].cmd.name, name) == 0)
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
          snprintf (out, sizeof out, "%s/%s.%s", argv[4], sides[i].cmd.tool, sides[i].cmd.name);
          failed |= run (&sides[i], out, &w, &c) < 0;
        }
      for (size_t i = 0; i < n_sides; i++)
        remove_side_cgroup (&sides[i].cmd);
      return failed;
    }
  int failed = 0;
  double *whole_start = calloc (n_sides, sizeof (double));
  for (size_t i = 0; i < n_sides; i++)
    if (sides[i].cmd.whole)
      whole_start[i] = charged_ms (sides[i].cmd.cpu_files);
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
  /* A whole side's daemon may still be at work for its last call: a second to end it. */
  struct timespec grace = { 1, 0 };
  nanosleep (&grace, NULL);
  for (size_t i = 0; i < n_sides; i++)
    if (sides[i].cmd.whole)
      {
        double share = (charged_ms (sides[i].cmd.cpu_files) - whole_start[i]) / rounds;
        for (int r = 0; r < rounds; r++)
          sides[i].cpu[r] += share;
      }
  free (whole_start);

  printf ("%-11s %-22s %9s %9s %12s\n", "tool", "side", "p50 ms", "p90 ms", "CPU ms/call");
  for (size_t i = 0; i < n_sides; i++)
    {
      struct figures f = figures_of (&sides[i], rounds);
      printf ("%-11s %-22s %9.2f %9.2f %12.2f\n", sides[i].cmd.tool, sides[i].cmd.name, f.p50,
              f.p90, f.cpu);
    }
  printf ("\n%-11s %-40s %7s %7s %7s\n", "tool", "ratio", "p50", "p90", "CPU");
  for (size_t i = 0; i < n_sides; i++)
    {
      /* Once per tool, in the order the sides came. */
      if (find (sides[i].cmd.tool, sides[i].cmd.name) != &sides[i]
          || (i > 0 && strcmp (sides[i - 1].cmd.tool, sides[i].cmd.tool) == 0))
        continue;
      for (size_t q = 0; q < n_ratios; q++)
        {
          const struct side *a = find (sides[i].cmd.tool, ratios[q].num);
          const struct side *b = find (sides[i].cmd.tool, ratios[q].den);
          if (a == NULL || b == NULL)
            continue;
          struct figures fa = figures_of (a, rounds), fb = figures_of (b, rounds);
          char label[128];
          snprintf (label, sizeof label, "%s / %s", a->cmd.name, b->cmd.name);
          printf ("%-11s %-40s %6.2fx %6.2fx %6.2fx\n", sides[i].cmd.tool, label, fa.p50 / fb.p50,
                  fa.p90 / fb.p90, fa.cpu / fb.cpu);
        }
    }
  for (size_t i = 0; i < n_sides; i++)
    remove_side_cgroup (&sides[i].cmd);
  return failed;
}
