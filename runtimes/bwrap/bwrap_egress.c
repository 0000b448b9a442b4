/* SPDX-License-Identifier: Apache-2.0 */
/* http_fetch: toolkit's egress proxy in a sandbox of its own, whose network namespace
 * slirp4netns connects to the outside, and the tool's sandbox, which has no network at all
 * and sees only the proxy's socket in the call's egress folder (bound at /run/egress).
 * Both sandboxes and slirp4netns live in the call's cgroup slot, so they end with it.
 *
 * The egress folders are <egress_dir>/<brokerd pid>-<start time>.XXXXXX, so a later
 * brokerd can remove what a killed one left (bx_bwrap_egress_sweep), and only that. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/contract.h"
#include "bx/deadline.h"
#include "bx/fd.h"

#include "bwrap.h"
#include "host_list.h"
#include "instance.h"
#include "open_nofollow.h"
#include "slirp_ready.h"
#include "egress_records.h"

#define RUNBOOK_POINTER "see docs/runbook.md#runner-unavailable"
/* How long the proxy's sandbox, slirp4netns and the socket may take to come up: generous,
 * since a busy host can take seconds to start them and a failure here fails the call. */
#define START_MS 15000
#define TICK_MS  2
/* How often the proxy's socket is looked for: it comes some milliseconds after the start,
 * so the looks start short and grow to a tick for a proxy that is slow to come. */
#define SOCKET_LOOK_US 250

/* Waits up to a tick for FD to become readable: woken at once when it does, the tick only
 * bounds how late a cancelled call or the deadline is seen (neither has a descriptor). */
static void
tick_on (int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLIN };
  poll (&p, 1, TICK_MS);
}

/* Whether the proxy's start must stop waiting: past DEADLINE, or the call cancelled (its
 * answer must come within a second, not after the start's whole allowance). */
static bool
give_up (const struct bx_host *host, const bx_run_spec *spec, int64_t deadline)
{
  return bx_deadline_left (deadline) == 0 || host->spec_cancelled (spec);
}

/* Whether the process of PIDFD has ended (its pidfd polls readable). */
static bool
ended (int pidfd)
{
  struct pollfd p = { .fd = pidfd, .events = POLLIN };
  return poll (&p, 1, 0) == 1;
}

