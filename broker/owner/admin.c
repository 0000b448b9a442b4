/* SPDX-License-Identifier: Apache-2.0 */
/* The admin socket.  See admin.h. */
#include <errno.h>
#include <fcntl.h>
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
#include "loop.h"
#include "notify.h"
#include "server.h"

#define ADMIN_MODE 0660
/* An owner's request must arrive within this, and what it has not read must move within it. */
#define ADMIN_IO_MS 10000
/* Owners' connections open at once; past this one is refused at once. */
#define ADMIN_MAX_CONNECTIONS 32
/* The most a connection holds of what its reader has not read yet: one largest frame.  A
 * watcher that falls further behind is dropped, so a reader that stops reading costs brokerd
 * a bounded amount of memory and never a blocked loop. */
#define ADMIN_OUTPUT_MAX (BX_FRAME_MAX + 4)
/* A decline's reason: longer is refused (the model sees at most 200 bytes of it anyway). */
#define REASON_MAX 1000
/* The kernel's overflow uid when /proc does not say (kernel.overflowuid). */
#define OVERFLOW_UID_DEFAULT 65534

struct conn;

struct bx_admin
{
  const struct bx_config *config;
  struct bx_approvals *approvals;
  sd_event *loop;
  int fd;
  sd_event_source *accepting; /* the listening socket, on brokerd's loop */
  struct conn *conns;         /* the connections open */
  unsigned open;              /* how many */
  uid_t overflow_uid;         /* never an owner: see peer_is_owner */
};

/* An owner's connection: a source of brokerd's loop that reads one request and writes its
 * answer, or for a `watch` the events until brokerd stops or the reader leaves. */
struct conn
{
  struct bx_admin *admin;
  struct conn *next;
  int fd;
  uid_t uid;
  sd_event_source *io;
  sd_event_source *timer; /* the request's deadline, then the deadline of unread output */
  unsigned char *in;      /* the request as it arrives: header, then body */
  size_t in_len, in_want;
  bool answered;      /* the request was read and answered */
  bool watching;      /* a `watch`: events go out after the answer */
  bool ending;        /* close once the output is out */
  uint64_t seq;       /* a watcher's last event */
  int64_t deadline;   /* for the request, then for unread output to move (bx/deadline.h) */
  unsigned char *out; /* frames not yet taken by the socket */
  size_t out_len, out_off;
};

static void conn_close (struct conn *c);

/* Queues O (taken) as a frame.  What the socket does not take at once waits in the
 * connection's buffer, up to ADMIN_OUTPUT_MAX: a reader that lets more pile up is dropped
 * (logged) rather than hold the loop or brokerd's memory.  False when C was dropped. */
static bool
send_json (struct conn *c, json_t *o)
{
  json_object_set_new (o, "v", json_integer (1));
  cleanup_error bx_error err = NULL;
  cleanup_free unsigned char *frame = NULL;
  size_t len = 0;
  int r = bx_frame_encode (o, &frame, &len, &err);
  json_decref (o);
  if (r < 0)
    {
      bx_log (LOG_WARNING, NULL, "admin socket: cannot answer uid %u: %s", (unsigned)c->uid,
              bx_error_msg (err));
      c->ending = true;
      return true;
    }
  size_t unread = c->out_len - c->out_off;
  if (unread > 0 && unread + len > ADMIN_OUTPUT_MAX)
    {
      bx_log (LOG_WARNING, NULL,
              "admin socket: dropped the watcher of uid %u: it left %zu bytes unread, and the "
              "next frame would pass the %u bytes a connection may hold",
              (unsigned)c->uid, unread, (unsigned)ADMIN_OUTPUT_MAX);
      conn_close (c);
      return false;
    }
  if (unread == 0)
    c->deadline = bx_deadline_in (ADMIN_IO_MS); /* its reader's time starts now */
  if (c->out_off > 0)
    {
      memmove (c->out, c->out + c->out_off, unread);
      c->out_len = unread;
      c->out_off = 0;
    }
  c->out = bx_xrealloc (c->out, c->out_len + len);
  memcpy (c->out + c->out_len, frame, len);
  c->out_len += len;
  return true;
}

