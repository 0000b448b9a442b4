/* SPDX-License-Identifier: Apache-2.0 */
/* The admin socket.  See admin.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"

#include "admin.h"
#include "notify.h"
#include "server.h"

#define ADMIN_MODE 0660
/* An owner's request must arrive within this; an answer must be read within it. */
#define ADMIN_IO_MS 10000
/* Owners' connections open at once; past this one is refused at once. */
#define ADMIN_MAX_CONNECTIONS 32
/* How often a `watch` connection looks whether its reader left while nothing happens. */
#define WATCH_TICK_MS 1000
/* A decline's reason: longer is refused (the model sees at most 200 bytes of it anyway). */
#define REASON_MAX 1000
/* The kernel's overflow uid when /proc does not say (kernel.overflowuid). */
#define OVERFLOW_UID_DEFAULT 65534

struct bx_admin
{
  const struct bx_config *config;
  struct bx_approvals *approvals;
  int fd;
  sd_event_source *accepting; /* the listening socket, on brokerd's loop */
  pthread_mutex_t lock;
  unsigned open;      /* connections being served */
  uid_t overflow_uid; /* never an owner: see peer_is_owner */
};

struct conn
{
  struct bx_admin *admin;
  int fd;
  uid_t uid;
};

static int
send_json (int fd, json_t *o)
{
  json_object_set_new (o, "v", json_integer (1));
  cleanup_error bx_error err = NULL;
  int r = bx_frame_write (fd, o, bx_deadline_in (ADMIN_IO_MS), &err);
  json_decref (o);
  return r;
}

static void
send_error (int fd, const char *detail)
{
  send_json (fd, json_pack ("{s:s, s:s}", "type", "error", "detail", detail));
}

/* Whether UID is one a sandbox may run as, and so never an owner, whatever its groups:
 * brokerd's own uid when brokerd is not root (an unprivileged brokerd's sandboxes run as it,
 * bwrap.so's, or in user namespaces made from it, rootless podman's, and may keep its groups,
 * the admin group included), and the overflow uid (bwrap.so's default sandbox uid, and what
 * an unmapped uid shows as).  A file a sandbox left setuid runs as its uid: such a uid must
 * not approve. */
static bool
sandbox_uid (const struct bx_admin *admin, uid_t uid)
{
  return (uid == geteuid () && uid != 0) || uid == admin->overflow_uid;
}

/* Whether the peer of FD may act as an owner: root, or a member of the admin group (its
 * primary group or one of its supplementary groups) whose uid no sandbox may run as.  Other
 * sandbox uids (bwrap.so's `uid` option, rootful podman's mapped ranges) are never to be
 * given the admin group (docs/security.md). */
static bool
peer_is_owner (const struct bx_admin *admin, int fd, uid_t *uid)
{
  gid_t admin_gid = (gid_t)admin->config->admin_gid;
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
    return false;
  *uid = cred.uid;
  if (cred.uid == 0)
    return true;
  if (sandbox_uid (admin, cred.uid))
    return false;
  if (cred.gid == admin_gid)
    return true;
  gid_t groups[256];
  socklen_t glen = sizeof groups;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) < 0)
    return false;
  for (size_t i = 0; i < glen / sizeof (gid_t); i++)
    if (groups[i] == admin_gid)
      return true;
  return false;
}

/* The kernel's overflow uid. */
static uid_t
overflow_uid (void)
{
  cleanup_fclose FILE *f = fopen ("/proc/sys/kernel/overflowuid", "re");
  unsigned long v;
  if (f == NULL || fscanf (f, "%lu", &v) != 1)
    return OVERFLOW_UID_DEFAULT;
  return (uid_t)v;
}

