/* SPDX-License-Identifier: Apache-2.0 */
/* A static program the adversarial suite copies into a grant and runs inside the sandbox
 * (and on the host, to plant and check a key of the host's root).  Each command prints
 * NAME=ok or NAME=<errno name> per attempt, so a case can assert what the kernel allowed.
 *
 *   probe keys                  add_key, keyctl on the user keyring, request_key
 *   probe userns                unshare, clone and clone3 with CLONE_NEWUSER
 *   probe host-add DESC         (host) adds a user key DESC to the caller's user keyring
 *   probe host-has ID           (host) exit 0 when key ID is still there
 *   probe host-del ID           (host) unlinks key ID
 *   probe swap NAME TARGET SECS  makes folder NAME (its hooks and config pipes, so that
 *                               nothing below it is a mount source), a link TARGET beside
 *                               it, and exchanges the two for SECS seconds; then NAME is
 *                               the folder again
 *   probe undo PID PATH...      (host, as the sandboxes' uid) joins PID's user and mount
 *                               namespaces, waits up to 30 s for each PATH to be mounted
 *                               there, and tries to unmount it (umount_N) and to remount it
 *                               writable (remount_N), N counting from 1
 *   probe overmount PID FILE TEXT  (host, as the sandboxes' uid) joins PID's user and mount
 *                               namespaces, covers their root with a tmpfs holding a /tmp
 *                               tmpfs, and writes TEXT to FILE there; prints overmount=...
 *   probe stopper SECS MAX PPID...  (host, as the sandboxes' uid) for SECS seconds, stops
 *                               (SIGSTOP) every child of the PPIDs (the keepers) that has
 *                               not exec'd yet and that the kernel lets it stop, at most MAX;
 *                               prints stopped=N
 *   probe aio FILE DEPTH [MIB]  a chain of DEPTH processes, each in a session of its own
 *                               and the child of the one before, which waits; the last
 *                               queues asynchronous O_DIRECT writes of 1 MiB (io_submit)
 *                               until killed, round after round: FILE.K (K from 0 to 7 in
 *                               turn) made 16 MiB of unwritten space again, 16 writes into
 *                               it; after the first round prints inflight=N, the MiB of
 *                               FILE.0 to FILE.7 not yet written.  With MIB, it queues no
 *                               more after the round that reaches MIB writes, and waits
 *   probe unwritten FILE        prints unwritten=N, the same figure (FIEMAP, which reads
 *                               no data)
 *   probe aio-take FILE         takes Linux AIO events (io_setup) until the kernel gives no
 *                               more (1048576 at most), writes "took=N ERRNO" (N events, the
 *                               errno that stopped it) to FILE and holds them until
 *                               FILE.release exists
 *   probe aio-one               prints aio-one=ok when io_setup gives it one event, else
 *                               aio-one=ERRNO
 *   probe dwrite FILE MIB       writes MIB MiB to FILE with O_DIRECT in one write(2), which
 *                               waits for the disk uninterruptibly, FILE.writing made right
 *                               before it; prints dwrite=N (bytes written) or dwrite=ERRNO */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/aio_abi.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEY_SPEC_USER_KEYRING -4
#define KEYCTL_GET_KEYRING_ID 0
#define KEYCTL_DESCRIBE       6
#define KEYCTL_UNLINK         9

static void
report (const char *name, long r)
{
  if (r < 0)
    printf ("%s=%s\n", name, strerrorname_np (errno));
  else
    printf ("%s=ok\n", name);
}

static int
child (void *arg)
{
  (void)arg;
  return 0;
}

/* Joins the user namespace that owns PID's mount namespace, and that one: 0, or -1. */
static int
enter (const char *pid)
{
  char ns[64];
  snprintf (ns, sizeof ns, "/proc/%s/ns/mnt", pid);
  int mnt = open (ns, O_RDONLY | O_CLOEXEC);
  int user = mnt >= 0 ? ioctl (mnt, NS_GET_USERNS) : -1;
  return user < 0 || setns (user, CLONE_NEWUSER) < 0 || setns (mnt, CLONE_NEWNS) < 0 ? -1 : 0;
}

