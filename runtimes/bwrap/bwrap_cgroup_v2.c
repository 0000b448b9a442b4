/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup v2 backend: the unified hierarchy at /sys/fs/cgroup that systemd hosts boot
 * with.  A slot is one folder:
 *
 *   <subtree>/boxmaker-bwrap/<brokerd pid>-<its start time>/<slot>
 *
 * The subtree is the cgroup_root option when given (a folder of the cgroup2 file system
 * that brokerd may write), else brokerd's own cgroup: under systemd, the service's, which
 * Delegate=yes hands to it.  cgroup v2 lets a cgroup hand controllers to its children only
 * while it holds no process itself ("no internal processes"), so when the subtree is
 * brokerd's own cgroup, brokerd first moves itself into a leaf of its own, <subtree>/brokerd,
 * then enables the memory, pids and cpu controllers in cgroup.subtree_control on the way
 * down to the slots.  systemd's rule for delegated subtrees is the same: processes only in
 * leaves.  When brokerd's last instance ends and nothing else is left under the subtree,
 * the controllers are handed back and brokerd moves back where it was, so a brokerd run
 * only to check a config leaves the service's cgroup as systemd made it.
 *
 * A slot's keeper is born in the slot (clone3 with CLONE_INTO_CGROUP, see bwrap_keeper.c), and
 * so is every sandbox it forks.  Swap is off (memory.swap.max 0, where the kernel counts
 * swap), so memory.max is the limit on memory and swap together, as on v1. */
#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "bwrap.h"

#define HOST_ROOT   "/sys/fs/cgroup"
#define TOP         "boxmaker-bwrap"
#define LEAF        "brokerd"
#define CONTROLLERS "memory pids cpu"

bool
bx_bwrap_cgroup_is_v2 (const char *path)
{
  struct statfs st;
  return statfs (path, &st) == 0 && st.f_type == CGROUP2_SUPER_MAGIC;
}

/* The first line of the file PATH, without its newline (malloc'd), or NULL. */
static char *
read_line (const char *path)
{
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return NULL;
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline (&line, &cap, f);
  fclose (f);
  if (n < 0)
    {
      free (line);
      return NULL;
    }
  line[strcspn (line, "\n")] = '\0';
  return line;
}

/* brokerd's own cgroup folder, from the "0::" line of /proc/self/cgroup (malloc'd), or
 * NULL. */
static char *
own_cgroup (void)
{
  FILE *f = fopen ("/proc/self/cgroup", "re");
  if (f == NULL)
    return NULL;
  char *line = NULL, *own = NULL;
  size_t cap = 0;
  while (own == NULL && getline (&line, &cap, f) > 0)
    if (strncmp (line, "0::/", 4) == 0)
      {
        line[strcspn (line, "\n")] = '\0';
        own = strcmp (line + 3, "/") == 0 ? bx_xstrdup (HOST_ROOT)
                                          : bx_xasprintf (HOST_ROOT "%s", line + 3);
      }
  free (line);
  fclose (f);
  return own;
}