static bool
send_error (struct conn *c, const char *detail)
{
  return send_json (c, json_pack ("{s:s, s:s}", "type", "error", "detail", detail));
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

/* The request's fields, strictly: an unknown field or a wrong type is refused, in ERR for
 * the owner. */
static int
check_request (const json_t *req, const char **op, const char **approval, const char **reason,
               bx_error *err)
{
  *op = *approval = *reason = NULL;
  if (json_object_get (req, "v") == NULL)
    return bx_error_setc (err, EINVAL, "missing field \"v\": expected 1");
  const char *key;
  json_t *value;
  json_object_foreach ((json_t *)req, key, value)
  {
    if (strcmp (key, "v") == 0)
      {
        if (!json_is_integer (value) || json_integer_value (value) != 1)
          return bx_error_setc (err, EINVAL, "unsupported version: this brokerd speaks 1");
      }
    else if (strcmp (key, "op") == 0)
      *op = json_string_value (value);
    else if (strcmp (key, "approval") == 0)
      *approval = json_string_value (value);
    else if (strcmp (key, "reason") == 0)
      *reason = json_string_value (value);
    else
      return bx_error_setc (err, EINVAL, "unknown field: expected v, op, approval and reason");
    if (strcmp (key, "v") != 0 && !json_is_string (value))
      return bx_error_setc (err, EINVAL, "op, approval and reason must be strings");
    if (json_is_string (value) && strlen (json_string_value (value)) != json_string_length (value))
      return bx_error_setc (err, EINVAL, "a string holds a NUL character");
  }
  if (*op == NULL)
    return bx_error_setc (err, EINVAL,
                          "missing field \"op\": expected list, watch, approve or decline");
  bool answer = strcmp (*op, "approve") == 0 || strcmp (*op, "decline") == 0;
  if (!answer && strcmp (*op, "list") != 0 && strcmp (*op, "watch") != 0)
    return bx_error_setc (err, EINVAL, "unknown op: expected list, watch, approve or decline");
  if (answer && *approval == NULL)
    return bx_error_setc (err, EINVAL, "missing field \"approval\": expected the approval id");
  if (!answer && *approval != NULL)
    return bx_error_setc (err, EINVAL, "\"approval\" belongs to approve and decline only");
  if (*reason != NULL && strcmp (*op, "decline") != 0)
    return bx_error_setc (err, EINVAL, "\"reason\" belongs to decline only");
  if (*reason != NULL && strlen (*reason) > REASON_MAX)
    return bx_error_setc (err, EINVAL, "the reason is too long: at most 1000 bytes");
  return 0;
}

/* The request FRAME (taken) asks; its answer is queued. */
static void
answer (struct conn *c, json_t *req)
{
  struct bx_approvals *a = c->admin->approvals;
  c->answered = true;
  c->ending = true;
  const char *op, *approval, *reason;
  cleanup_error bx_error why = NULL;
  if (check_request (req, &op, &approval, &reason, &why) < 0 || op == NULL)
    send_error (c, why != NULL ? bx_error_msg (why) : "missing field \"op\"");
  else if (strcmp (op, "list") == 0)
    send_json (c, json_pack ("{s:s, s:o}", "type", "list", "pending", bx_approvals_list (a, NULL)));
  else if (strcmp (op, "watch") == 0)
    {
      /* The list, then every event after it (tell_watchers), for as long as the owner reads. */
      c->watching = true;
      c->ending = false;
      send_json (
          c, json_pack ("{s:s, s:o}", "type", "list", "pending", bx_approvals_list (a, &c->seq)));
    }
  else
    {
      bool approve = strcmp (op, "approve") == 0;
      if (bx_approvals_answer (a, approval, approve, reason, c->uid, &why) < 0)
        send_error (c, bx_error_msg (why));
      else
        send_json (c, json_pack ("{s:s, s:s, s:s}", "type", "done", "approval", approval, "state",
                                 approve ? "approved" : "declined"));
    }
  json_decref (req);
}

/* A request that cannot be read: its reason goes back as bx_frame_read words it, and the
 * connection ends. */
static void
bad_frame (struct conn *c, const char *why)
{
  cleanup_free char *detail = bx_xasprintf ("bad frame: %s", why);
  c->answered = true;
  c->ending = true;
  send_error (c, detail);
}

/* Reads what arrived of the request, without blocking, and answers it once it is whole.
 * False when C was closed. */
static bool
read_request (struct conn *c)
{
  for (;;)
    {
      size_t want = 4 + c->in_want;
      ssize_t n = read (c->fd, c->in + c->in_len, want - c->in_len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return true;
      if (n < 0 || (n == 0 && c->in_len == 0))
        {
          conn_close (c); /* gone before a request: nothing to say */
          return false;
        }
      if (n == 0)
        {
          cleanup_free char *why
              = c->in_len < 4 ? bx_xstrdup ("frame: the peer closed the connection inside a "
                                            "frame header")
                              : bx_xasprintf ("frame: the peer closed the connection inside a "
                                              "frame (%zu of %zu bytes)",
                                              c->in_len - 4, c->in_want);
          bad_frame (c, why);
          return true;
        }
      c->in_len += (size_t)n;
      if (c->in_len == 4 && c->in_want == 0)
        {
          /* The length is decided from the header alone, before the body is allocated. */
          uint32_t len;
          cleanup_error bx_error err = NULL;
          if (bx_frame_length (c->in, &len, &err) < 0)
            {
              bad_frame (c, bx_error_msg (err));
              return true;
            }
          c->in_want = len;
          c->in = bx_xrealloc (c->in, 4 + c->in_want);
        }
      else if (c->in_want > 0 && c->in_len == 4 + c->in_want)
        {
          json_t *req = NULL;
          cleanup_error bx_error err = NULL;
          if (bx_frame_decode (c->in, c->in_len, &req, &err) < 0)
            bad_frame (c, bx_error_msg (err));
          else
            answer (c, req);
          return true;
        }
    }
}

/* Writes what the socket takes now.  False when C was closed: its output is out and it was
 * ending, or the reader is gone. */
static bool
flush (struct conn *c)
{
  while (c->out_off < c->out_len)
    {
      ssize_t n = send (c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return true;
      if (n <= 0)
        {
          conn_close (c);
          return false;
        }
      c->out_off += (size_t)n;
      c->deadline = bx_deadline_in (ADMIN_IO_MS); /* it reads: it gets its time again */
    }
  /* All out: a watcher that once held a large frame does not keep its memory. */
  free (c->out);
  c->out = NULL;
  c->out_len = c->out_off = 0;
  if (c->ending)
    {
      conn_close (c);
      return false;
    }
  return true;
}

/* What C waits for next: its request, room for its output, a watcher's leaving; and until
 * when. */
static void
conn_update (struct conn *c)
{
  bool pending = c->out_len > c->out_off;
  uint32_t events = (!c->answered || c->watching ? EPOLLIN : 0) | (pending ? EPOLLOUT : 0);
  sd_event_source_set_io_events (c->io, events);
  if (!c->answered || pending)
    {
      sd_event_source_set_time (c->timer, (uint64_t)c->deadline * 1000);
      sd_event_source_set_enabled (c->timer, SD_EVENT_ONESHOT);
    }
  else
    sd_event_source_set_enabled (c->timer, SD_EVENT_OFF);
}

/* Flushes C and waits for what comes next, unless it was closed. */
static void
conn_go_on (struct conn *c)
{
  if (flush (c))
    conn_update (c);
}

static int
on_conn_io (sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
  (void)src;
  (void)fd;
  struct conn *c = userdata;
  if (revents & EPOLLERR)
    {
      conn_close (c);
      return 0;
    }
  if (revents & EPOLLIN)
    {
      if (c->watching)
        {
          /* A watcher sends nothing after its request: bytes or an end are its leaving. */
          conn_close (c);
          return 0;
        }
      if (!c->answered && !read_request (c))
        return 0;
    }
  if (revents & EPOLLHUP)
    {
      conn_close (c); /* both ways shut: nobody is left to read an answer */
      return 0;
    }
  conn_go_on (c);
  return 0;
}

static int
on_conn_deadline (sd_event_source *src, uint64_t usec, void *userdata)
{
  (void)src;
  (void)usec;
  struct conn *c = userdata;
  if (!c->answered)
    {
      c->deadline = bx_deadline_in (ADMIN_IO_MS);
      bad_frame (c, "frame: no complete frame before the deadline");
      conn_go_on (c);
      return 0;
    }
  bx_log (LOG_WARNING, NULL,
          "admin socket: dropped the connection of uid %u: it read nothing of its answer for %d "
          "s",
          (unsigned)c->uid, ADMIN_IO_MS / 1000);
  conn_close (c);
  return 0;
}

/* On the loop, when the approvals posted events or finished: each watcher gets what is new,
 * or ends once brokerd stopped and it has everything. */
static void
tell_watchers (void *ctx)
{
  struct bx_admin *admin = ctx;
  struct conn *next;
  for (struct conn *c = admin->conns; c != NULL; c = next)
    {
      next = c->next;
      if (!c->watching || c->ending)
        continue;
      json_t *events = bx_approvals_events (admin->approvals, &c->seq);
      if (events == NULL)
        c->ending = true;
      bool open = true;
      size_t i;
      json_t *ev;
      json_array_foreach (events, i, ev)
      {
        open = send_json (c, json_incref (ev));
        if (!open)
          break;
      }
      json_decref (events);
      if (open)
        conn_go_on (c);
    }
}

static void
conn_close (struct conn *c)
{
  struct bx_admin *admin = c->admin;
  for (struct conn **link = &admin->conns; *link != NULL; link = &(*link)->next)
    if (*link == c)
      {
        *link = c->next;
        break;
      }
  sd_event_source_disable_unref (c->io);
  sd_event_source_disable_unref (c->timer);
  close (c->fd);
  free (c->in);
  free (c->out);
  free (c);
  admin->open--;
  bx_approvals_leave (admin->approvals);
}

/* Refuses FD with DETAIL and closes it.  The frame is small and the connection fresh: its
 * socket buffer takes it at once, or it is not sent. */
static void
refuse (int fd, const char *detail)
{
  json_t *o = json_pack ("{s:s, s:s, s:i}", "type", "error", "detail", detail, "v", 1);
  cleanup_free unsigned char *frame = NULL;
  size_t len = 0;
  cleanup_error bx_error err = NULL;
  if (bx_frame_encode (o, &frame, &len, &err) == 0)
    (void)send (fd, frame, len, MSG_NOSIGNAL);
  json_decref (o);
  close (fd);
}

/* A new owner's connection, taken by brokerd's loop and served there: it never blocks, so
 * no owner holds up the loop, another owner or a call. */
static int
on_accept (sd_event_source *src, int listen_fd, uint32_t revents, void *userdata)
{
  (void)src;
  (void)revents;
  struct bx_admin *admin = userdata;
  int fd = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0)
    return 0; /* gone before it was taken, or out of descriptors: the next one is tried */
  uid_t uid = (uid_t)-1;
  if (!peer_is_owner (admin, fd, &uid))
    {
      refuse (fd, "not allowed: this socket is for the owners in the admin group");
      return 0;
    }
  if (admin->open >= ADMIN_MAX_CONNECTIONS)
    {
      refuse (fd, "too many admin connections");
      return 0;
    }
  if (!bx_approvals_enter (admin->approvals))
    {
      refuse (fd, "brokerd is stopping");
      return 0;
    }
  struct conn *c = bx_xzalloc (sizeof *c);
  c->admin = admin;
  c->fd = fd;
  c->uid = uid;
  c->in = bx_xmalloc (4);
  c->deadline = bx_deadline_in (ADMIN_IO_MS);
  c->next = admin->conns;
  admin->conns = c;
  admin->open++;
  int r = sd_event_add_io (admin->loop, &c->io, fd, EPOLLIN, on_conn_io, c);
  if (r >= 0)
    r = sd_event_add_time (admin->loop, &c->timer, CLOCK_MONOTONIC, 0, BX_LOOP_ACCURACY_US,
                           on_conn_deadline, c);
  if (r < 0)
    {
      bx_log (LOG_WARNING, NULL, "admin socket: cannot serve a connection: %s", strerror (-r));
      conn_close (c);
      return 0;
    }
  conn_update (c);
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
  admin->loop = loop;
  admin->fd = fd;
  admin->overflow_uid = overflow_uid ();
  /* Only the loop accepts: a connection gone between its wake-up and accept() must not
   * block it. */
  int r = fcntl (fd, F_SETFL, O_NONBLOCK) < 0 ? -errno : 0;
  if (r == 0)
    r = sd_event_add_io (loop, &admin->accepting, fd, EPOLLIN, on_accept, admin);
  if (r < 0)
    {
      unlink (cfg->admin_socket);
      free (admin);
      return bx_error_set (err, -r, "admin socket %s: cannot serve it", cfg->admin_socket);
    }
  fd = -1;
  bx_approvals_on_events (approvals, tell_watchers, admin);
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
  for (struct conn *c = admin->conns, *next; c != NULL; c = next)
    {
      next = c->next;
      conn_close (c);
    }
  bx_approvals_on_events (admin->approvals, NULL, NULL);
  free (admin);
}
