/* SPDX-License-Identifier: Apache-2.0 */
/* What the timing programs of bench/runtimes share (tiers.c, concurrency.c): the sides
 * file, running a side once, the CPU time a daemon's cgroup charges to it, and quantiles.
 * Each program is one file built by its script with cc, so this header holds the code.
 *
 * A sides file has one line per side, fields separated by tabs:
 *   TOOL  SIDE  UID  STDIN  CPU_FILES  ARGV
 * UID is the uid the side's program starts as (-1: this one's), STDIN the file it reads,
 * CPU_FILES cgroup v1 cpuacct.usage files whose growth is charged to the side as well
 * (comma-separated, or -): where a side's work happens in a daemon rather than in the
 * program started.  CPU_FILES starting with '=' are charged to the side as their growth
 * over the whole run, shared out per call, instead of call by call: for a daemon that does
 * a call's work after answering it (bwrap.so's pool makes the next sandbox), which must
 * then serve that side alone.  ARGV is the program and its arguments, separated by spaces,
 * or "@call SOCKET TOOL": the call made in this process through the client library, with
 * the arguments in STDIN, as a front end that already runs (boxmaker mcp) makes it, no
 * program started for it (only in a program built with BENCH_CLIENT_LIBRARY).
 * Lines
 * RATIO  NUMERATOR  DENOMINATOR name ratios to print.
 *
 * A side's own CPU time is its program's and every descendant's: as root on a host with
 * cgroup v1 cpuacct, each side's program starts in a cpuacct cgroup of the side's, whose
 * growth is counted once the cgroup is empty.  wait4's figure would miss what the program
 * did not wait for: bubblewrap returns as soon as the sandbox's process reports its exit,
 * never waiting for its own pid 1, so toolkit's time and the namespaces' teardown would
 * be left out of a bare bubblewrap's figure.  Without cpuacct, wait4's figure it is. */
#ifndef BX_BENCH_SIDES_H
#define BX_BENCH_SIDES_H

#define _GNU_SOURCE /* setresuid, setresgid */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef BENCH_CLIENT_LIBRARY
#include <boxmaker/client.h>
#endif

#define MAX_SIDES  48
#define MAX_RATIOS 32
#define MAX_ARGS   160
#define CPUACCT    "/sys/fs/cgroup/cpuacct"
/* How long a side's cgroup may take to empty after its program ended (a sandbox's pid 1
 * and its namespaces going away). */
#define EMPTY_WAIT_MS 10000

struct side_cmd
{
  char *tool, *name, *in, *cpu_files;
  bool whole;   /* CPU_FILES charged over the whole run (the '=' above) */
  char *cgroup; /* the side's own cpuacct cgroup, or NULL: wait4's figure */
  int uid;
  char *argv[MAX_ARGS];
};

struct ratio
{
  char *num, *den;
};

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

/* Whether the cgroup folder DIR has no task left. */
static bool
cgroup_empty (const char *dir)
{
  char path[300];
  snprintf (path, sizeof path, "%s/cgroup.procs", dir);
  FILE *fp = fopen (path, "re");
  if (fp == NULL)
    return true;
  long pid;
  bool empty = fscanf (fp, "%ld", &pid) != 1;
  fclose (fp);
  return empty;
}

/* The CPU time charged so far to S's CPU_FILES (but those of a whole side) and to its own
 * cgroup (once the tasks of its last run are gone), in ms. */
static double
side_charged_ms (const struct side_cmd *s)
{
  double ms = s->whole ? 0 : charged_ms (s->cpu_files);
  if (s->cgroup == NULL)
    return ms;
  for (double until = now_ms () + EMPTY_WAIT_MS; !cgroup_empty (s->cgroup) && now_ms () < until;)
    {
      struct timespec tick = { 0, 200 * 1000 };
      nanosleep (&tick, NULL);
    }
  char usage[300];
  snprintf (usage, sizeof usage, "%s/cpuacct.usage", s->cgroup);
  return ms + charged_ms (usage);
}