/* Does the space-separated list LIST hold every word of WORDS? */
static bool
has_all (const char *list, const char *words)
{
  cleanup_free char *want = bx_xstrdup (words);
  char *save = NULL;
  for (char *w = strtok_r (want, " ", &save); w != NULL; w = strtok_r (NULL, " ", &save))
    {
      size_t n = strlen (w);
      const char *p = list;
      bool found = false;
      while (!found && (p = strstr (p, w)) != NULL)
        {
          found = (p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ');
          p += n;
        }
      if (!found)
        return false;
    }
  return true;
}

static int
ready (const char *dir, bx_error *err)
{
  cleanup_free char *control = bx_xasprintf ("%s/cgroup.subtree_control", dir);
  cleanup_free char *now = read_line (control);
  if (now != NULL && has_all (now, CONTROLLERS))
    return 0;
  if (bx_bwrap_cgroup_write (control, "+memory +pids +cpu") == 0)
    return 0;
  int saved = errno;
  return bx_error_setc (err, 0, "cannot enable the memory, pids and cpu controllers in %s: %s%s",
                        control, strerror (saved),
                        saved == EBUSY ? " (processes of others are in that cgroup: give "
                                         "brokerd a cgroup of its own, such as systemd's "
                                         "Delegate=yes, or the option cgroup_root)"
                                       : "");
}

static int
locate (const char *root, char **tops, bx_error *err)
{
  cleanup_free char *own = own_cgroup ();
  if (own == NULL)
    return bx_error_setc (err, 0, "cannot find brokerd's cgroup v2 in /proc/self/cgroup");
  cleanup_free char *base = NULL;
  if (root != NULL)
    {
      base = realpath (root, NULL);
      if (base == NULL)
        return bx_error_set (err, errno, "option cgroup_root: %s", root);
    }
  else
    {
      /* Already in the leaf an earlier instance of this brokerd moved it to. */
      const char *last = strrchr (own, '/');
      base = strcmp (last + 1, LEAF) == 0 && strcmp (own, HOST_ROOT) != 0
                 ? bx_xasprintf ("%.*s", (int)(last - own), own)
                 : bx_xstrdup (own);
    }
  cleanup_free char *controllers_file = bx_xasprintf ("%s/cgroup.controllers", base);
  cleanup_free char *controllers = read_line (controllers_file);
  if (controllers == NULL || !has_all (controllers, CONTROLLERS))
    {
      return bx_error_setc (err, 0,
                            "the cgroup v2 controllers memory, pids and cpu are not all "
                            "available in %s (it offers: %s; under systemd, give the service "
                            "Delegate=yes)",
                            base, controllers != NULL ? controllers : strerror (errno));
    }
  /* The root cgroup may hold processes and hand out controllers at once; any other must
   * not hold brokerd when its controllers go to its children. */
  if (strcmp (own, base) == 0 && strcmp (base, HOST_ROOT) != 0)
    {
      cleanup_free char *leaf = bx_xasprintf ("%s/" LEAF, base);
      cleanup_free char *pid = bx_xasprintf ("%ld", (long)getpid ());
      if ((mkdir (leaf, 0755) < 0 && errno != EEXIST)
          || bx_bwrap_cgroup_set (leaf, "cgroup.procs", pid, err) < 0)
        {
          int saved = errno;
          bx_error_free (err);
          return bx_error_set (err, saved, "cannot move brokerd into a leaf of its own cgroup, %s",
                               leaf);
        }
    }
  if (ready (base, err) < 0)
    return -1;
  tops[0] = bx_xasprintf ("%s/" TOP, base);
  if (mkdir (tops[0], 0755) < 0 && errno != EEXIST)
    return bx_error_set (err, errno, "cannot make cgroups under %s", base);
  return ready (tops[0], err);
}

static int
write_limits (char *const *slot, const struct bx_bwrap_limits *was,
              const struct bx_bwrap_limits *limits, bool force, bx_error *err)
{
  if (force)
    {
      /* Where the kernel counts swap, none: memory.max then holds memory and swap. */
      cleanup_free char *swap = bx_xasprintf ("%s/memory.swap.max", slot[0]);
      if (access (swap, F_OK) == 0
          && bx_bwrap_cgroup_set (slot[0], "memory.swap.max", "0", err) < 0)
        return -1;
    }
  if (force || limits->memory != was->memory)
    {
      cleanup_free char *memory = bx_xasprintf ("%llu", (unsigned long long)limits->memory);
      if (bx_bwrap_cgroup_set (slot[0], "memory.max", memory, err) < 0)
        return -1;
    }
  if (force || limits->pids != was->pids)
    {
      /* The keeper counts as one task of the slot. */
      cleanup_free char *pids = bx_xasprintf ("%lld", (long long)limits->pids + 1);
      if (bx_bwrap_cgroup_set (slot[0], "pids.max", pids, err) < 0)
        return -1;
    }
  if (force || limits->cpu_millis != was->cpu_millis)
    {
      long long quota, period;
      bx_bwrap_cgroup_cpu_quota (limits->cpu_millis, &quota, &period);
      cleanup_free char *max = bx_xasprintf ("%lld %lld", quota, period);
      if (bx_bwrap_cgroup_set (slot[0], "cpu.max", max, err) < 0)
        return -1;
    }
  return 0;
}

static uint64_t
oom_kills (char *const *slot)
{
  cleanup_free char *path = bx_xasprintf ("%s/memory.events", slot[0]);
  return bx_bwrap_cgroup_oom_kill_count (path);
}

static void
leave (char *const *tops)
{
  /* Only a subtree that is brokerd's own is given back: in one given by cgroup_root,
   * another brokerd may be making its folder at this very moment. */
  const char *last = strrchr (tops[0], '/');
  cleanup_free char *base = bx_xasprintf ("%.*s", (int)(last - tops[0]), tops[0]);
  cleanup_free char *leaf = bx_xasprintf ("%s/" LEAF, base);
  cleanup_free char *own = own_cgroup ();
  if (own == NULL || strcmp (own, leaf) != 0)
    return;
  /* Another instance of this brokerd still has slots: nothing to give back yet. */
  if (rmdir (tops[0]) < 0)
    return;
  /* Controllers off first: a cgroup that hands them out may hold no process. */
  cleanup_error bx_error why = NULL;
  cleanup_free char *pid = bx_xasprintf ("%ld", (long)getpid ());
  if (bx_bwrap_cgroup_set (base, "cgroup.subtree_control", "-memory -pids -cpu", &why) == 0
      && bx_bwrap_cgroup_set (base, "cgroup.procs", pid, &why) == 0)
    rmdir (leaf);
}

const struct bx_bwrap_cgroup_backend bx_bwrap_cgroup_v2 = {
  .what = "cgroup v2",
  .dirs = 1,
  .tasks = 0,
  .threads = "cgroup.threads",
  .born_in = true,
  .locate = locate,
  .ready = ready,
  .write_limits = write_limits,
  .oom_kills = oom_kills,
  .leave = leave,
};
