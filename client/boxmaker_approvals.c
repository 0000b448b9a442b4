/* SPDX-License-Identifier: Apache-2.0 */
/* The owners' commands: list, watch, approve and decline waiting calls.  See
 * boxmaker_approvals.h. */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"

#include "boxmaker_approvals.h"
#include "env.h"

enum
{
  EXIT_DONE = 0,
  EXIT_REFUSED = 1,
  EXIT_USAGE = 2,
  EXIT_UNAVAILABLE = 3,
};

/* A request and its answer must each take less than this. */
#define IO_MS 10000
/* How much of a text from brokerd is printed: more than any summary brokerd makes (its
 * parts take at most 120 + 120 + 200 bytes), so the owner always sees a summary's end. */
#define SHOWN_MAX 1024

struct args
{
  const char *socket;
  const char *id;
  const char *reason;
  bool watch;
  bool json;
};

static int
usage (const char *command, const char *fmt, const char *arg)
{
  fputs ("boxmaker: ", stderr);
  fprintf (stderr, fmt, arg);
  fprintf (stderr, "\nusage: boxmaker %s\nTry 'boxmaker --help'.\n",
           strcmp (command, "approvals") == 0 ? "approvals [--watch] [--json] [--admin-socket PATH]"
           : strcmp (command, "approve") == 0 ? "approve ID [--admin-socket PATH]"
                                              : "decline ID [--reason TEXT] [--admin-socket PATH]");
  return EXIT_USAGE;
}

/* Flags: --admin-socket PATH, and per command --watch, --json (approvals) or --reason TEXT
 * (decline); approve and decline take one ID. */
static int
parse (const char *command, int argc, char **argv, struct args *out)
{
  *out = (struct args){ .socket
                        = bx_cli_env_or (BX_ENV_ADMIN_SOCKET, BX_CLIENT_DEFAULT_ADMIN_SOCKET) };
  bool listing = strcmp (command, "approvals") == 0;
  bool declining = strcmp (command, "decline") == 0;
  for (int i = 0; i < argc; i++)
    {
      const char *a = argv[i];
      if (listing && strcmp (a, "--watch") == 0)
        out->watch = true;
      else if (listing && strcmp (a, "--json") == 0)
        out->json = true;
      else if (strcmp (a, "--admin-socket") == 0 || (declining && strcmp (a, "--reason") == 0))
        {
          if (i + 1 >= argc)
            return usage (command, "%s needs a value", a);
          if (a[2] == 'a')
            out->socket = argv[++i];
          else
            out->reason = argv[++i];
        }
      else if (strncmp (a, "--admin-socket=", 15) == 0)
        out->socket = a + 15;
      else if (declining && strncmp (a, "--reason=", 9) == 0)
        out->reason = a + 9;
      else if (a[0] == '-')
        return usage (command, "unknown option '%s'", a);
      else if (!listing && out->id == NULL)
        out->id = a;
      else
        return usage (command, "unexpected argument '%s'", a);
    }
  if (*out->socket == '\0')
    return usage (command, "%s needs a path", "--admin-socket");
  if (!listing && out->id == NULL)
    return usage (command, "%s needs the approval id (boxmaker approvals lists them)", command);
  if (out->id != NULL && strspn (out->id, "0123456789abcdef") != strlen (out->id))
    return usage (command, "'%s' is not an approval id: expected 32 hex digits", out->id);
  return -1;
}

static int
connect_admin (const char *path)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    {
      fprintf (stderr, "boxmaker: admin socket %s: the path is too long\n", path);
      return -1;
    }
  strcpy (addr.sun_path, path);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *)&addr, sizeof addr) < 0)
    {
      fprintf (stderr, "boxmaker: cannot connect to the admin socket %s: %s\n", path,
               strerror (errno));
      if (fd >= 0)
        close (fd);
      return -1;
    }
  return fd;
}

static const char *
text_of (const json_t *o, const char *key)
{
  const char *s = json_string_value (json_object_get (o, key));
  return s ? s : "?";
}

/* Text from brokerd, printed as one safe line.  brokerd's summaries are already printable
 * ASCII (with its own \xNN escapes, which pass unchanged); anything else that reaches a
 * terminal is escaped here, and the text is cut at SHOWN_MAX bytes, with "...". */
static void
put_safe (FILE *to, const char *s)
{
  size_t i = 0;
  for (; s[i] != '\0' && i < SHOWN_MAX; i++)
    {
      unsigned char c = (unsigned char)s[i];
      if (c >= 0x20 && c < 0x7f)
        fputc (c, to);
      else
        fprintf (to, "\\x%02x", c);
    }
  if (s[i] != '\0')
    fputs ("...", to);
}

static void
print_number (const json_t *n)
{
  if (json_is_integer (n))
    printf ("%lld", (long long)json_integer_value (n));
  else
    putchar ('?');
}

static void
print_pending (const json_t *p)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  long long now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  long long left = (long long)json_integer_value (json_object_get (p, "expires")) - now;
  if (left < 0)
    left = 0;
  printf ("%s  session ", text_of (p, "approval"));
  put_safe (stdout, text_of (p, "session"));
  printf (" call ");
  put_safe (stdout, text_of (p, "call"));
  printf ("  grant %lld  uid ", (long long)json_integer_value (json_object_get (p, "grant")));
  print_number (json_object_get (p, "uid"));
  printf (" pid ");
  print_number (json_object_get (p, "pid"));
  printf ("  expires in %lldm%02llds%s\n  ", left / 60000, left / 1000 % 60,
          json_is_true (json_object_get (p, "client_left"))
              ? "  (client left: runs when asked again)"
              : "");
  put_safe (stdout, text_of (p, "summary"));
  putchar ('\n');
}

