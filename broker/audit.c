/* SPDX-License-Identifier: Apache-2.0 */
/* The audit log.  See audit.h. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bx/audit_chain.h"
#include "bx/cleanup.h"

#include "audit.h"
#include "config.h"
#include "peers.h"
#include "policy.h"

struct bx_audit
{
  pthread_mutex_t lock;
  int fd;                           /* -1 when a reopen failed: every write fails */
  int open_errno;                   /* why it failed */
  bool owned;                       /* false for standard error */
  char *path;                       /* NULL for standard error */
  char prev[BX_AUDIT_HASH_HEX + 1]; /* the hash of the last line written */
};

static int
open_log (const char *path, int *out, bx_error *err)
{
  /* O_RDWR, not O_WRONLY: the chain's head is read back from the file's end. */
  int fd = open (path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0)
    return bx_error_set (err, errno, "cannot open the audit log %s", path);
  *out = fd;
  return 0;
}

/* Where the chain goes on: the last line of PATH, else of PATH.1, else a new chain. */
static int
chain_head (const char *path, int fd, char prev[BX_AUDIT_HASH_HEX + 1], bx_error *err)
{
  int r = bx_audit_last_hash (fd, prev, err);
  if (r <= 0)
    return r < 0 ? bx_error_wrap (err, "%s", path) : 0;
  cleanup_free char *rotated = bx_xasprintf ("%s.1", path);
  cleanup_close int old = open (rotated, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (old >= 0)
    {
      r = bx_audit_last_hash (old, prev, err);
      if (r < 0)
        return bx_error_wrap (err, "%s", rotated);
      if (r == 0)
        return 0;
    }
  memcpy (prev, BX_AUDIT_CHAIN_START, sizeof BX_AUDIT_CHAIN_START);
  return 0;
}

int
bx_audit_open (const char *dest, struct bx_audit **out, bx_error *err)
{
  int fd = STDERR_FILENO;
  bool owned = false;
  char prev[BX_AUDIT_HASH_HEX + 1];
  memcpy (prev, BX_AUDIT_CHAIN_START, sizeof BX_AUDIT_CHAIN_START);
  if (strcmp (dest, "stderr") != 0)
    {
      if (open_log (dest, &fd, err) < 0)
        return -1;
      if (chain_head (dest, fd, prev, err) < 0)
        {
          close (fd);
          return -1;
        }
      owned = true;
    }
  struct bx_audit *a = bx_xzalloc (sizeof *a);
  pthread_mutex_init (&a->lock, NULL);
  a->fd = fd;
  a->owned = owned;
  a->path = owned ? bx_xstrdup (dest) : NULL;
  memcpy (a->prev, prev, sizeof prev);
  *out = a;
  return 0;
}

int
bx_audit_reopen (struct bx_audit *a, bx_error *err)
{
  if (!a->owned)
    return 0;
  int fd = -1;
  int r = open_log (a->path, &fd, err);
  pthread_mutex_lock (&a->lock);
  if (a->fd >= 0)
    close (a->fd);
  a->fd = fd;
  a->open_errno = r < 0 ? bx_error_code (*err) : 0;
  pthread_mutex_unlock (&a->lock);
  return r;
}

void
bx_audit_set_peer (struct bx_audit_record *r, int fd)
{
  uid_t uid;
  pid_t pid;
  bool known = bx_peer_cred (fd, &uid, &pid) == 0;
  bx_audit_set_peer_ids (r, known ? uid : (uid_t)-1, known ? pid : (pid_t)-1);
}

void
bx_audit_set_peer_ids (struct bx_audit_record *r, uid_t uid, pid_t pid)
{
  r->uid = uid == (uid_t)-1 ? -1 : (long long)uid;
  r->pid = pid == (pid_t)-1 ? -1 : (long long)pid;
}

void
bx_audit_set_args (struct bx_audit_record *r, const struct bx_tool_args *args)
{
  r->arg_path = args->path;
  r->arg_cwd = args->cwd;
  free (r->owned_command);
  free (r->owned_host);
  r->owned_command = args->command ? bx_audit_cut_command (args->command) : NULL;
  r->arg_command = r->owned_command;
  r->owned_host = NULL;
  const char *why = NULL;
  unsigned port; /* the host is what the line names */
  if (args->url != NULL && bx_fetch_url_host (args->url, &r->owned_host, &port, &why) < 0)
    r->owned_host = NULL;
  r->arg_host = r->owned_host;
}

void
bx_audit_record_clear (struct bx_audit_record *r)
{
  free (r->owned_command);
  free (r->owned_host);
  r->owned_command = r->owned_host = NULL;
  r->arg_command = r->arg_host = NULL;
}

char *
bx_audit_cut_command (const char *command)
{
  size_t cut = strlen (command);
  if (cut > BX_AUDIT_COMMAND_MAX)
    {
      cut = BX_AUDIT_COMMAND_MAX;
      while (cut > 0 && ((unsigned char)command[cut] & 0xc0) == 0x80)
        cut--;
    }
  return bx_xstrndup (command, cut);
}

static json_t *
string_or_null (const char *s)
{
  return s ? json_string (s) : json_null ();
}

char *
bx_audit_format (const struct bx_audit_record *r, int64_t time_ms)
{
  time_t secs = (time_t)(time_ms / 1000);
  struct tm tm;
  gmtime_r (&secs, &tm);
  char when[40];
  size_t n = strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (when + n, sizeof when - n, ".%03dZ", (int)(time_ms % 1000));

  json_t *o = json_object ();
  json_object_set_new (o, "time", json_string (when));
  json_object_set_new (o, "session", string_or_null (r->session));
  json_object_set_new (o, "call", string_or_null (r->call));
  json_object_set_new (o, "tool", string_or_null (r->tool));
  json_object_set_new (o, "uid", r->uid >= 0 ? json_integer (r->uid) : json_null ());
  json_object_set_new (o, "pid", r->pid >= 0 ? json_integer (r->pid) : json_null ());
  json_t *args = json_object ();
  if (r->arg_path)
    json_object_set_new (args, "path", json_string (r->arg_path));
  if (r->arg_cwd)
    json_object_set_new (args, "cwd", json_string (r->arg_cwd));
  if (r->arg_command)
    json_object_set_new (args, "command", json_string (r->arg_command));
  if (r->arg_host)
    json_object_set_new (args, "host", json_string (r->arg_host));
  json_object_set_new (o, "args", args);
  json_object_set_new (o, "grant", r->grant > 0 ? json_integer (r->grant) : json_null ());
  json_object_set_new (o, "decision", string_or_null (r->decision));
  json_object_set_new (o, "reason", string_or_null (r->reason));
  json_object_set_new (o, "outcome", string_or_null (r->outcome));
  json_object_set_new (o, "duration_ms", json_integer (r->duration_ms));
  json_object_set_new (o, "output_bytes", json_integer ((json_int_t)r->output_bytes));
  json_object_set_new (o, "truncated", json_boolean (r->truncated));
  if (r->content_bytes >= 0)
    json_object_set_new (o, "content_bytes", json_integer ((json_int_t)r->content_bytes));
  if (r->approval != NULL)
    json_object_set_new (o, "approval",
                         json_pack ("{s:s, s:s, s:o, s:I}", "id", r->approval->id, "state",
                                    r->approval->state, "approver_uid",
                                    r->approval->approver_uid >= 0
                                        ? json_integer (r->approval->approver_uid)
                                        : json_null (),
                                    "waited_ms", (json_int_t)r->approval->waited_ms));
  if (r->egress != NULL)
    json_object_set (o, "egress", (json_t *)r->egress);
  if (r->n_allow_private > 0)
    {
      json_t *ranges = json_array ();
      for (size_t i = 0; i < r->n_allow_private; i++)
        json_array_append_new (ranges, json_string (r->allow_private[i]));
      json_object_set_new (o, "allow_private", ranges);
    }
  if (r->image != NULL)
    json_object_set_new (o, "image", json_string (r->image));
  if (r->rootfs != NULL)
    json_object_set_new (o, "rootfs", json_string (r->rootfs));
  /* Strings from a client are valid UTF-8 (jansson checked them); a NULL here can only be
   * an allocation failure. */
  char *line = json_dumps (o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref (o);
  if (line == NULL)
    bx_out_of_memory ();
  return line;
}

/* Writes all of LINE (LEN bytes) at the end of A's file, or cuts off what got there. */
static int
append (struct bx_audit *a, const char *line, size_t len)
{
  if (a->fd < 0)
    {
      /* Say why, as a failed write would: the log's owner reads it. */
      errno = a->open_errno ? a->open_errno : EBADF;
      return -1;
    }
  size_t done = 0;
  while (done < len)
    {
      ssize_t w = write (a->fd, line + done, len - done);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        {
          /* A full disk took part of the line: cut it off, so the file holds whole lines
           * and the next line still chains from the last whole one.  Only brokerd writes
           * the file, under A's lock: the line started DONE bytes before the end. */
          int e = errno;
          off_t end = done > 0 && a->owned ? lseek (a->fd, 0, SEEK_END) : -1;
          if (w == 0)
            e = ENOSPC;
          if (end >= (off_t)done && ftruncate (a->fd, end - (off_t)done) < 0)
            e = errno;
          errno = e;
          return -1;
        }
      done += (size_t)w;
    }
  return 0;
}

int
bx_audit_write (struct bx_audit *a, const struct bx_audit_record *r)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  cleanup_free char *body = bx_audit_format (r, now);
  size_t n = strlen (body);
  /* "...}" becomes "...,"prev":"<hash>"}\n", one write, so O_APPEND keeps lines whole. */
  size_t len = n - 1 + sizeof ",\"prev\":\"\"}\n" - 1 + BX_AUDIT_HASH_HEX;
  cleanup_free char *line = bx_xmalloc (len + 1);
  memcpy (line, body, n - 1);
  pthread_mutex_lock (&a->lock);
  snprintf (line + n - 1, len + 1 - (n - 1), ",\"prev\":\"%s\"}\n", a->prev);
  int rc = append (a, line, len);
  if (rc == 0)
    bx_audit_hash (line, len - 1, a->prev);
  pthread_mutex_unlock (&a->lock);
  return rc;
}

void
bx_audit_close (struct bx_audit *a)
{
  if (a == NULL)
    return;
  if (a->owned && a->fd >= 0)
    close (a->fd);
  free (a->path);
  pthread_mutex_destroy (&a->lock);
  free (a);
}

void
bx_audit_grant_reach (struct bx_audit_record *r, const struct bx_grant *g, int tool)
{
  bool online = tool == BX_TOOL_HTTP_FETCH || (tool == BX_TOOL_SHELL && g->n_hosts > 0);
  if (online)
    {
      r->allow_private = (const char *const *)g->private_ranges;
      r->n_allow_private = g->n_private;
    }
  if (tool != BX_TOOL_HTTP_FETCH)
    {
      r->image = g->image;
      r->rootfs = g->rootfs;
    }
}