/* The request's fields, strictly: an unknown field or a wrong type is refused. */
static const char *
check_request (const json_t *req, const char **op, const char **approval, const char **reason)
{
  *op = *approval = *reason = NULL;
  if (json_object_get (req, "v") == NULL)
    return "missing field \"v\": expected 1";
  const char *key;
  json_t *value;
  json_object_foreach ((json_t *)req, key, value)
  {
    if (strcmp (key, "v") == 0)
      {
        if (!json_is_integer (value) || json_integer_value (value) != 1)
          return "unsupported version: this brokerd speaks 1";
      }
    else if (strcmp (key, "op") == 0)
      *op = json_string_value (value);
    else if (strcmp (key, "approval") == 0)
      *approval = json_string_value (value);
    else if (strcmp (key, "reason") == 0)
      *reason = json_string_value (value);
    else
      return "unknown field: expected v, op, approval and reason";
    if (strcmp (key, "v") != 0 && !json_is_string (value))
      return "op, approval and reason must be strings";
    if (json_is_string (value) && strlen (json_string_value (value)) != json_string_length (value))
      return "a string holds a NUL character";
  }
  if (*op == NULL)
    return "missing field \"op\": expected list, watch, approve or decline";
  bool answer = strcmp (*op, "approve") == 0 || strcmp (*op, "decline") == 0;
  if (!answer && strcmp (*op, "list") != 0 && strcmp (*op, "watch") != 0)
    return "unknown op: expected list, watch, approve or decline";
  if (answer && *approval == NULL)
    return "missing field \"approval\": expected the approval id";
  if (!answer && *approval != NULL)
    return "\"approval\" belongs to approve and decline only";
  if (*reason != NULL && strcmp (*op, "decline") != 0)
    return "\"reason\" belongs to decline only";
  if (*reason != NULL && strlen (*reason) > REASON_MAX)
    return "the reason is too long: at most 1000 bytes";
  return NULL;
}

static void
serve_watch (struct conn *c)
{
  struct bx_approvals *a = c->admin->approvals;
  uint64_t seq = 0;
  json_t *list = bx_approvals_list (a, &seq);
  if (send_json (c->fd, json_pack ("{s:s, s:o}", "type", "list", "pending", list)) < 0)
    return;
  for (;;)
    {
      json_t *events = bx_approvals_events (a, &seq, WATCH_TICK_MS);
      if (events == NULL)
        return; /* brokerd is stopping */
      size_t i;
      json_t *ev;
      json_array_foreach (events, i, ev)
      {
        if (send_json (c->fd, json_incref (ev)) < 0)
          {
            json_decref (events);
            return;
          }
      }
      json_decref (events);
      /* The reader left?  It sends nothing after its request. */
      struct pollfd p = { .fd = c->fd, .events = POLLIN };
      if (poll (&p, 1, 0) > 0)
        return;
    }
}

static void
serve_owner (struct conn *c)
{
  json_t *req = NULL;
  cleanup_error bx_error err = NULL;
  if (bx_frame_read (c->fd, bx_deadline_in (ADMIN_IO_MS), &req, &err) < 0)
    {
      if (bx_error_code (err) != BX_FRAME_CLOSED)
        {
          cleanup_free char *detail = bx_xasprintf ("bad frame: %s", bx_error_msg (err));
          send_error (c->fd, detail);
        }
      return;
    }
  const char *op, *approval, *reason;
  const char *why = check_request (req, &op, &approval, &reason);
  if (why != NULL)
    send_error (c->fd, why);
  else if (strcmp (op, "list") == 0)
    send_json (c->fd, json_pack ("{s:s, s:o}", "type", "list", "pending",
                                 bx_approvals_list (c->admin->approvals, NULL)));
  else if (strcmp (op, "watch") == 0)
    serve_watch (c);
  else
    {
      bool approve = strcmp (op, "approve") == 0;
      if (bx_approvals_answer (c->admin->approvals, approval, approve, reason, c->uid, &why) < 0)
        send_error (c->fd, why);
      else
        send_json (c->fd, json_pack ("{s:s, s:s, s:s}", "type", "done", "approval", approval,
                                     "state", approve ? "approved" : "declined"));
    }
  json_decref (req);
}

static void *
conn_main (void *arg)
{
  struct conn *c = arg;
  struct bx_admin *admin = c->admin;
  struct bx_approvals *approvals = admin->approvals;
  serve_owner (c);
  close (c->fd);
  free (c);
  pthread_mutex_lock (&admin->lock);
  admin->open--;
  pthread_mutex_unlock (&admin->lock);
  /* Last: once this returns, stop may free ADMIN's memory. */
  bx_approvals_leave (approvals);
  return NULL;
}

/* Refuses FD with DETAIL and closes it.  The frame is small and the connection fresh: its
 * socket buffer takes it at once, so the loop is not held up. */
static void
refuse (int fd, const char *detail)
{
  send_error (fd, detail);
  close (fd);
}

/* A new owner's connection, taken by brokerd's loop.  What it asks may block (a `watch`
 * streams for as long as the owner reads), so each is served by a thread of its own. */