/* How the proxy's sandbox ended, from the rest of bubblewrap's json status STATUS. */
static char *
how_it_ended (const char *so_far, int status)
{
  char buf[256];
  ssize_t n = read (status, buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  /* The exit code may have come in one read with the start (a proxy that ended at once). */
  cleanup_free char *all = bx_xasprintf ("%s%s", so_far, buf);
  bool started;
  int code = bx_bwrap_status (all, &started);
  return code >= 0 ? bx_xasprintf ("exited with status %d", code)
                   : bx_xstrdup ("ended with no exit status (bubblewrap was killed)");
}

/* What the proxy's sandbox wrote to its stderr (the memfd ERR), on one line for the log:
 * bubblewrap's or toolkit's reason when the proxy did not come up. */
static char *
proxy_said (int err)
{
  char buf[512];
  ssize_t n = err < 0 ? -1 : pread (err, buf, sizeof buf - 1, 0);
  if (n <= 0)
    return bx_xstrdup ("nothing on its stderr");
  buf[n] = '\0';
  for (ssize_t i = 0; i < n; i++)
    if (buf[i] == '\n' || (unsigned char)buf[i] < 0x20)
      buf[i] = ' ';
  return bx_xasprintf ("its stderr: %s", buf);
}

/* Reads bubblewrap's json status until it names the sandbox's first process; what it read
 * stays in BUF (STATUS_READ bytes, NUL-terminated). */
#define STATUS_READ 1024
static pid_t
sandbox_pid (const struct bx_host *host, const bx_run_spec *spec, int status, int64_t deadline,
             char *buf)
{
  size_t len = 0;
  buf[0] = '\0';
  while (!give_up (host, spec, deadline) && len < STATUS_READ - 1)
    {
      ssize_t n = read (status, buf + len, STATUS_READ - 1 - len);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        return -1;
      if (n > 0)
        {
          len += (size_t)n;
          buf[len] = '\0';
          const char *p = strstr (buf, "\"child-pid\":");
          if (p != NULL && strchr (p, ',') != NULL)
            return (pid_t)atol (p + strlen ("\"child-pid\":"));
        }
      else
        tick_on (status);
    }
  return -1;
}

/* Starts the proxy's sandbox and slirp4netns; 0 with both pids, or -1 (logged), or
 * PROXY_ENDED when the proxy's sandbox ended before its socket came (logged as an error when
 * LAST, else as a warning: the caller starts it once more). */
#define PROXY_ENDED 1
static int
start_proxy (struct bx_bwrap_instance *inst, const bx_run_spec *spec, const char *name, size_t slot,
             int dir_fd, const char *dir, bool last, int *proxy, int *slirp)
{
  const struct bx_host *host = inst->host;
  int64_t deadline = bx_deadline_in (START_MS);
  cleanup_free char *allow = bx_runtime_join_hosts (host, spec);
  cleanup_free char *allow_private = bx_runtime_join_private (host, spec);
  cleanup_close int seccomp = bx_bwrap_seccomp_fd (inst->bpf, inst->bpf_len);
  cleanup_close int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  /* The proxy's stderr, kept to say why it did not come up; the sandbox's file size limit
   * bounds it. */
  cleanup_close int err = memfd_create ("bx-egress-stderr", MFD_CLOEXEC);
  int status[2] = { -1, -1 };
  if (seccomp < 0 || null < 0 || err < 0 || pipe2 (status, O_CLOEXEC | O_NONBLOCK) < 0)
    {
      host->log (host, BX_LOG_ERROR, "%s-egress: %s; %s", name, strerror (errno), RUNBOOK_POINTER);
      return -1;
    }
  struct bx_bwrap_call call = {
    .tool = "egress-proxy",
    .seccomp_fd = 3,
    .status_fd = 4,
    .egress_fd = BX_BWRAP_FD_FIRST_EXTRA,
    .egress_writable = true,
    .allow = allow,
    .allow_private = allow_private,
  };
  int fds[] = { seccomp, status[1], dir_fd };
  struct bx_bwrap_child child = {
    .cgroups = inst->cgroups,
    .slot = slot,
    .uid = inst->cfg.uid,
    .gid = inst->cfg.gid,
    .file_size = inst->cfg.file_size,
    .fds = fds,
    .fd_count = 3,
    .mount_first = 2,
    .mount_count = 1,
    .ucounts = &inst->ucounts,
    .deadline = deadline,
  };
  char **argv = bx_bwrap_argv (&inst->cfg, &call);
  *proxy = bx_bwrap_spawn (argv, &child, null, null, err);
  bx_bwrap_argv_free (argv);
  close (status[1]);
  char said_first[STATUS_READ] = "";
  pid_t target = *proxy < 0 ? -1 : sandbox_pid (host, spec, status[0], deadline, said_first);
  cleanup_close int status_rest = status[0];
  if (target < 0 && host->spec_cancelled (spec))
    return -1;
  if (target < 0)
    {
      cleanup_free char *said = proxy_said (err);
      host->log (host, BX_LOG_ERROR, "%s-egress: the proxy's sandbox did not start (%s); %s", name,
                 said, RUNBOOK_POINTER);
      return -1;
    }

  /* The proxy's socket comes once its sandbox is set up and toolkit listens: only then may
   * slirp4netns configure the namespace, whose loopback bubblewrap brings up itself (both
   * at once: bubblewrap fails with "loopback: Failed RTM_NEWADDR").  The tool's sandbox
   * starts only after both, so nothing connects before the way out is there. */
  cleanup_free char *sock = bx_xasprintf ("%s/egress.sock", dir);
  struct stat st;
  long look_us = SOCKET_LOOK_US;
  while (stat (sock, &st) < 0)
    {
      bool gone = ended (*proxy);
      if (gone || give_up (host, spec, deadline))
        {
          if (host->spec_cancelled (spec))
            return -1;
          cleanup_free char *said = proxy_said (err);
          if (gone)
            {
              cleanup_free char *how = how_it_ended (said_first, status_rest);
              host->log (host, last ? BX_LOG_ERROR : BX_LOG_WARNING,
                         "%s-egress: the proxy %s before its socket (%s); %s", name, how, said,
                         last ? RUNBOOK_POINTER : "starting it once more");
              return PROXY_ENDED;
            }
          else
            host->log (host, BX_LOG_ERROR, "%s-egress: no egress socket after %d ms (%s); %s", name,
                       START_MS, said, RUNBOOK_POINTER);
          return -1;
        }
      /* Nothing tells when the socket appears (an inotify watch would, but closing one
       * waits for a grace period of the kernel's, longer than the whole start): short
       * looks, cut short by the proxy's end. */
      struct pollfd p = { .fd = *proxy, .events = POLLIN };
      struct timespec look = { 0, look_us * 1000 };
      ppoll (&p, 1, &look, NULL);
      if (look_us < TICK_MS * 1000)
        look_us *= 2;
    }

  /* slirp4netns joins the proxy's network namespace (as root, like rootful podman's) and
   * says on its ready descriptor when the interface is up.  It must first enter the user
   * namespace that owns that network namespace: the parent of the one the proxy runs in,
   * which bubblewrap nests for --disable-userns. */
  cleanup_free char *ns_path = bx_xasprintf ("/proc/%ld/ns/user", (long)target);
  cleanup_close int inner = open (ns_path, O_RDONLY | O_CLOEXEC);
  cleanup_close int owner = inner < 0 ? -1 : ioctl (inner, NS_GET_PARENT);
  int ready[2];
  if (owner < 0 || pipe2 (ready, O_CLOEXEC | O_NONBLOCK) < 0)
    {
      host->log (host, BX_LOG_ERROR, "%s-egress: the proxy's user namespace: %s; %s", name,
                 strerror (errno), RUNBOOK_POINTER);
      return -1;
    }
  cleanup_free char *pid_text = bx_xasprintf ("%ld", (long)target);
  char *slirp_argv[] = { (char *)inst->cfg.egress_helper,
                         "--configure",
                         "--mtu=65520",
                         "--disable-host-loopback",
                         "--ready-fd=3",
                         "--userns-path=/proc/self/fd/4",
                         pid_text,
                         "tap0",
                         NULL };
  int slirp_fds[] = { ready[1], owner };
  struct bx_bwrap_child helper = {
    .cgroups = inst->cgroups,
    .slot = slot,
    .uid = -1,
    .gid = -1,
    .fds = slirp_fds,
    .fd_count = 2,
    .deadline = deadline,
  };
  *slirp = bx_bwrap_spawn (slirp_argv, &helper, null, null, null);
  if (*slirp >= 0)
    bx_bwrap_cgroups_helper (inst->cgroups, slot, bx_bwrap_pidfd_pid (*slirp));
  close (ready[1]);
  bool up = *slirp >= 0 && bx_slirp_wait_ready (host, spec, ready[0], deadline, TICK_MS);
  close (ready[0]);
  if (!up && host->spec_cancelled (spec))
    return -1;
  if (!up)
    {
      host->log (host, BX_LOG_ERROR, "%s-egress: slirp4netns (%s) did not come up; %s", name,
                 inst->cfg.egress_helper, RUNBOOK_POINTER);
      return -1;
    }
  return 0;
}

enum bx_run_status
bx_bwrap_egress_run (struct bx_bwrap_instance *inst, const bx_run_spec *spec, const char *name,
                     int tool, size_t slot, bx_run_result *result, const char **sentence)
{
  const struct bx_host *host = inst->host;
  /* The proxy takes its hosts as one comma-separated argument: brokerd's config refuses
   * such patterns; this is the module's own guard. */
  for (size_t i = 0; i < host->spec_egress_count (spec); i++)
    {
      const char *h = host->spec_egress_host (spec, i);
      if (h == NULL || h[0] == '\0' || strchr (h, ',') != NULL)
        {
          host->log (host, BX_LOG_ERROR, "%s: cannot pass egress host \"%s\"", name,
                     h ? h : "(null)");
          *sentence = bx_bwrap_sentence_could_not_run;
          return BX_RUN_FAILED;
        }
    }
  *sentence = bx_bwrap_sentence_unavailable;
  /* bubblewrap, as the sandbox's uid, resolves the folder's path again (and checks that it
   * is still the folder of the descriptor), so every folder above it must let that uid
   * pass: hence a folder of the module's own rather than one under brokerd's home. */
  cleanup_free char *dir = bx_xasprintf ("%s/%s.XXXXXX", inst->cfg.egress_dir, inst->name);
  if (mkdtemp (dir) == NULL || chown (dir, (uid_t)inst->cfg.uid, (gid_t)inst->cfg.gid) < 0)
    {
      host->log (host, BX_LOG_ERROR, "%s: cannot make %s: %s; %s", name, dir, strerror (errno),
                 RUNBOOK_POINTER);
      rmdir (dir);
      return BX_RUN_UNAVAILABLE;
    }
  int dir_fd = bx_runtime_open_nofollow (dir);
  int proxy = -1, slirp = -1;
  enum bx_run_status status = BX_RUN_UNAVAILABLE;
  int started
      = dir_fd < 0 ? -1 : start_proxy (inst, spec, name, slot, dir_fd, dir, false, &proxy, &slirp);
  /* A proxy's sandbox that ends before it listens (seen on busy hosts, killed without a
   * word on its stderr) has not let the tool run yet: it gets one more start, in a slot
   * emptied of what the first left.  A second end fails the call. */
  if (started == PROXY_ENDED)
    {
      bx_bwrap_cgroups_kill (inst->cgroups, slot);
      bx_command_reap_pidfd (&proxy, 0);
      unlinkat (dir_fd, "egress.sock", 0);
      unlinkat (dir_fd, BX_EGRESS_RECORDS_FILE, 0);
      started = start_proxy (inst, spec, name, slot, dir_fd, dir, true, &proxy, &slirp);
    }
  if (started == 0)
    status = bx_bwrap_run_tool (inst, spec, name, tool, slot, dir_fd, NULL, result, sentence);
  else if (host->spec_cancelled (spec))
    {
      *sentence = bx_bwrap_sentence_cancelled;
      status = BX_RUN_FAILED;
    }

  /* Whatever happened: the proxy and slirp4netns go, and so does the folder, once the
   * proxy's records are passed on. */
  bx_bwrap_cgroups_kill (inst->cgroups, slot);
  bx_command_reap_pidfd (&proxy, 0);
  /* Killed with the slot and in its exit: its end is not waited for (the keeper reaps it). */
  bx_fd_close (&slirp);
  if (dir_fd >= 0)
    {
      bx_runtime_pass_egress_records (inst->host, dir_fd, name, result);
      unlinkat (dir_fd, BX_EGRESS_RECORDS_FILE, 0);
      close (dir_fd);
    }
  cleanup_free char *sock = bx_xasprintf ("%s/egress.sock", dir);
  unlink (sock);
  rmdir (dir);
  return status;
}

int
bx_bwrap_egress_sweep (const char *root)
{
  int removed = 0;
  DIR *d = opendir (root);
  if (d == NULL)
    return 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      char *dot = strchr (e->d_name, '.');
      if (e->d_name[0] == '.' || dot == NULL)
        continue;
      cleanup_free char *owner = bx_xstrndup (e->d_name, (size_t)(dot - e->d_name));
      if (bx_runtime_instance_alive (owner))
        continue;
      int fd = openat (dirfd (d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0)
        {
          unlinkat (fd, "egress.sock", 0);
          unlinkat (fd, BX_EGRESS_RECORDS_FILE, 0);
          close (fd);
        }
      if (unlinkat (dirfd (d), e->d_name, AT_REMOVEDIR) == 0)
        removed++;
    }
  closedir (d);
  return removed;
}
