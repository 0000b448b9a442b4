/* SPDX-License-Identifier: Apache-2.0 */
/* One call: a fresh gVisor sandbox run by `runsc run` from a bundle of its own (and for a
 * call with egress, toolkit's egress proxy in a second one, whose only way out is
 * slirp4netns), every outcome mapped to the same fixed sentences as podman.so's and
 * bwrap.so's.  What runsc said goes to brokerd's log only.
 *
 * A sandbox's folder is <state_dir>/boxes/<brokerd pid>-<start time>-<n>: its config.json,
 * a mount point per grant folder and the egress folder.  runsc resolves a bind mount's
 * source by its path, following links, and a sandbox may change what it can write between
 * two calls; so each grant folder is opened here without following links and bound,
 * non-recursively, on a mount point in that folder, which only root can reach, and that
 * mount point is runsc's source. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/command.h"
#include "bx/contract.h"
#include "bx/deadline.h"

#include "deliver.h"
#include "egress_records.h"
#include "gvisor.h"
#include "open_nofollow.h"
#include "slirp_ready.h"

static const char SENTENCE_COULD_NOT_RUN[] = BX_SENTENCE_COULD_NOT_RUN;
static const char SENTENCE_UNAVAILABLE[] = BX_RUNTIME_SENTENCE_UNAVAILABLE;
static const char SENTENCE_STOPPED[] = BX_SENTENCE_STOPPED;
static const char SENTENCE_TIME_LIMIT[] = BX_SENTENCE_TIME_LIMIT;
static const char SENTENCE_CANCELLED[] = BX_SENTENCE_CANCELLED;

#define RUNBOOK_POINTER "see docs/runbook.md#runner-unavailable"
/* The time limit's ceiling, as for the options: a deadline must fit in an int64_t. */
#define MAX_CALL_MS (24ull * 3600 * 1000)
/* How long the proxy's sandbox and slirp4netns may take to come up on a busy host. */
#define START_MS 20000
#define TICK_MS  5
/* What runsc itself answers when it cannot run a container (not the container's status). */
#define RUNSC_FAILED 128

extern char **environ;
static const char *const runsc_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };

static enum bx_run_status
fail (const char **sentence, const char *text, enum bx_run_status status)
{
  *sentence = text;
  return status;
}

/* The call's limit WHICH, or FALLBACK (the module's option) when brokerd sets none. */
static uint64_t
spec_or (const struct bx_host *host, const bx_run_spec *spec, int which, uint64_t fallback)
{
  uint64_t v = host->spec_limit (spec, which);
  return v != 0 ? v : fallback;
}