static void
print_event (const json_t *ev)
{
  const char *type = text_of (ev, "type");
  if (strcmp (type, "pending") == 0)
    {
      printf ("pending ");
      print_pending (ev);
    }
  else if (strcmp (type, "resolved") == 0)
    {
      const json_t *by = json_object_get (ev, "approver_uid");
      printf ("%s %s", text_of (ev, "state"), text_of (ev, "approval"));
      if (json_is_integer (by))
        printf (" by uid %lld", (long long)json_integer_value (by));
      putchar ('\n');
    }
  fflush (stdout);
}

/* Sends REQ (taking it): -1 when sent, or the exit status. */
static int
send_request (int fd, json_t *req)
{
  cleanup_error bx_error err = NULL;
  int w = bx_frame_write (fd, req, bx_deadline_in (IO_MS), &err);
  json_decref (req);
  if (w < 0)
    {
      /* brokerd may have refused the connection before reading the request: its refusal
       * is still there to read. */
      json_t *refusal = NULL;
      cleanup_error bx_error rerr = NULL;
      if (bx_frame_read (fd, bx_deadline_in (IO_MS), &refusal, &rerr) == 0
          && strcmp (text_of (refusal, "type"), "error") == 0)
        {
          fputs ("boxmaker: brokerd refused: ", stderr);
          put_safe (stderr, text_of (refusal, "detail"));
          fputc ('\n', stderr);
          json_decref (refusal);
          return EXIT_REFUSED;
        }
      json_decref (refusal);
      fprintf (stderr, "boxmaker: cannot send to the admin socket: %s\n", bx_error_msg (err));
      return EXIT_UNAVAILABLE;
    }
  return -1;
}

/* Reads one answer into *OUT: -1, or the exit status (an `error` answer is printed and ends
 * the command with EXIT_REFUSED). */

static int
read_answer (int fd, int64_t deadline, json_t **out)
{
  cleanup_error bx_error err = NULL;
  if (bx_frame_read (fd, deadline, out, &err) < 0)
    {
      /* A watch ends when brokerd stops: that is no failure. */
      if (deadline == BX_NO_DEADLINE && bx_error_code (err) == BX_FRAME_CLOSED)
        {
          fputs ("boxmaker: brokerd closed the admin socket\n", stderr);
          return EXIT_DONE;
        }
      fprintf (stderr, "boxmaker: no answer from the admin socket: %s\n", bx_error_msg (err));
      return EXIT_UNAVAILABLE;
    }
  if (strcmp (text_of (*out, "type"), "error") == 0)
    {
      fputs ("boxmaker: brokerd refused: ", stderr);
      put_safe (stderr, text_of (*out, "detail"));
      fputc ('\n', stderr);
      json_decref (*out);
      *out = NULL;
      return EXIT_REFUSED;
    }
  return -1;
}

static void
print_json_line (const json_t *o)
{
  cleanup_free char *text = json_dumps (o, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
  if (text != NULL)
    printf ("%s\n", text);
  fflush (stdout);
}

int
bx_cli_approvals (int argc, char **argv)
{
  struct args a;
  int r = parse ("approvals", argc, argv, &a);
  if (r >= 0)
    return r;
  cleanup_close int fd = connect_admin (a.socket);
  if (fd < 0)
    return EXIT_UNAVAILABLE;
  json_t *out = NULL;
  r = send_request (fd, json_pack ("{s:i, s:s}", "v", 1, "op", a.watch ? "watch" : "list"));
  if (r >= 0)
    return r;
  r = read_answer (fd, bx_deadline_in (IO_MS), &out);
  if (r >= 0)
    return r;
  json_t *list = json_object_get (out, "pending");
  if (!json_is_array (list))
    {
      fputs ("boxmaker: the admin socket answered something else than a list\n", stderr);
      json_decref (out);
      return EXIT_UNAVAILABLE;
    }
  size_t i;
  json_t *p;
  if (a.json)
    print_json_line (out);
  else if (json_array_size (list) == 0)
    printf ("no call waits for approval\n");
  else
    json_array_foreach (list, i, p) print_pending (p);
  json_decref (out);
  fflush (stdout);
  if (!a.watch)
    return EXIT_DONE;
  /* Until brokerd stops or the person ends it (Ctrl-C). */
  for (;;)
    {
      r = read_answer (fd, BX_NO_DEADLINE, &out);
      if (r >= 0)
        return r;
      if (a.json)
        print_json_line (out);
      else
        print_event (out);
      json_decref (out);
    }
}

static int
answer (const char *command, int argc, char **argv)
{
  struct args a;
  int r = parse (command, argc, argv, &a);
  if (r >= 0)
    return r;
  cleanup_close int fd = connect_admin (a.socket);
  if (fd < 0)
    return EXIT_UNAVAILABLE;
  json_t *req = json_pack ("{s:i, s:s, s:s}", "v", 1, "op", command, "approval", a.id);
  if (a.reason != NULL)
    json_object_set_new (req, "reason", json_string (a.reason));
  if (json_object_get (req, "reason") == NULL && a.reason != NULL)
    {
      json_decref (req);
      return usage (command, "%s", "the reason must be valid UTF-8");
    }
  json_t *out = NULL;
  r = send_request (fd, req);
  if (r >= 0)
    return r;
  r = read_answer (fd, bx_deadline_in (IO_MS), &out);
  if (r >= 0)
    return r;
  printf ("%s %s\n", text_of (out, "state"), text_of (out, "approval"));
  json_decref (out);
  return EXIT_DONE;
}

int
bx_cli_approve (int argc, char **argv)
{
  return answer ("approve", argc, argv);
}

int
bx_cli_decline (int argc, char **argv)
{
  return answer ("decline", argc, argv);
}