/* Whether PATH is a mount point in the namespace whose mountinfo INFO is open (read from
 * its start each time). */
static int
mounted (int info, const char *path)
{
  static char buf[1 << 20];
  ssize_t n = pread (info, buf, sizeof buf - 1, 0);
  buf[n > 0 ? n : 0] = '\0';
  char field[4096];
  for (char *line = buf; line != NULL && *line != '\0';)
    {
      if (sscanf (line, "%*s %*s %*s %*s %4095s", field) == 1 && strcmp (field, path) == 0)
        return 1;
      line = strchr (line, '\n');
      line = line != NULL ? line + 1 : NULL;
    }
  return 0;
}

static int
undo (const char *pid, char **paths, int count)
{
  /* Each line as it comes: the case kills a probe whose sandbox no call took. */
  setvbuf (stdout, NULL, _IONBF, 0);
  /* Opened before the host's /proc is out of sight: the sandbox's own /proc does not know
   * this process. */
  char ns[64];
  snprintf (ns, sizeof ns, "/proc/%s/mountinfo", pid);
  int info = open (ns, O_RDONLY | O_CLOEXEC);
  if (info < 0 || enter (pid) < 0)
    {
      printf ("enter=%s\n", strerrorname_np (errno));
      return 1;
    }
  printf ("enter=ok\n");
  for (int i = 0; i < count; i++)
    {
      for (int t = 0; t < 3000 && !mounted (info, paths[i]); t++)
        usleep (10000);
      char name[32];
      snprintf (name, sizeof name, "remount_%d", i + 1);
      report (name, mount (NULL, paths[i], NULL, MS_REMOUNT | MS_BIND, NULL));
      snprintf (name, sizeof name, "umount_%d", i + 1);
      report (name, umount2 (paths[i], MNT_DETACH));
    }
  fflush (stdout);
  return 0;
}

static int
overmount (const char *pid, const char *file, const char *text)
{
  char dir[4096];
  snprintf (dir, sizeof dir, "%s", file);
  char *slash = strrchr (dir, '/');
  if (slash != NULL)
    *slash = '\0';
  if (enter (pid) < 0 || mount ("bx", "/", "tmpfs", 0, NULL) < 0 || chdir ("/") < 0
      || (mkdir ("/tmp", 0755) < 0 && errno != EEXIST)
      || mount ("bx", "/tmp", "tmpfs", 0, NULL) < 0)
    {
      printf ("overmount=%s\n", strerrorname_np (errno));
      return 1;
    }
  /* The folders on the way, then the file, on the new root. */
  for (char *p = dir + 1; *p != '\0'; p++)
    if (*p == '/')
      {
        *p = '\0';
        mkdir (dir, 0777);
        *p = '/';
      }
  mkdir (dir, 0777);
  FILE *f = fopen (file, "we");
  if (f == NULL || fputs (text, f) < 0 || fclose (f) != 0)
    {
      printf ("overmount=%s\n", strerrorname_np (errno));
      return 1;
    }
  printf ("overmount=ok\n");
  return 0;
}

/* A keeper's child that has not exec'd yet keeps the keeper's name. */
static int
stopper (int secs, int max, char **ppids, int count)
{
  time_t end = time (NULL) + secs;
  int stopped = 0;
  while (time (NULL) < end && stopped < max)
    {
      DIR *d = opendir ("/proc");
      for (struct dirent *e; d != NULL && (e = readdir (d)) != NULL;)
        {
          int pid = atoi (e->d_name);
          char path[64], buf[4096];
          snprintf (path, sizeof path, "/proc/%d/status", pid);
          int fd = pid > 0 ? open (path, O_RDONLY | O_CLOEXEC) : -1;
          if (fd < 0)
            continue;
          ssize_t n = read (fd, buf, sizeof buf - 1);
          close (fd);
          buf[n > 0 ? n : 0] = '\0';
          const char *pp = strstr (buf, "PPid:\t");
          int mine = 0;
          for (int i = 0; pp != NULL && i < count; i++)
            mine |= atoi (pp + 6) == atoi (ppids[i]);
          if (mine && strncmp (buf, "Name:\tbwrap-keeper\n", 19) == 0
              && strstr (buf, "State:\tT") == NULL && kill (pid, SIGSTOP) == 0)
            stopped++;
        }
      if (d != NULL)
        closedir (d);
    }
  printf ("stopped=%d\n", stopped);
  return 0;
}