static void
flatten (char *s)
{
  for (; s != NULL && *s != '\0'; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      *s = ' ';
}

static void
tick (void)
{
  struct timespec t = { 0, TICK_MS * 1000 * 1000 };
  nanosleep (&t, NULL);
}

/* One sandbox's folder and what it holds, undone in reverse by box_close. */
struct box
{
  char *id;
  char *dir;
  char **points; /* mount points with a grant folder bound on them */
  size_t point_count;
  char *egress; /* the egress folder, or NULL */
  char *root;   /* the sandbox's root (make_root), or NULL */
};

/* Binds the folder or file PATH (opened without following links) on a new mount point
 * DIR/mN, read-only unless WRITABLE.  The mount point's path, or NULL with errno. */
static char *
bind_source (const char *dir, size_t n, const char *path, bool writable)
{
  cleanup_close int fd = bx_runtime_open_nofollow (path);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return NULL;
  char *point = bx_xasprintf ("%s/m%zu", dir, n);
  int made = S_ISDIR (st.st_mode) ? mkdir (point, 0700)
                                  : open (point, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (made < 0)
    {
      free (point);
      return NULL;
    }
  if (!S_ISDIR (st.st_mode))
    close (made);
  cleanup_free char *from = bx_xasprintf ("/proc/self/fd/%d", fd);
  unsigned long ro = writable ? 0 : MS_RDONLY;
  if (mount (from, point, NULL, MS_BIND, NULL) < 0)
    {
      int saved = errno;
      S_ISDIR (st.st_mode) ? rmdir (point) : unlink (point);
      free (point);
      errno = saved;
      return NULL;
    }
  /* The flags of a bind mount take a second call; a read-only one is read-only on the host
   * too, whatever gVisor would let through. */
  if (mount (NULL, point, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | ro, NULL) < 0)
    {
      int saved = errno;
      umount2 (point, MNT_DETACH);
      S_ISDIR (st.st_mode) ? rmdir (point) : unlink (point);
      free (point);
      errno = saved;
      return NULL;
    }
  return point;
}

/* The earlier mount of MOUNTS[0..COUNT) whose folder holds PATH and whose bind can bring it
 * along (a writable one, or any when PATH is read-only itself), or -1.  A protected path in
 * a granted folder is one: bound inside that folder's mount point (bind_inside), it reaches
 * the sandbox with the folder's bind instead of as a mount of its own, each of which costs
 * runsc's file proxy and gVisor's kernel a mount to set up and serve. */
static ssize_t
enclosing (const struct bx_gvisor_mount *mounts, size_t count, const char *path, bool writable)
{
  for (size_t j = 0; j < count && path != NULL; j++)
    {
      if (mounts[j].dest == NULL)
        continue;
      size_t n = strlen (mounts[j].dest);
      if ((mounts[j].writable || !writable) && strncmp (path, mounts[j].dest, n) == 0
          && (path[n] == '/' || (n == 1 && mounts[j].dest[0] == '/')))
        return (ssize_t)j;
    }
  return -1;
}

/* Binds PATH (opened without following links) on its own place below POINT, the mount point
 * of the granted folder TOP that holds it: read-only unless WRITABLE, nosuid and nodev
 * always.  The place is found below POINT without following links either and must be PATH
 * itself (device and inode), or nothing is mounted (ESTALE).  The flags are set on the copy
 * before it is mounted, so it never shows writable; the host's kernel enforces them for
 * runsc's file proxy, which serves the folder's bind with what is mounted below it.
 * 0, or -1 with errno. */
static int
bind_inside (const char *point, const char *top, const char *path, bool writable)
{
  cleanup_close int src = bx_runtime_open_nofollow (path);
  if (src < 0)
    return -1;
  size_t n = strcmp (top, "/") == 0 ? 0 : strlen (top);
  cleanup_free char *place = bx_xasprintf ("%s%s", point, path + n);
  cleanup_close int dst = bx_runtime_open_nofollow (place);
  struct stat s, d;
  if (dst < 0 || fstat (src, &s) < 0 || fstat (dst, &d) < 0)
    return -1;
  if (s.st_dev != d.st_dev || s.st_ino != d.st_ino)
    {
      errno = ESTALE;
      return -1;
    }
  cleanup_close int tree
      = (int)syscall (SYS_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  struct
  {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
  } attr = { MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (writable ? 0 : MOUNT_ATTR_RDONLY), 0, 0, 0 };
  if (tree < 0 || syscall (SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0
      || syscall (SYS_move_mount, tree, "", dst, "",
                  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)
             < 0)
    return -1;
  return 0;
}

/* mkdir -p of PATH's folders below the folder ROOT (PATH absolute); 0 or -1 with errno.
 * A link on the way is refused (ELOOP), not followed: made here on the host, a folder
 * through a grant's root's link (var/run -> /run) would land outside the sandbox's root. */
static int
make_dirs (const char *root, const char *path)
{
  cleanup_free char *full = bx_xasprintf ("%s%s", root, path);
  for (char *p = full + strlen (root) + 1;; p++)
    {
      if (*p != '/' && *p != '\0')
        continue;
      char c = *p;
      *p = '\0';
      struct stat st;
      if (mkdir (full, 0755) < 0 && errno != EEXIST)
        return -1;
      if (lstat (full, &st) < 0)
        return -1;
      if (!S_ISDIR (st.st_mode))
        {
          errno = S_ISLNK (st.st_mode) ? ELOOP : ENOTDIR;
          return -1;
        }
      *p = c;
      if (c == '\0')
        return 0;
    }
}

/* Binds SRC (a folder or a file of a root only root can change) read-only at DEST, made
 * in the sandbox's root tmpfs; 0 or -1 with errno. */
static int
bind_read_only (const char *src, const char *dest)
{
  struct stat st;
  if (lstat (src, &st) < 0)
    return -1;
  if (S_ISDIR (st.st_mode))
    {
      if (mkdir (dest, 0755) < 0)
        return -1;
    }
  else
    {
      int fd = open (dest, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
      if (fd < 0)
        return -1;
      close (fd);
    }
  if (mount (src, dest, NULL, MS_BIND, NULL) < 0
      || mount (NULL, dest, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL)
             < 0)
    return -1;
  return 0;
}

/* A grant's own root in the sandbox's root ROOT: its folders and files bound read-only, its
 * links made again, the folders on the way to a granted folder made in the tmpfs
 * (grant_rootfs.h), and toolkit from the module's root at BX_RUNTIME_INJECTED_TOOLKIT.
 * 0, or -1 with errno (and *ERR for a root that cannot be read). */
static int
fill_grant_root (struct bx_gvisor_instance *inst, const char *root, const char *grant_root,
                 const bx_run_spec *spec, bx_error *err)
{
  const struct bx_host *host = inst->host;
  size_t count = host->spec_mount_count (spec);
  cleanup_free const char **paths = bx_xmalloc ((count + 1) * sizeof *paths);
  for (size_t i = 0; i < count; i++)
    paths[i] = host->spec_mount_path (spec, i);
  struct bx_runtime_root_step *steps = NULL;
  size_t n = 0;
  if (bx_runtime_root_steps (grant_root, paths, count, &steps, &n, err) < 0)
    {
      errno = EINVAL;
      return -1;
    }
  int r = 0;
  for (size_t i = 0; i < n && r == 0; i++)
    {
      cleanup_free char *dest = bx_xasprintf ("%s%s", root, steps[i].dest);
      switch (steps[i].kind)
        {
        case BX_RUNTIME_ROOT_DIR:
          r = mkdir (dest, 0755);
          break;
        case BX_RUNTIME_ROOT_LINK:
          /* Made in the tmpfs: gVisor's kernel follows it inside the sandbox's root. */
          r = symlink (steps[i].source, dest);
          break;
        case BX_RUNTIME_ROOT_BIND:
          r = bind_read_only (steps[i].source, dest);
          break;
        }
    }
  bx_runtime_root_steps_free (steps, n);
  if (r < 0 || make_dirs (root, "/run/boxmaker") < 0)
    return -1;
  cleanup_free char *toolkit = bx_xasprintf ("%s/bin/toolkit", inst->cfg.rootfs);
  cleanup_free char *injected = bx_xasprintf ("%s" BX_RUNTIME_INJECTED_TOOLKIT, root);
  return bind_read_only (toolkit, injected);
}

/* The sandbox's root: a small tmpfs in the box's folder holding the module's root's
 * top-level folders, bound read-only one by one, or GRANT_ROOT's (fill_grant_root) when the
 * grant names a root of its own, and the mount points of the call's grant folders and of
 * /run/egress made here.  runsc's file proxy makes a mount point that is missing in the
 * root on the host; in this root, not the module's or the grant's, which stay as built
 * (and digest-checked).  NULL with errno (and *ERR for a grant's root that cannot be
 * read). */
static char *
make_root (struct bx_gvisor_instance *inst, struct box *b, const bx_run_spec *spec,
           const char *grant_root, bx_error *err)
{
  const struct bx_host *host = inst->host;
  char *root = bx_xasprintf ("%s/root", b->dir);
  if (mkdir (root, 0755) < 0
      /* No nosuid or nodev on the tmpfs itself: runsc remounts the root read-only from the
       * sandbox's user namespace, where a flag it does not repeat could not be dropped. */
      || mount ("tmpfs", root, "tmpfs", 0, "mode=0755,size=1m") < 0)
    {
      free (root);
      return NULL;
    }
  b->root = root;
  if (grant_root != NULL)
    {
      if (fill_grant_root (inst, root, grant_root, spec, err) < 0)
        return NULL;
    }
  else
    for (size_t i = 0; i < inst->rootfs_dir_count; i++)
      {
        cleanup_free char *dest = bx_xasprintf ("%s/%s", root, inst->rootfs_dirs[i]);
        cleanup_free char *src = bx_xasprintf ("%s/%s", inst->cfg.rootfs, inst->rootfs_dirs[i]);
        if (bind_read_only (src, dest) < 0)
          return NULL;
      }
  for (size_t i = 0; i < host->spec_mount_count (spec); i++)
    if (make_dirs (root, host->spec_mount_path (spec, i)) < 0)
      return NULL;
  if (make_dirs (root, "/run/egress") < 0 || make_dirs (root, "/tmp") < 0
      || make_dirs (root, "/proc") < 0 || make_dirs (root, "/dev") < 0)
    return NULL;
  return root;
}

static void
remove_point (const char *point)
{
  umount2 (point, MNT_DETACH);
  if (rmdir (point) < 0)
    unlink (point);
}

static void
box_close (struct box *b)
{
  for (size_t i = 0; i < b->point_count; i++)
    {
      remove_point (b->points[i]);
      free (b->points[i]);
    }
  free (b->points);
  if (b->root != NULL)
    {
      umount2 (b->root, MNT_DETACH);
      rmdir (b->root);
      free (b->root);
    }
  if (b->egress != NULL)
    {
      cleanup_free char *sock = bx_xasprintf ("%s/" BX_EGRESS_SOCKET_NAME, b->egress);
      cleanup_free char *records = bx_xasprintf ("%s/" BX_EGRESS_RECORDS_FILE, b->egress);
      unlink (sock);
      unlink (records);
      rmdir (b->egress);
      free (b->egress);
    }
  if (b->dir != NULL)
    {
      cleanup_free char *config = bx_xasprintf ("%s/config.json", b->dir);
      unlink (config);
      rmdir (b->dir);
    }
  free (b->dir);
  free (b->id);
  memset (b, 0, sizeof *b);
}

static int
box_open (struct bx_gvisor_instance *inst, struct box *b)
{
  memset (b, 0, sizeof *b);
  unsigned long long n = atomic_fetch_add (&inst->counter, 1);
  b->id = bx_xasprintf ("%s-%llu", inst->name, n);
  b->dir = bx_xasprintf ("%s/%s", inst->boxes, b->id);
  if (mkdir (b->dir, 0711) < 0)
    {
      free (b->dir);
      b->dir = NULL;
      return -1;
    }
  return 0;
}

static int
write_config (const char *dir, const char *json)
{
  cleanup_free char *path = bx_xasprintf ("%s/config.json", dir);
  cleanup_close int fd = open (path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  size_t len = strlen (json);
  return fd >= 0 && write (fd, json, len) == (ssize_t)len ? 0 : -1;
}

/* Is container ID still known to runsc (its state folder holds an entry named after it)? */
static bool
still_there (struct bx_gvisor_instance *inst, const char *id)
{
  cleanup_free char *state = bx_xasprintf ("%s/%s_sandbox:%s.state", inst->runsc_root, id, id);
  cleanup_free char *lock = bx_xasprintf ("%s/%s_sandbox:%s.lock", inst->runsc_root, id, id);
  struct stat st;
  return stat (state, &st) == 0 || stat (lock, &st) == 0;
}

/* Kills every task of the cgroup folder DIR and removes it, trying for up to a second
 * while the tasks die. */
static void
empty_cgroup (const char *dir)
{
  cleanup_free char *procs = bx_xasprintf ("%s/cgroup.procs", dir);
  for (int tries = 0; tries < 200; tries++)
    {
      FILE *f = fopen (procs, "re");
      if (f == NULL)
        return;
      long pid;
      while (fscanf (f, "%ld", &pid) == 1)
        kill ((pid_t)pid, SIGKILL);
      fclose (f);
      if (rmdir (dir) == 0 || errno == ENOENT)
        return;
      tick ();
    }
}

/* What `runsc delete --force` does, without waiting for runsc: once runsc run is dead (its
 * sandbox and gofer die with it), the sandbox's cgroup in every hierarchy and its state
 * files go.  A cancelled call must end within a second, and runsc takes longer on a busy
 * host. */
void
bx_gvisor_remove_box (struct bx_gvisor_instance *inst, const char *id)
{
  DIR *d = opendir ("/sys/fs/cgroup");
  struct dirent *e;
  cleanup_free char *v2 = bx_xasprintf ("/sys/fs/cgroup%s/%s", inst->cfg.cgroup_path, id);
  empty_cgroup (v2);
  while (d != NULL && (e = readdir (d)) != NULL)
    {
      if (e->d_name[0] == '.')
        continue;
      cleanup_free char *dir
          = bx_xasprintf ("/sys/fs/cgroup/%s%s/%s", e->d_name, inst->cfg.cgroup_path, id);
      empty_cgroup (dir);
    }
  if (d != NULL)
    closedir (d);
  cleanup_free char *state = bx_xasprintf ("%s/%s_sandbox:%s.state", inst->runsc_root, id, id);
  cleanup_free char *lock = bx_xasprintf ("%s/%s_sandbox:%s.lock", inst->runsc_root, id, id);
  unlink (state);
  unlink (lock);
}

/* `runsc delete --force ID`: kills the sandbox and removes its state, cgroup and all. */
static void
delete_box (struct bx_gvisor_instance *inst, const char *id)
{
  char **argv = bx_gvisor_delete_argv (&inst->cfg, inst->runsc_root, id);
  struct bx_command cmd = {
    .argv = (const char *const *)argv,
    .env = runsc_env,
    .deadline = bx_deadline_in (30000),
  };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  if (r.end != BX_COMMAND_EXITED)
    bx_command_reap (&r, 0);
  bx_command_result_clear (&r);
  bx_gvisor_argv_free (argv);
}

/* The sandbox's own end, whatever dies: runsc run under timeout(1), which kills it 10 s
 * after the call's limit, each under setpriv --pdeathsig, so that timeout dies with the
 * thread of brokerd's that started it and runsc with timeout.  runsc's sandbox and file
 * proxy die with runsc (they are attached to it). */
static char **
with_timeout (char **argv, uint64_t limit_ms)
{
  size_t n = 0;
  while (argv[n] != NULL)
    n++;
  static const char *const pre[]
      = { "/usr/bin/setpriv", "--pdeathsig",   "KILL", "--",
          "/usr/bin/timeout", "--signal=KILL", NULL,   "/usr/bin/setpriv",
          "--pdeathsig",      "KILL",          "--" };
  size_t m = sizeof pre / sizeof pre[0];
  char **out = bx_xmalloc ((n + m + 1) * sizeof (char *));
  for (size_t i = 0; i < m; i++)
    out[i] = pre[i] != NULL ? bx_xstrdup (pre[i])
                            : bx_xasprintf ("%llus", (unsigned long long)(limit_ms / 1000 + 10));
  memcpy (out + m, argv, (n + 1) * sizeof (char *));
  free (argv);
  return out;
}

static enum bx_run_status
answer (struct bx_gvisor_instance *inst, const char *name, struct bx_command_result *r,
        bx_run_result *result, const char **sentence)
{
  const struct bx_host *host = inst->host;
  bool deliver = false, refused = false;
  enum bx_run_status status = BX_RUN_OK;
  flatten (r->err);
  switch (r->end)
    {
    case BX_COMMAND_NOT_RUN:
      host->log (host, BX_LOG_ERROR, "%s: cannot run %s: %s; %s", name, inst->cfg.runsc,
                 strerror (r->spawn_errno), RUNBOOK_POINTER);
      return fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    case BX_COMMAND_TIMED_OUT:
      return fail (sentence, SENTENCE_TIME_LIMIT, BX_RUN_FAILED);
    case BX_COMMAND_CANCELLED:
      return fail (sentence, SENTENCE_CANCELLED, BX_RUN_FAILED);
    case BX_COMMAND_CAPPED:
      deliver = true;
      break;
    case BX_COMMAND_SIGNALED:
      host->log (host, BX_LOG_WARNING, "%s: runsc killed by signal %d", name, r->signal);
      status = fail (sentence, SENTENCE_STOPPED, BX_RUN_FAILED);
      break;
    case BX_COMMAND_EXITED:
      if (r->exit_code == RUNSC_FAILED && strstr (r->err, "running container:") != NULL)
        {
          host->log (host, BX_LOG_ERROR, "%s: runsc could not run the sandbox: %.3500s; %s", name,
                     r->err, RUNBOOK_POINTER);
          status = fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
        }
      else
        /* Past 128, gVisor's kernel killed the tool (its memory), or the host's killed
         * gVisor's. */
        status = bx_runtime_toolkit_exit (host, name, r->exit_code, r->err, &deliver, &refused,
                                          sentence);
      break;
    }
  if (deliver)
    bx_runtime_deliver (host, r, refused, result);
  return status;
}

/* The box for the sandbox's own limits. */
static void
limits (struct bx_gvisor_instance *inst, const bx_run_spec *spec, const char *id,
        struct bx_gvisor_box *box, char **cgroup)
{
  const struct bx_host *host = inst->host;
  *cgroup = bx_xasprintf ("%s/%s", inst->cfg.cgroup_path, id);
  box->cgroup = *cgroup;
  box->memory = spec_or (host, spec, BX_LIMIT_MEMORY, inst->cfg.memory);
  box->pids = (int64_t)spec_or (host, spec, BX_LIMIT_PIDS, (uint64_t)inst->cfg.pids);
  box->cpu_millis = (int64_t)spec_or (host, spec, BX_LIMIT_CPU, (uint64_t)inst->cfg.cpu_millis);
  box->file_size = spec_or (host, spec, BX_LIMIT_FILE_SIZE, inst->cfg.file_size);
}

/* ---- egress ------------------------------------------------------------------------------ */

struct egress
{
  int netns;   /* a network namespace of its own, which slirp4netns connects outside */
  pid_t slirp; /* slirp4netns */
  pid_t proxy; /* runsc running the proxy's sandbox */
  struct box box;
};

/* A new network namespace, held by a descriptor: made on this thread alone, which goes
 * back to its own at once. */
static int
new_netns (void)
{
  cleanup_close int own = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (own < 0 || unshare (CLONE_NEWNET) < 0)
    return -1;
  int made = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  int saved = errno;
  if (setns (own, CLONE_NEWNET) < 0)
    abort (); /* a thread of brokerd's left in the proxy's namespace would be worse */
  errno = saved;
  return made;
}

/* Starts ARGV with standard streams on /dev/null and READY (or -1) as descriptor 3. */
static pid_t
spawn (char *const *argv, int ready)
{
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  sigset_t none, all;
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawn_file_actions_init (&fa);
  posix_spawnattr_init (&attr);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setflags (&attr,
                            POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDWR, 0);
  posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", O_RDWR, 0);
  posix_spawn_file_actions_addopen (&fa, 2, "/dev/null", O_RDWR, 0);
  if (ready >= 0)
    posix_spawn_file_actions_adddup2 (&fa, ready, 3);
  pid_t pid;
  int rc = posix_spawn (&pid, argv[0], &fa, &attr, argv, (char **)runsc_env);
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  return rc == 0 ? pid : -1;
}

static void
kill_reap (pid_t pid)
{
  if (pid <= 0)
    return;
  kill (-pid, SIGKILL);
  kill (pid, SIGKILL);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

static bool
give_up (const struct bx_host *host, const bx_run_spec *spec, int64_t deadline)
{
  return bx_deadline_left (deadline) == 0 || host->spec_cancelled (spec);
}

/* HOSTS joined with ',' (NULL for none). */
static char *
join (const struct bx_host *host, const bx_run_spec *spec, bool private)
{
  size_t count
      = private
            ? (BX_HOST_HAS (host, spec_egress_private) ? host->spec_egress_private_count (spec) : 0)
            : host->spec_egress_count (spec);
  if (count == 0)
    return NULL;
  char *joined = bx_xstrdup ("");
  for (size_t i = 0; i < count; i++)
    {
      const char *h
          = private ? host->spec_egress_private (spec, i) : host->spec_egress_host (spec, i);
      char *more = bx_xasprintf ("%s%s%s", joined, i ? "," : "", h ? h : "");
      free (joined);
      joined = more;
    }
  return joined;
}

/* slirp4netns, then the proxy's sandbox in its namespace; 0 once the proxy's socket is
 * there, or -1 (logged). */
static int
egress_start (struct bx_gvisor_instance *inst, const bx_run_spec *spec, const char *name,
              struct egress *e, uint64_t time_ms)
{
  const struct bx_host *host = inst->host;
  int64_t deadline = bx_deadline_in (START_MS);
  e->netns = new_netns ();
  if (e->netns < 0)
    {
      host->log (host, BX_LOG_ERROR, "%s-egress: cannot make a network namespace: %s; %s", name,
                 strerror (errno), RUNBOOK_POINTER);
      return -1;
    }
  cleanup_free char *ns = bx_xasprintf ("/proc/%ld/fd/%d", (long)getpid (), e->netns);
  int ready[2];
  if (pipe2 (ready, O_CLOEXEC | O_NONBLOCK) < 0)
    return -1;
  char *slirp_argv[] = { (char *)inst->cfg.slirp4netns,
                         "--configure",
                         "--mtu=65520",
                         "--disable-host-loopback",
                         "--ready-fd=3",
                         "--netns-type=path",
                         ns,
                         "tap0",
                         NULL };
  e->slirp = spawn (slirp_argv, ready[1]);
  close (ready[1]);
  bool up = e->slirp > 0 && bx_slirp_wait_ready (host, spec, ready[0], deadline, TICK_MS);
  close (ready[0]);
  if (!up)
    {
      if (!host->spec_cancelled (spec))
        host->log (host, BX_LOG_ERROR, "%s-egress: slirp4netns (%s) did not come up; %s", name,
                   inst->cfg.slirp4netns, RUNBOOK_POINTER);
      return -1;
    }

  if (box_open (inst, &e->box) < 0)
    return -1;
  e->box.egress = bx_xasprintf ("%s/egress", e->box.dir);
  if (mkdir (e->box.egress, 0755) < 0
      || chown (e->box.egress, (uid_t)(inst->cfg.id_base + inst->cfg.uid),
                (gid_t)(inst->cfg.id_base + inst->cfg.gid))
             < 0)
    {
      host->log (host, BX_LOG_ERROR, "%s-egress: cannot make %s: %s; %s", name, e->box.egress,
                 strerror (errno), RUNBOOK_POINTER);
      return -1;
    }
  cleanup_free char *allow = join (host, spec, false);
  cleanup_free char *allow_private = join (host, spec, true);
  const char *args[] = { "/bin/toolkit",
                         "egress-proxy",
                         "--socket",
                         BX_EGRESS_SOCKET,
                         "--allow",
                         allow ? allow : "",
                         allow_private ? "--allow-private" : NULL,
                         allow_private,
                         NULL };
  /* The proxy always runs in the module's root: it is toolkit's own code. */
  if (make_root (inst, &e->box, spec, NULL, NULL) == NULL)
    {
      host->log (host, BX_LOG_ERROR, "%s-egress: cannot make the sandbox's root: %s; %s", name,
                 strerror (errno), RUNBOOK_POINTER);
      return -1;
    }
  struct bx_gvisor_box box = {
    .root = e->box.root,
    .args = args,
    .egress_source = e->box.egress,
    .egress_writable = true,
    /* No user namespace here (gvisor_spec.c): the proxy runs as the host uid the tool's sandbox
     * maps its own to, so the socket it makes is the tool's to connect to. */
    .uid = inst->cfg.id_base + inst->cfg.uid,
    .gid = inst->cfg.id_base + inst->cfg.gid,
  };
  cleanup_free char *cgroup = NULL;
  limits (inst, spec, e->box.id, &box, &cgroup);
  cleanup_free char *json = bx_gvisor_spec_json (&inst->cfg, &box);
  if (write_config (e->box.dir, json) < 0)
    return -1;
  char **run
      = bx_gvisor_argv (&inst->cfg, inst->runsc_root, e->box.id, e->box.dir, "host", "create");
  run = with_timeout (run, time_ms + START_MS);
  struct bx_argv_ns
  {
    char *items[4];
  } pre = { { (char *)inst->cfg.nsenter, bx_xasprintf ("--net=%s", ns), "--", NULL } };
  size_t n = 0;
  while (run[n] != NULL)
    n++;
  char **argv = bx_xmalloc ((n + 4) * sizeof (char *));
  memcpy (argv, pre.items, 3 * sizeof (char *));
  memcpy (argv + 3, run, (n + 1) * sizeof (char *));
  e->proxy = spawn (argv, -1);
  free (pre.items[1]);
  free (argv);
  bx_gvisor_argv_free (run);

  cleanup_free char *sock = bx_xasprintf ("%s/" BX_EGRESS_SOCKET_NAME, e->box.egress);
  struct stat st;
  while (e->proxy > 0 && stat (sock, &st) < 0)
    {
      if (give_up (host, spec, deadline) || waitpid (e->proxy, NULL, WNOHANG) == e->proxy)
        {
          if (!host->spec_cancelled (spec))
            host->log (host, BX_LOG_ERROR, "%s-egress: the proxy's sandbox made no socket; %s",
                       name, RUNBOOK_POINTER);
          return -1;
        }
      tick ();
    }
  return e->proxy > 0 ? 0 : -1;
}

static void
egress_stop (struct bx_gvisor_instance *inst, const char *name, struct egress *e,
             bx_run_result *result)
{
  kill_reap (e->proxy);
  if (e->box.id != NULL && e->proxy > 0)
    bx_gvisor_remove_box (inst, e->box.id);
  kill_reap (e->slirp);
  if (e->netns >= 0)
    close (e->netns);
  if (e->box.egress != NULL)
    {
      int fd = bx_runtime_open_nofollow (e->box.egress);
      if (fd >= 0)
        {
          bx_runtime_pass_egress_records (inst->host, fd, name, result);
          close (fd);
        }
    }
  box_close (&e->box);
}

/* ---- the tool's sandbox ----------------------------------------------------------------- */

static enum bx_run_status
run_tool (struct bx_gvisor_instance *inst, const bx_run_spec *spec, const char *name, int tool,
          struct box *b, const char *egress, const char *grant_root, bx_run_result *result,
          const char **sentence)
{
  const struct bx_host *host = inst->host;
  size_t count = host->spec_mount_count (spec);
  cleanup_free struct bx_gvisor_mount *mounts = bx_xmalloc ((count + 1) * sizeof *mounts);
  b->points = bx_xmalloc ((count + 1) * sizeof (char *));
  size_t mount_count = 0;
  for (size_t i = 0; i < count; i++)
    {
      const char *path = host->spec_mount_path (spec, i);
      bool writable = host->spec_mount_writable (spec, i) != 0;
      ssize_t top = path != NULL ? enclosing (mounts, mount_count, path, writable) : -1;
      char *point = NULL;
      if (top >= 0 ? bind_inside (mounts[top].source, mounts[top].dest, path, writable) < 0
                   : (point = bind_source (b->dir, i, path, writable)) == NULL)
        {
          /* A link where a grant's folder was, or the folder gone: nothing is mounted. */
          host->log (host, BX_LOG_ERROR, "%s: cannot bind \"%s\" without following links: %s", name,
                     path ? path : "(null)", strerror (errno));
          return fail (sentence, SENTENCE_COULD_NOT_RUN, BX_RUN_FAILED);
        }
      if (point == NULL)
        continue;
      b->points[b->point_count++] = point;
      mounts[mount_count++]
          = (struct bx_gvisor_mount){ .dest = path, .source = point, .writable = writable };
    }
  cleanup_error bx_error why = NULL;
  if (make_root (inst, b, spec, grant_root, &why) == NULL)
    {
      host->log (host, BX_LOG_ERROR, "%s: cannot make the sandbox's root in %s: %s; %s", name,
                 b->dir, why != NULL ? bx_error_msg (why) : strerror (errno), RUNBOOK_POINTER);
      return fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    }
  /* SIGXFSZ ignored, as bwrap.so does: a write past the file size limit fails with EFBIG,
   * which toolkit reports, rather than killing it.  gVisor's kernel starts the process with
   * its own dispositions, so the root's shell sets it before it becomes toolkit.  In a
   * grant's own root the shell is that root's, toolkit the module's. */
  const char *args[]
      = { "/bin/sh", "-c",
          grant_root != NULL ? "trap '' XFSZ; exec " BX_RUNTIME_INJECTED_TOOLKIT " \"$0\""
                             : "trap '' XFSZ; exec /bin/toolkit \"$0\"",
          host->spec_tool (spec), NULL };
  struct bx_gvisor_box box = {
    .root = b->root,
    .path = grant_root != NULL ? BX_RUNTIME_ROOT_PATH : NULL,
    .args = args,
    .mounts = mounts,
    .mount_count = mount_count,
    .egress_source = egress,
  };
  cleanup_free char *cgroup = NULL;
  limits (inst, spec, b->id, &box, &cgroup);
  uint64_t limit_ms = spec_or (host, spec, BX_LIMIT_TIME, inst->cfg.limit_ms[tool]);
  if (limit_ms > MAX_CALL_MS)
    limit_ms = MAX_CALL_MS;
  uint64_t cap = spec_or (host, spec, BX_LIMIT_OUTPUT, inst->cfg.output_cap);
  if (cap > inst->cfg.output_cap)
    cap = inst->cfg.output_cap;
  cleanup_free char *json = bx_gvisor_spec_json (&inst->cfg, &box);
  if (write_config (b->dir, json) < 0)
    {
      host->log (host, BX_LOG_ERROR, "%s: cannot write the bundle in %s: %s; %s", name, b->dir,
                 strerror (errno), RUNBOOK_POINTER);
      return fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    }
  char **argv = bx_gvisor_argv (&inst->cfg, inst->runsc_root, b->id, b->dir, "none",
                                egress != NULL ? "open" : "none");
  argv = with_timeout (argv, limit_ms);
  size_t len = 0;
  const char *input = host->spec_arguments (spec, &len);
  struct bx_command cmd = {
    .argv = (const char *const *)argv,
    .env = runsc_env,
    .input = input,
    .input_len = len,
    .keep_output = true,
    .output_cap = cap,
    .deadline = bx_deadline_in ((int64_t)limit_ms),
    .own_group = true,
    .cancellable = true,
    .cancel_fd = host->spec_cancel_fd (spec),
  };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  bx_gvisor_argv_free (argv);
  /* Nothing of the call may outlive it: the sandbox goes first, then runsc. */
  if (r.end != BX_COMMAND_EXITED && r.end != BX_COMMAND_SIGNALED && r.end != BX_COMMAND_NOT_RUN)
    {
      int64_t killed_at = bx_now_ms ();
      bx_command_reap (&r, 0);
      bx_gvisor_remove_box (inst, b->id);
      if (r.end == BX_COMMAND_CANCELLED)
        host->log (host, BX_LOG_INFO, "%s: cancelled; sandbox killed in %lld ms", name,
                   (long long)(bx_now_ms () - killed_at));
    }
  else if (still_there (inst, b->id))
    delete_box (inst, b->id);
  enum bx_run_status status = answer (inst, name, &r, result, sentence);
  bx_command_result_clear (&r);
  return status;
}

enum bx_run_status
bx_gvisor_call_run (struct bx_gvisor_instance *inst, const bx_run_spec *spec, bx_run_result *result,
                    const char **sentence)
{
  const struct bx_host *host = inst->host;
  int tool = host->spec_tool_id (spec);
  if (tool < 0 || tool >= BX_RUNTIME_TOOL_COUNT)
    {
      host->log (host, BX_LOG_ERROR, "unknown tool %d", tool);
      return fail (sentence, SENTENCE_COULD_NOT_RUN, BX_RUN_FAILED);
    }
  cleanup_free char *name
      = bx_xasprintf ("%s-%s", host->spec_session (spec), host->spec_call (spec));
  /* A grant's image: check_root refuses it, so only a host that skipped the check gets
   * here, and no call runs in less than the grant asked for. */
  if (BX_HOST_HAS (host, spec_image) && host->spec_image (spec) != NULL)
    {
      host->log (host, BX_LOG_ERROR, "%s: the grant names image %s: gvisor.so runs no image", name,
                 host->spec_image (spec));
      return fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    }
  /* A grant's own root runs only once check_root has seen it match its digest. */
  const char *rootfs = BX_HOST_HAS (host, spec_rootfs) ? host->spec_rootfs (spec) : NULL;
  cleanup_free char *grant_root = NULL;
  if (rootfs != NULL && (grant_root = bx_runtime_roots_folder (inst->roots, rootfs)) == NULL)
    {
      host->log (host, BX_LOG_ERROR,
                 "%s: the grant's root %s is not the folder that was checked (written again "
                 "since? reload brokerd to check it); %s",
                 name, rootfs, RUNBOOK_POINTER);
      return fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    }
  if (host->spec_cancelled (spec))
    return fail (sentence, SENTENCE_CANCELLED, BX_RUN_FAILED);
  enum bx_run_status status;
  struct egress e = { .netns = -1, .slirp = -1, .proxy = -1 };
  bool egress = host->spec_has_egress (spec) != 0;
  if (egress)
    for (size_t i = 0; i < host->spec_egress_count (spec); i++)
      {
        const char *h = host->spec_egress_host (spec, i);
        if (h == NULL || h[0] == '\0' || strchr (h, ',') != NULL)
          {
            host->log (host, BX_LOG_ERROR, "%s: cannot pass egress host \"%s\"", name,
                       h ? h : "(null)");
            return fail (sentence, SENTENCE_COULD_NOT_RUN, BX_RUN_FAILED);
          }
      }
  struct box b;
  if (box_open (inst, &b) < 0)
    {
      host->log (host, BX_LOG_ERROR, "%s: cannot make a folder in %s: %s; %s", name, inst->boxes,
                 strerror (errno), RUNBOOK_POINTER);
      return fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
    }
  uint64_t limit_ms = spec_or (host, spec, BX_LIMIT_TIME, inst->cfg.limit_ms[tool]);
  if (egress && egress_start (inst, spec, name, &e, limit_ms) < 0)
    status = host->spec_cancelled (spec)
                 ? fail (sentence, SENTENCE_CANCELLED, BX_RUN_FAILED)
                 : fail (sentence, SENTENCE_UNAVAILABLE, BX_RUN_UNAVAILABLE);
  else
    status = run_tool (inst, spec, name, tool, &b, egress ? e.box.egress : NULL, grant_root, result,
                       sentence);
  box_close (&b);
  if (egress)
    egress_stop (inst, name, &e, result);
  return status;
}