/* Removes S's own cgroup, once its tasks are gone. */
static void
remove_side_cgroup (const struct side_cmd *s)
{
  if (s->cgroup == NULL)
    return;
  side_charged_ms (s);
  rmdir (s->cgroup);
}

/* Reads the sides file PATH: at most MAX_SIDES sides into SIDES (*N_SIDES of them) and
 * at most MAX_RATIOS ratios into RATIOS (*N_RATIOS). */
static void
read_sides_file (const char *path, struct side_cmd *sides, size_t *n_sides, struct ratio *ratios,
                 size_t *n_ratios)
{
  FILE *fp = fopen (path, "re");
  if (fp == NULL)
    die (path);
  char *line = NULL;
  size_t cap = 0;
  *n_sides = *n_ratios = 0;
  while (getline (&line, &cap, fp) > 0)
    {
      line[strcspn (line, "\n")] = '\0';
      char *save = NULL;
      char *f[6] = { NULL };
      f[0] = strtok_r (line, "\t", &save);
      for (int i = 1; i < 6 && f[i - 1] != NULL; i++)
        f[i] = strtok_r (NULL, "\t", &save);
      if (f[0] != NULL && strcmp (f[0], "RATIO") == 0 && f[2] != NULL && *n_ratios < MAX_RATIOS)
        {
          ratios[(*n_ratios)++] = (struct ratio){ strdup (f[1]), strdup (f[2]) };
          continue;
        }
      if (f[5] == NULL || *n_sides == MAX_SIDES)
        continue;
      struct side_cmd *s = &sides[(*n_sides)++];
      s->tool = strdup (f[0]);
      s->name = strdup (f[1]);
      s->uid = atoi (f[2]);
      s->in = strdup (f[3]);
      s->whole = f[4][0] == '=';
      s->cpu_files = strdup (f[4] + (s->whole ? 1 : 0));
      s->cgroup = NULL;
      if (geteuid () == 0 && access (CPUACCT "/cpuacct.usage", F_OK) == 0
          && strncmp (f[5], "@call ", 6) != 0)
        {
          char dir[256];
          snprintf (dir, sizeof dir, CPUACCT "/bx-bench-side-%ld-%zu", (long)getpid (), *n_sides);
          if (mkdir (dir, 0755) == 0 || errno == EEXIST)
            s->cgroup = strdup (dir);
        }
      char *args = strdup (f[5]), *asave = NULL;
      size_t n = 0;
      for (char *a = strtok_r (args, " ", &asave); a != NULL && n < MAX_ARGS - 1;
           a = strtok_r (NULL, " ", &asave))
        s->argv[n++] = a;
    }
  free (line);
  fclose (fp);
}