/* The MiB of FD's file that the file system has allocated but not yet written, or -1. */
static int
unwritten_mib (int fd)
{
  enum
  {
    MAX_EXTENTS = 512
  };
  struct fiemap *map = calloc (1, sizeof *map + MAX_EXTENTS * sizeof (struct fiemap_extent));
  if (map == NULL)
    return -1;
  map->fm_length = FIEMAP_MAX_OFFSET;
  map->fm_extent_count = MAX_EXTENTS;
  int mib = -1;
  if (ioctl (fd, FS_IOC_FIEMAP, map) == 0)
    {
      unsigned long long bytes = 0;
      for (unsigned i = 0; i < map->fm_mapped_extents; i++)
        if (map->fm_extents[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN)
          bytes += map->fm_extents[i].fe_length;
      mib = (int)((bytes + (1 << 20) - 1) >> 20);
    }
  free (map);
  return mib;
}

/* The unwritten MiB of FILE.0 to FILE.7, or -1. */
static int
unwritten_files (const char *file)
{
  int total = 0;
  for (int k = 0; k < 8; k++)
    {
      char name[4096];
      snprintf (name, sizeof name, "%s.%d", file, k);
      int fd = open (name, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        continue;
      int mib = unwritten_mib (fd);
      close (fd);
      if (mib < 0)
        return -1;
      total += mib;
    }
  return total;
}

static int
aio_writes (const char *file, int depth, long most)
{
  /* Past the reach of toolkit's sweep of what a command leaves, which ends a level of
   * sessions a round. */
  for (int d = 0; d < depth; d++)
    {
      pid_t child = fork ();
      if (child < 0)
        {
          printf ("inflight=fork-%s\n", strerrorname_np (errno));
          return 1;
        }
      if (child > 0)
        for (;;)
          pause ();
      setsid ();
    }
  /* Round after round until killed: FILE.K (K from 0 to 7 in turn) emptied and made 16 MiB
   * long again, unwritten, then 16 writes of 1 MiB into it, queued behind the rounds before
   * (the kernel takes them while the disk's queue has room); the context is drained when it
   * fills up.  Every write in flight is one into unwritten space. */
  enum
  {
    MIB = 1 << 20,
    ROUND = 16,
    EVENTS = 4096
  };
  void *x = NULL;
  aio_context_t ctx = 0;
  if (posix_memalign (&x, 4096, MIB) != 0 || syscall (SYS_io_setup, EVENTS, &ctx) < 0)
    {
      printf ("inflight=%s\n", strerrorname_np (errno));
      return 1;
    }
  memset (x, 'X', MIB);
  int fds[8];
  for (int k = 0; k < 8; k++)
    {
      char name[4096];
      snprintf (name, sizeof name, "%s.%d", file, k);
      fds[k] = open (name, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0666);
      if (fds[k] < 0)
        {
          printf ("inflight=%s\n", strerrorname_np (errno));
          return 1;
        }
    }
  static struct iocb cb[ROUND];
  static struct iocb *list[ROUND];
  long queued = 0;
  for (unsigned round = 0;; round++)
    {
      int fd = fds[round % 8];
      if (fallocate (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)ROUND * MIB) < 0
          || fallocate (fd, 0, 0, (off_t)ROUND * MIB) < 0)
        {
          printf ("inflight=%s\n", strerrorname_np (errno));
          return 1;
        }
      for (int i = 0; i < ROUND; i++)
        {
          cb[i] = (struct iocb){
            .aio_lio_opcode = IOCB_CMD_PWRITE,
            .aio_fildes = (unsigned)fd,
            .aio_buf = (uintptr_t)x,
            .aio_nbytes = MIB,
            .aio_offset = (long long)i * MIB,
          };
          list[i] = &cb[i];
        }
      if (queued + ROUND > EVENTS)
        {
          struct io_event ev[ROUND];
          long got = syscall (SYS_io_getevents, ctx, ROUND, ROUND, ev, NULL);
          if (got > 0)
            queued -= got;
        }
      long sent = syscall (SYS_io_submit, ctx, ROUND, list);
      if (sent > 0)
        queued += sent;
      if (round == 0)
        {
          printf ("inflight=%d\n", unwritten_files (file));
          fflush (stdout);
        }
      if (most > 0 && (long)(round + 1) * ROUND >= most)
        for (;;)
          pause ();
    }
}

/* As many AIO contexts of the largest size the kernel takes as it gives, held until RELEASE
 * exists.  The kernel counts every context's events against one limit for the whole host
 * (fs.aio-max-nr, at most 1048576 taken here: gVisor's kernel sets none). */
static int
aio_take (const char *file)
{
  long took = 0;
  int e = 0;
  for (long size = 32768; size > 0 && e == 0 && took < (1L << 20);)
    {
      aio_context_t ctx = 0;
      if (syscall (SYS_io_setup, size, &ctx) == 0)
        took += size;
      else if (errno == EAGAIN && size > 1)
        size /= 2;
      else
        e = errno;
    }
  char text[128];
  int n = snprintf (text, sizeof text, "took=%ld %s\n", took,
                    e != 0 ? strerrorname_np (e) : "(as many as it asked for)");
  int fd = open (file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write (fd, text, (size_t)n) != n)
    return 1;
  close (fd);
  char release[4096];
  snprintf (release, sizeof release, "%s.release", file);
  while (access (release, F_OK) != 0)
    usleep (100 * 1000);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc >= 2 && strcmp (argv[1], "keys") == 0)
    {
      report ("add_key",
              syscall (SYS_add_key, "user", "bx-sandbox-key", "x", 1, KEY_SPEC_USER_KEYRING));
      report ("keyctl", syscall (SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0));
      report ("request_key", syscall (SYS_request_key, "user", "bx-none", NULL, 0));
      return 0;
    }
  if (argc >= 2 && strcmp (argv[1], "userns") == 0)
    {
      pid_t pid = fork ();
      if (pid == 0)
        _exit (unshare (CLONE_NEWUSER) == 0 ? 0 : errno);
      int status;
      waitpid (pid, &status, 0);
      errno = WEXITSTATUS (status);
      report ("unshare", errno ? -1 : 0);
      static char stack[65536];
      pid = clone (child, stack + sizeof stack, CLONE_NEWUSER | SIGCHLD, NULL);
      report ("clone", pid);
      if (pid > 0)
        waitpid (pid, &status, 0);
      /* clone3 passes its flags in memory, where a seccomp filter cannot read them. */
      struct
      {
        unsigned long long flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
      } args = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
      long r = syscall (SYS_clone3, &args, sizeof args);
      if (r == 0)
        _exit (0);
      report ("clone3", r);
      if (r > 0)
        waitpid ((pid_t)r, &status, 0);
      return 0;
    }
  if (argc >= 3 && strcmp (argv[1], "host-add") == 0)
    {
      long id = syscall (SYS_add_key, "user", argv[2], "host secret", 11, KEY_SPEC_USER_KEYRING);
      if (id < 0)
        return 1;
      printf ("%ld\n", id);
      return 0;
    }
  if (argc >= 3 && strcmp (argv[1], "host-has") == 0)
    {
      char buf[256];
      return syscall (SYS_keyctl, KEYCTL_DESCRIBE, atol (argv[2]), buf, sizeof buf) < 0;
    }
  if (argc >= 3 && strcmp (argv[1], "host-del") == 0)
    return syscall (SYS_keyctl, KEYCTL_UNLINK, atol (argv[2]), KEY_SPEC_USER_KEYRING) < 0;
  if (argc >= 5 && strcmp (argv[1], "swap") == 0)
    {
      char inner[4096], link[4096];
      snprintf (link, sizeof link, "%s.link", argv[2]);
      if (mkdir (argv[2], 0777) < 0 && errno != EEXIST)
        return 1;
      snprintf (inner, sizeof inner, "%s/hooks", argv[2]);
      mkfifo (inner, 0666);
      snprintf (inner, sizeof inner, "%s/config", argv[2]);
      mkfifo (inner, 0666);
      unlink (link);
      if (symlink (argv[3], link) < 0)
        return 1;
      time_t end = time (NULL) + atol (argv[4]);
      unsigned long swaps = 0;
      int failed = 0;
      while (time (NULL) < end)
        if (syscall (SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, link, 2 /* RENAME_EXCHANGE */)
            == 0)
          swaps++;
        else
          failed = errno;
      if (failed != 0)
        printf ("failed=%s\n", strerrorname_np (failed));
      struct stat st;
      if (lstat (argv[2], &st) == 0 && S_ISLNK (st.st_mode))
        syscall (SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, link, 2);
      printf ("swaps=%lu\n", swaps);
      return 0;
    }
  if (argc == 5 && strcmp (argv[1], "overmount") == 0)
    return overmount (argv[2], argv[3], argv[4]);
  if (argc >= 5 && strcmp (argv[1], "stopper") == 0)
    return stopper (atoi (argv[2]), atoi (argv[3]), argv + 4, argc - 4);
  if (argc >= 4 && strcmp (argv[1], "undo") == 0)
    return undo (argv[2], argv + 3, argc - 3);
  if ((argc == 4 || argc == 5) && strcmp (argv[1], "aio") == 0)
    return aio_writes (argv[2], atoi (argv[3]), argc == 5 ? atol (argv[4]) : 0);
  if (argc == 3 && strcmp (argv[1], "aio-take") == 0)
    return aio_take (argv[2]);
  if (argc == 2 && strcmp (argv[1], "aio-one") == 0)
    {
      aio_context_t ctx = 0;
      bool ok = syscall (SYS_io_setup, 1, &ctx) == 0;
      printf ("aio-one=%s\n", ok ? "ok" : strerrorname_np (errno));
      return ok ? 0 : 1;
    }
  if (argc == 4 && strcmp (argv[1], "dwrite") == 0)
    {
      size_t size = (size_t)atol (argv[3]) << 20;
      void *x = NULL;
      int fd = open (argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0666);
      if (fd < 0 || posix_memalign (&x, 4096, size) != 0)
        {
          printf ("dwrite=%s\n", strerrorname_np (errno));
          return 1;
        }
      memset (x, 'X', size);
      char writing[4096];
      snprintf (writing, sizeof writing, "%s.writing", argv[2]);
      int mark = open (writing, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
      if (mark >= 0)
        close (mark);
      ssize_t n = write (fd, x, size);
      if (n < 0)
        printf ("dwrite=%s\n", strerrorname_np (errno));
      else
        printf ("dwrite=%zd\n", n);
      return n < 0;
    }
  if (argc == 3 && strcmp (argv[1], "unwritten") == 0)
    {
      printf ("unwritten=%d\n", unwritten_files (argv[2]));
      return 0;
    }
  fprintf (stderr,
           "usage: probe keys|userns|host-add DESC|host-has ID|host-del ID|swap NAME "
           "TARGET SECS|undo PID PATH...|overmount PID FILE TEXT|stopper SECS MAX PPID...|aio "
           "FILE DEPTH [MIB]|unwritten FILE|aio-take FILE|aio-one|dwrite FILE MIB\n");
  return 2;
}