static int
on_accept (sd_event_source *src, int listen_fd, uint32_t revents, void *userdata)
{
  (void)src;
  (void)revents;
  struct bx_admin *admin = userdata;
  int fd = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC);
  if (fd < 0)
    return 0; /* gone before it was taken, or out of descriptors: the next one is tried */
  uid_t uid = (uid_t)-1;
  if (!peer_is_owner (admin, fd, &uid))
    {
      refuse (fd, "not allowed: this socket is for the owners in the admin group");
      return 0;
    }
  pthread_mutex_lock (&admin->lock);
  bool full = admin->open >= ADMIN_MAX_CONNECTIONS;
  if (!full)
    admin->open++;
  pthread_mutex_unlock (&admin->lock);
  if (full || !bx_approvals_enter (admin->approvals))
    {
      if (!full)
        {
          pthread_mutex_lock (&admin->lock);
          admin->open--;
          pthread_mutex_unlock (&admin->lock);
        }
      refuse (fd, full ? "too many admin connections" : "brokerd is stopping");
      return 0;
    }
  struct conn *c = bx_xzalloc (sizeof *c);
  c->admin = admin;
  c->fd = fd;
  c->uid = uid;
  pthread_attr_t attr;
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  int r = pthread_create (&t, &attr, conn_main, c);
  pthread_attr_destroy (&attr);
  if (r != 0)
    {
      refuse (fd, "brokerd cannot serve the connection now");
      free (c);
      pthread_mutex_lock (&admin->lock);
      admin->open--;
      pthread_mutex_unlock (&admin->lock);
      bx_approvals_leave (admin->approvals);
    }
  return 0;
}

int
bx_admin_start (const struct bx_config *cfg, sd_event *loop, struct bx_approvals *approvals,
                struct bx_admin **out, bx_error *err)
{
  /* The agents reach the callers' socket through its group; that group must not approve. */
  struct stat st;
  if (stat (cfg->socket, &st) == 0 && st.st_gid == (gid_t)cfg->admin_gid)
    return bx_error_setc (err, EPERM,
                          "admin_group %u is also the group of the callers' socket %s: an "
                          "agent could approve its own calls; expected a group of its own",
                          cfg->admin_gid, cfg->socket);
  cleanup_close int fd = -1;
  if (bx_server_listen_at (cfg->admin_socket, ADMIN_MODE, &fd, err) < 0)
    return -1;
  if (chown (cfg->admin_socket, (uid_t)-1, (gid_t)cfg->admin_gid) < 0)
    {
      int e = errno;
      unlink (cfg->admin_socket);
      return bx_error_set (err, e, "admin socket %s: cannot give it the group %u",
                           cfg->admin_socket, cfg->admin_gid);
    }
  struct bx_admin *admin = bx_xzalloc (sizeof *admin);
  admin->config = cfg;
  admin->approvals = approvals;
  admin->fd = fd;
  admin->overflow_uid = overflow_uid ();
  pthread_mutex_init (&admin->lock, NULL);
  /* Only the loop accepts: a connection gone between its wake-up and accept() must not
   * block it. */
  int r = fcntl (fd, F_SETFL, O_NONBLOCK) < 0 ? -errno : 0;
  if (r == 0)
    r = sd_event_add_io (loop, &admin->accepting, fd, EPOLLIN, on_accept, admin);
  if (r < 0)
    {
      unlink (cfg->admin_socket);
      pthread_mutex_destroy (&admin->lock);
      free (admin);
      return bx_error_set (err, -r, "admin socket %s: cannot serve it", cfg->admin_socket);
    }
  fd = -1;
  *out = admin;
  return 0;
}

void
bx_admin_stop (struct bx_admin *admin)
{
  if (admin == NULL)
    return;
  if (admin->accepting == NULL)
    return;
  admin->accepting = sd_event_source_disable_unref (admin->accepting);
  if (unlink (admin->config->admin_socket) < 0 && errno != ENOENT)
    bx_log (LOG_WARNING, NULL, "cannot remove %s: %s", admin->config->admin_socket,
            strerror (errno));
  close (admin->fd);
  admin->fd = -1;
}

void
bx_admin_free (struct bx_admin *admin)
{
  if (admin == NULL)
    return;
  pthread_mutex_destroy (&admin->lock);
  free (admin);
}
