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
#include "bx/json_text.h"

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

/* The "arguments" of an mcp_call's REQUEST (brokerd's own JSON), compact and cut; NULL when
 * it holds none. */
static char *
mcp_arguments (const char *request)
{
  json_t *req = json_loads (request, 0, NULL);
  json_t *arguments = json_object_get (json_object_get (req, "params"), "arguments");
  char *text = arguments != NULL ? json_dumps (arguments, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  json_decref (req);
  if (text == NULL)
    return NULL;
  char *cut = bx_audit_cut_command (text);
  free (text);
  return cut;
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
  bx_sentence why;
  unsigned port; /* the host is what the line names */
  if (args->url != NULL && bx_fetch_url_host (args->url, &r->owned_host, &port, &why) < 0)
    r->owned_host = NULL;
  r->arg_host = r->owned_host;
  free (r->owned_arguments);
  r->owned_arguments = args->request != NULL ? mcp_arguments (args->request) : NULL;
  r->arg_arguments = r->owned_arguments;
}

void
bx_audit_record_clear (struct bx_audit_record *r)
{
  free (r->owned_command);
  free (r->owned_host);
  free (r->owned_arguments);
  r->owned_command = r->owned_host = r->owned_arguments = NULL;
  r->arg_command = r->arg_host = r->arg_arguments = NULL;
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

/* The line is written out directly (bx/json_text.h): building a jansson object for it and
 * dumping that cost about 3 us a line, twice per call. */
/* TIME_MS (Unix time in ms) as RFC 3339 in UTC with milliseconds.  Every call writes two
 * lines, most within the same second as the thread's last: the date and time of day are
 * kept per thread for their second, and only the milliseconds are written each time. */
static void
format_time (char when[64], int64_t time_ms)
{
  static _Thread_local int64_t cached_secs;
  static _Thread_local char cached[48]; /* "YYYY-MM-DDTHH:MM:SS", or "" before the first */
  static _Thread_local size_t cached_len;
  int64_t secs = time_ms / 1000;
  int ms = (int)(time_ms % 1000);
  if (ms < 0)
    {
      secs--;
      ms += 1000;
    }
  if (cached_len == 0 || secs != cached_secs)
    {
      time_t t = (time_t)secs;
      struct tm tm;
      gmtime_r (&t, &tm);
      int n = snprintf (cached, sizeof cached, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
      cached_len = n > 0 && (size_t)n < sizeof cached ? (size_t)n : 0;
      cached_secs = secs;
    }
  memcpy (when, cached, cached_len);
  char *p = when + cached_len;
  *p++ = '.';
  *p++ = (char)('0' + ms / 100);
  *p++ = (char)('0' + ms / 10 % 10);
  *p++ = (char)('0' + ms % 10);
  *p++ = 'Z';
  *p = '\0';
}

char *
bx_audit_format (const struct bx_audit_record *r, int64_t time_ms)
{
  char when[64];
  format_time (when, time_ms);

  struct bx_json_text t;
  bx_json_text_open (&t);
  /* The model writes paths, names and arguments: none may steer the owner's terminal. */
  t.escape_invisible = true;
  bx_json_text_string (&t, "time", when);
  bx_json_text_string (&t, "session", r->session);
  bx_json_text_string (&t, "call", r->call);
  bx_json_text_string (&t, "tool", r->tool);
  bx_json_text_int_or_null (&t, "uid", r->uid);
  bx_json_text_int_or_null (&t, "pid", r->pid);
  if (r->peer != NULL)
    bx_json_text_string (&t, "peer", r->peer);
  bx_json_text_begin (&t, "args");
  if (r->arg_path)
    bx_json_text_string (&t, "path", r->arg_path);
  if (r->arg_cwd)
    bx_json_text_string (&t, "cwd", r->arg_cwd);
  if (r->arg_command)
    bx_json_text_string (&t, "command", r->arg_command);
  if (r->arg_arguments)
    bx_json_text_string (&t, "arguments", r->arg_arguments);
  if (r->arg_host)
    bx_json_text_string (&t, "host", r->arg_host);
  bx_json_text_end (&t);
  bx_json_text_int_or_null (&t, "grant", r->grant > 0 ? (long long)r->grant : -1);
  bx_json_text_string (&t, "decision", bx_call_decision_name (r->decision));
  bx_json_text_string (&t, "reason", r->reason);
  bx_json_text_string (&t, "outcome", bx_outcome_name (r->outcome));
  bx_json_text_int (&t, "duration_ms", r->duration_ms);
  bx_json_text_int (&t, "output_bytes", (long long)r->output_bytes);
  bx_json_text_bool (&t, "truncated", r->truncated);
  if (r->content_bytes >= 0)
    bx_json_text_int (&t, "content_bytes", (long long)r->content_bytes);
  if (r->approval != NULL)
    {
      bx_json_text_begin (&t, "approval");
      bx_json_text_string (&t, "id", r->approval->id);
      bx_json_text_string (&t, "state", bx_approval_state_name (r->approval->state));
      bx_json_text_int_or_null (&t, "approver_uid", r->approval->approver_uid);
      bx_json_text_int (&t, "waited_ms", r->approval->waited_ms);
      if (r->approval->approved_at_ms > 0)
        {
          char approved[64];
          format_time (approved, r->approval->approved_at_ms);
          bx_json_text_string (&t, "approved_at", approved);
        }
      bx_json_text_end (&t);
    }
  if (r->egress != NULL)
    {
      /* The proxy's records, as it wrote them: rare, and already JSON. */
      char *egress = json_dumps ((const json_t *)r->egress, JSON_COMPACT | JSON_PRESERVE_ORDER);
      if (egress == NULL)
        bx_out_of_memory ();
      bx_json_text_raw (&t, "egress", egress);
      free (egress);
    }
  if (r->n_allow_private > 0)
    bx_json_text_strings (&t, "allow_private", r->allow_private, r->n_allow_private);
  if (r->image != NULL)
    bx_json_text_string (&t, "image", r->image);
  if (r->rootfs != NULL)
    bx_json_text_string (&t, "rootfs", r->rootfs);
  if (r->runtime != NULL)
    bx_json_text_string (&t, "runtime", r->runtime);
  return bx_json_text_close (&t, NULL);
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
  static const char open_prev[] = ",\"prev\":\"", close_prev[] = "\"}\n";
  char *p = mempcpy (line + n - 1, open_prev, sizeof open_prev - 1);
  p = mempcpy (p, a->prev, BX_AUDIT_HASH_HEX);
  memcpy (p, close_prev, sizeof close_prev); /* with its NUL: line[len] */
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
  bool online = tool == BX_TOOL_HTTP_FETCH
                || ((tool == BX_TOOL_SHELL || tool == BX_TOOL_MCP_CALL) && g->n_hosts > 0);
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
  r->runtime = g->runtime_name;
}