/* The user and system time in RU, in ms. */
static double
rusage_ms (const struct rusage *ru)
{
  return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1e3
         + (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e3;
}

#ifdef BENCH_CLIENT_LIBRARY
static double
own_cpu_ms (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return rusage_ms (&ru);
}
#endif

/* An "@call SOCKET TOOL" side: one call through the client library, its content to OUT;
 * its wall time and this process's CPU time during it.  A wait status: 0 for a result, as
 * if exited 1 for anything else. */
static int
call_in_process (const struct side_cmd *s, const char *out, double *wall, double *cpu)
{
#ifdef BENCH_CLIENT_LIBRARY
  static unsigned long calls;
  json_error_t jerr;
  json_t *args = json_load_file (s->in, 0, &jerr);
  if (args == NULL || s->argv[1] == NULL || s->argv[2] == NULL)
    {
      fprintf (stderr, "%s %s: %s\n", s->tool, s->name,
               args == NULL ? jerr.text : "@call SOCKET TOOL");
      exit (1);
    }
  char id[32];
  snprintf (id, sizeof id, "bench-%lu", ++calls);
  struct bx_client_options opts = { .socket = s->argv[1] };
  struct bx_client_response r;
  bx_error err = NULL;
  double c0 = own_cpu_ms (), t0 = now_ms ();
  int rc = bx_client_call (&opts, id, "bench", s->argv[2], args, &r, &err);
  *wall = now_ms () - t0;
  *cpu = own_cpu_ms () - c0;
  json_decref (args);
  bool ok = rc == 0 && r.kind == BX_CLIENT_RESULT && !r.unavailable;
  FILE *o = fopen (out, "we");
  if (o != NULL)
    {
      if (rc == 0 && r.kind == BX_CLIENT_RESULT)
        fwrite (r.content, 1, r.content_len, o);
      fclose (o);
    }
  if (!ok)
    fprintf (stderr, "%s %s: %s\n", s->tool, s->name,
             rc < 0              ? bx_error_msg (err)
             : r.message != NULL ? r.message
                                 : "no result");
  if (rc == 0)
    bx_client_response_free (&r);
  bx_error_free (&err);
  return ok ? 0 : 1 << 8;
#else
  (void)out;
  (void)wall;
  (void)cpu;
  fprintf (stderr, "%s %s: built without BENCH_CLIENT_LIBRARY\n", s->tool, s->name);
  exit (1);
#endif
}

/* Runs S once, its output to OUT (its errors to OUT.err, or to /dev/null when OUT is
 * /dev/null): its wall time, and the CPU time of it and the descendants it waited for
 * (wait4), in ms, or 0 when S has a cgroup of its own (side_charged_ms counts it then).
 * The clock starts once the child is in its cgroup, as its uid, and about to exec: moving a
 * process into a cgroup v1 hierarchy waits for an RCU grace period, milliseconds that are
 * the harness's and would weigh on every side that starts a program but not on the
 * others.  Returns its wait status. */
static int
run_side_once (const struct side_cmd *s, const char *out, double *wall, double *cpu)
{
  if (strcmp (s->argv[0], "@call") == 0)
    return call_in_process (s, out, wall, cpu);
  int ready[2], go[2];
  if (pipe2 (ready, O_CLOEXEC) < 0 || pipe2 (go, O_CLOEXEC) < 0)
    die ("pipe2");
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
      if (s->cgroup != NULL)
        {
          char procs[300];
          snprintf (procs, sizeof procs, "%s/cgroup.procs", s->cgroup);
          int fd = open (procs, O_WRONLY | O_CLOEXEC);
          if (fd < 0 || write (fd, "0", 1) != 1)
            _exit (126);
          close (fd);
        }
      if (s->uid >= 0
          && (setgroups (0, NULL) < 0 || setresgid (s->uid, s->uid, s->uid) < 0
              || setresuid (s->uid, s->uid, s->uid) < 0))
        _exit (126);
      char byte = 0;
      if (write (ready[1], &byte, 1) != 1 || read (go[0], &byte, 1) != 1)
        _exit (126);
      execv (s->argv[0], s->argv);
      _exit (127);
    }
  close (ready[1]);
  close (go[0]);
  char byte = 0;
  ssize_t got = read (ready[0], &byte, 1); /* 0: the child failed before, and says so */
  double t0 = now_ms ();
  if (got == 1 && write (go[1], &byte, 1) != 1)
    die ("write");
  close (ready[0]);
  close (go[1]);
  int status;
  struct rusage ru;
  while (wait4 (pid, &status, 0, &ru) < 0)
    if (errno != EINTR)
      die ("wait4");
  *wall = now_ms () - t0;
  *cpu = s->cgroup != NULL ? 0 : rusage_ms (&ru);
  return status;
}

static int
by_value (const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The Q quantile of the N values in V (sorted in place), nearest rank. */
static double
quantile (double *v, long n, double q)
{
  qsort (v, (size_t)n, sizeof *v, by_value);
  long i = (long)(q * (double)n + 0.999999) - 1;
  return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

#endif
