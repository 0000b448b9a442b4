/* The audit log.  See audit.h. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "audit.h"

struct bx_audit
{
  pthread_mutex_t lock;
  int fd;
  bool owned; /* false for standard error */
};

int
bx_audit_open (const char *dest, struct bx_audit **out, bx_error *err)
{
  int fd = STDERR_FILENO;
  bool owned = false;
  if (strcmp (dest, "stderr") != 0)
    {
      fd = open (dest, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
      if (fd < 0)
        return bx_error_set (err, errno, "cannot open the audit log %s", dest);
      owned = true;
    }
  struct bx_audit *a = bx_xzalloc (sizeof *a);
  pthread_mutex_init (&a->lock, NULL);
  a->fd = fd;
  a->owned = owned;
  *out = a;
  return 0;
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
  /* Strings from a client are valid UTF-8 (jansson checked them); a NULL here can only be
   * an allocation failure. */
  char *line = json_dumps (o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref (o);
  if (line == NULL)
    bx_out_of_memory ();
  return line;
}

void
bx_audit_write (struct bx_audit *a, const struct bx_audit_record *r)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  char *line = bx_audit_format (r, now);
  size_t n = strlen (line);
  /* One write per line, with its newline, so O_APPEND keeps lines whole. */
  line = bx_xrealloc (line, n + 2);
  line[n++] = '\n';
  line[n] = '\0';
  pthread_mutex_lock (&a->lock);
  size_t done = 0;
  while (done < n)
    {
      ssize_t w = TEMP_FAILURE_RETRY (write (a->fd, line + done, n - done));
      if (w <= 0)
        break; /* a full disk must not stop calls; nothing better to do with the line */
      done += (size_t)w;
    }
  pthread_mutex_unlock (&a->lock);
  free (line);
}

void
bx_audit_close (struct bx_audit *a)
{
  if (a == NULL)
    return;
  if (a->owned)
    close (a->fd);
  pthread_mutex_destroy (&a->lock);
  free (a);
}
