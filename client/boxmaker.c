/* SPDX-License-Identifier: Apache-2.0 */
/* boxmaker: try brokerd by hand.
 *
 *   boxmaker call TOOL JSON|@FILE|- [--socket PATH] [--timeout-ms N] [--session ID] [--call ID]
 *                             [--json]
 *
 * A result's content goes to standard output byte for byte, its labels to standard error;
 * --json prints the whole answer as one JSON object on standard output instead.  Exit
 * status: 0 result, 1 denied or failed, 2 usage, 3 the broker is unavailable.  See
 * docs/client.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/message.h"
#include "bx/number.h"

#include <boxmaker/client.h>

#include "boxmaker_approvals.h"
#include "env.h"
#include "audit_verify.h"
#include "stats.h"
#include "mcp/mcp.h"

enum
{
  EXIT_RESULT = 0,
  EXIT_REFUSED = 1, /* denied, or failed */
  EXIT_USAGE = 2,
  EXIT_UNAVAILABLE = 3,
};

#define DEFAULT_SESSION "cli"

static const char usage_text[]
    = "usage: boxmaker call TOOL JSON|@FILE|- [--socket PATH] [--timeout-ms N] [--session ID]\n"
      "                                      [--call ID] [--json] [--refusals]\n"
      "       boxmaker approvals [--watch] [--json] [--admin-socket PATH]\n"
      "       boxmaker approve ID [--admin-socket PATH]\n"
      "       boxmaker decline ID [--reason TEXT] [--admin-socket PATH]\n"
      "       boxmaker audit verify [--prev HASH] FILE...\n"
      "       boxmaker stats [--metrics-socket PATH]\n"
      "       boxmaker mcp [OPTIONS]   (see boxmaker mcp --help)\n"
      "       boxmaker --help | --version\n"
      "\n"
      "Sends one tool call to brokerd and prints its answer.\n"
      "  TOOL             read_file, write_file, shell or http_fetch\n"
      "  JSON             the tool's arguments, one JSON object; @FILE reads them from\n"
      "                   FILE, - from standard input\n"
      "  --socket PATH    brokerd's socket (default $" BX_ENV_SOCKET ", else\n"
      "                   " BX_CLIENT_DEFAULT_SOCKET ")\n"
      "  --timeout-ms N   deadline for the whole call (default 120000)\n"
      "  --session ID     session id (default " DEFAULT_SESSION ")\n"
      "  --call ID        call id (default: a new one)\n"
      "  --json           print the whole answer as one JSON object on standard output\n"
      "  --refusals       tell the tool's own refusal (a missing file) from content:\n"
      "                   'boxmaker: refused: REASON' on standard error, exit 1\n"
      "\n"
      "A result's content goes to standard output, its labels to standard error.\n"
      "Exit status: 0 result, 1 denied or failed (or refused, with --refusals), 2 usage,\n"
      "3 broker unavailable.\n"
      "\n"
      "The owners' commands use brokerd's admin socket (--admin-socket PATH; default\n"
      "$" BX_ENV_ADMIN_SOCKET ", else " BX_CLIENT_DEFAULT_ADMIN_SOCKET "):\n"
      "  approvals        list the calls waiting for approval (--watch: and each new one)\n"
      "  approve ID       run the waiting call ID, exactly as it was asked\n"
      "  decline ID       refuse it; --reason TEXT is shown to the model\n"
      "Exit status: 0 done, 1 refused by brokerd, 2 usage, 3 admin socket unavailable.\n"
      "\n"
      "audit verify checks the audit log's hash chain across FILEs, oldest first, and names\n"
      "the first line where it breaks.  Exit status: 0 intact, 1 broken, 2 usage or unreadable.\n"
      "\n"
      "stats prints brokerd's metrics from its metrics socket (--metrics-socket PATH; default\n"
      "$" BX_ENV_METRICS_SOCKET ", else " BX_DEFAULT_METRICS_SOCKET ", served only when brokerd's\n"
      "config sets metrics_socket).\n"
      "Exit status: 0 printed, 2 usage, 3 no answer, or an answer that is not metrics.\n";

static int usage_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

static int
usage_error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fputs ("boxmaker: ", stderr);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputs ("\nTry 'boxmaker --help'.\n", stderr);
  return EXIT_USAGE;
}

/* A call id that no other call shares: wall-clock ms, pid and a counter, all in
 * [A-Za-z0-9_.-] so brokerd can name a container after it. */
static char *
new_call_id (void)
{
  static unsigned counter;
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  return bx_xasprintf ("cli-%lld%03ld-%ld-%u", (long long)ts.tv_sec, ts.tv_nsec / 1000000,
                       (long)getpid (), counter++);
}

static void
log_to_stderr (const char *line, void *data)
{
  fprintf (stderr, "boxmaker: %s\n", line);
}

static void
print_pending (const struct bx_client_pending *p, void *data)
{
  time_t secs = (time_t)(p->expires / 1000);
  struct tm tm;
  char when[64] = "?";
  if (gmtime_r (&secs, &tm) != NULL)
    strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  fprintf (stderr, "boxmaker: waiting for approval: %s (expires %s)\n", p->approval, when);
}

static const char *
yes_no (bool b)
{
  return b ? "true" : "false";
}

static void
print_plain (const struct bx_client_response *r)
{
  switch (r->kind)
    {
    case BX_CLIENT_RESULT:
      /* Asked with --refusals: the tool's own refusal is its reason, not content. */
      if (r->refused)
        {
          fprintf (stderr, "boxmaker: refused: %s\n", r->content);
          break;
        }
      fprintf (stderr, "boxmaker: result: class=%s untrusted=%s truncated=%s\n", r->class,
               yes_no (r->untrusted), yes_no (r->truncated));
      fwrite (r->content, 1, r->content_len, stdout);
      break;
    case BX_CLIENT_DENIED:
      fprintf (stderr, "boxmaker: denied: %s\n", r->message);
      break;
    case BX_CLIENT_FAILED:
      /* An outage was already told by the log line; repeating it adds nothing. */
      if (!r->unavailable)
        fprintf (stderr, "boxmaker: failed: %s\n", r->message);
      break;
    }
}

static void
print_json (const struct bx_client_response *r)
{
  json_auto_t *o = NULL;
  switch (r->kind)
    {
    case BX_CLIENT_RESULT:
      o = json_pack ("{s:s, s:s%, s:s, s:b, s:b}", "type", "result", "content", r->content,
                     r->content_len, "class", r->class, "untrusted", r->untrusted, "truncated",
                     r->truncated);
      if (o != NULL && r->refused)
        json_object_set_new (o, "refused", json_true ());
      break;
    case BX_CLIENT_DENIED:
      o = json_pack ("{s:s, s:s}", "type", "denied", "reason", r->message);
      break;
    case BX_CLIENT_FAILED:
      o = json_pack ("{s:s, s:s, s:b}", "type", "failed", "message", r->message, "unavailable",
                     r->unavailable);
      break;
    }
  cleanup_free char *text = o ? json_dumps (o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
  if (text != NULL)
    printf ("%s\n", text);
}

/* The arguments as given: the text itself, "-" for standard input, or "@FILE" for a file's
 * content, so arguments past the kernel's limit on one argument (128 KiB) can be sent.  At
 * most ARGS_FILE_MAX bytes are read: more could never fit in a frame. */
#define ARGS_FILE_MAX (8u * 1024 * 1024)

static char *
read_arguments (const char *spec, size_t *len)
{
  if (strcmp (spec, "-") != 0 && spec[0] != '@')
    {
      *len = strlen (spec);
      return bx_xstrdup (spec);
    }
  const char *path = spec[0] == '@' ? spec + 1 : "standard input";
  FILE *f = spec[0] == '@' ? fopen (spec + 1, "re") : stdin;
  if (f == NULL)
    {
      fprintf (stderr, "boxmaker: cannot read the arguments from %s: %s\n", path, strerror (errno));
      return NULL;
    }
  size_t cap = 64 * 1024, n = 0;
  char *buf = bx_xmalloc (cap + 1);
  size_t got;
  while ((got = fread (buf + n, 1, cap - n, f)) > 0)
    {
      n += got;
      if (n == cap && cap <= ARGS_FILE_MAX)
        {
          cap *= 2;
          buf = realloc (buf, cap + 1);
          if (buf == NULL)
            abort ();
        }
      if (n > ARGS_FILE_MAX)
        break;
    }
  bool failed = ferror (f);
  if (f != stdin)
    fclose (f);
  if (failed || n > ARGS_FILE_MAX)
    {
      if (failed)
        fprintf (stderr, "boxmaker: cannot read the arguments from %s\n", path);
      else
        fprintf (stderr, "boxmaker: the arguments in %s are larger than %u bytes\n", path,
                 ARGS_FILE_MAX);
      free (buf);
      return NULL;
    }
  buf[n] = '\0';
  *len = n;
  return buf;
}

static int
cmd_call (int argc, char **argv)
{
  struct bx_client_options opts = {
    .socket = bx_cli_env_or (BX_ENV_SOCKET, BX_CLIENT_DEFAULT_SOCKET),
    .timeout_ms = BX_CLIENT_DEFAULT_TIMEOUT_MS,
    .log = log_to_stderr,
    .on_pending = print_pending,
  };
  const char *session = DEFAULT_SESSION;
  const char *call = NULL;
  bool as_json = false;

  static const struct option longopts[] = {
    { "socket", required_argument, NULL, 's' },  { "timeout-ms", required_argument, NULL, 't' },
    { "session", required_argument, NULL, 'S' }, { "call", required_argument, NULL, 'c' },
    { "json", no_argument, NULL, 'j' },          { "refusals", no_argument, NULL, 'r' },
    { "help", no_argument, NULL, 'h' },          { NULL, 0, NULL, 0 },
  };
  /* ARGV[0] is "call"; getopt_long moves the flags before the two arguments, wherever they
   * were given, and stops at "--". */
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long (argc, argv, ":h", longopts, NULL)) != -1)
    switch (c)
      {
      case 's':
        if (*optarg == '\0')
          return usage_error ("%s needs a path", "--socket");
        opts.socket = optarg;
        break;
      case 't':
        /* Values too large for the clock are the client's exit 1, not a usage error. */
        if (bx_parse_u64 (optarg, &opts.timeout_ms) < 0)
          return usage_error ("--timeout-ms must be a whole number of milliseconds, not '%s'",
                              optarg);
        break;
      case 'S':
        if (!bx_valid_id (optarg))
          return usage_error ("--session must be 1 to 64 of [A-Za-z0-9_.-], not '%s'", optarg);
        session = optarg;
        break;
      case 'c':
        if (!bx_valid_id (optarg))
          return usage_error ("--call must be 1 to 64 of [A-Za-z0-9_.-], not '%s'", optarg);
        call = optarg;
        break;
      case 'j':
        as_json = true;
        break;
      case 'r':
        opts.refusals = true;
        break;
      case 'h':
        fputs (usage_text, stdout);
        return EXIT_RESULT;
      case ':':
        return usage_error ("%s needs a value", argv[optind - 1]);
      default:
        if (optopt != 0)
          return usage_error ("unknown option '-%c'", optopt);
        return usage_error ("unknown option '%s'", argv[optind - 1]);
      }
  const char **positional = (const char **)argv + optind;
  int npositional = argc - optind;
  if (npositional > 2)
    return usage_error ("unexpected argument '%s'", positional[2]);
  if (npositional < 2)
    return usage_error ("%s", npositional == 0 ? "call needs a TOOL and its JSON arguments"
                                               : "call needs the tool's JSON arguments");

  size_t text_len = 0;
  cleanup_free char *text = read_arguments (positional[1], &text_len);
  if (text == NULL)
    return EXIT_USAGE;
  json_error_t jerr;
  json_auto_t *arguments = json_loadb (text, text_len, JSON_REJECT_DUPLICATES, &jerr);
  if (arguments == NULL)
    {
      fprintf (stderr, "boxmaker: the arguments are not valid JSON: %s (column %d)\n", jerr.text,
               jerr.column);
      return EXIT_USAGE;
    }
  if (!json_is_object (arguments))
    return usage_error ("%s", "the arguments must be a JSON object, such as '{\"path\": \"/x\"}'");

  cleanup_free char *generated = call ? NULL : new_call_id ();
  cleanup_error bx_error err = NULL;
  struct bx_client_response resp;
  if (bx_client_call (&opts, call ? call : generated, session, positional[0], arguments, &resp,
                      &err)
      < 0)
    return usage_error ("%s", bx_error_msg (err));

  if (as_json)
    print_json (&resp);
  else
    print_plain (&resp);
  int status = resp.unavailable                                 ? EXIT_UNAVAILABLE
               : resp.kind == BX_CLIENT_RESULT && !resp.refused ? EXIT_RESULT
                                                                : EXIT_REFUSED;
  bx_client_response_free (&resp);
  if (fflush (stdout) != 0 && status == EXIT_RESULT)
    {
      perror ("boxmaker: standard output");
      return EXIT_REFUSED;
    }
  return status;
}

/* Whether ARGV (what follows a command) holds --help or -h as a flag, not as the value of a
 * flag that takes one (decline --reason -h). */
static bool
asks_for_help (int argc, char **argv)
{
  static const char *const with_value[]
      = { "--admin-socket", "--reason", "--socket", "--metrics-socket", "--prev" };
  for (int i = 0; i < argc; i++)
    {
      if (strcmp (argv[i], "--") == 0)
        return false;
      if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0)
        return true;
      for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
        if (strcmp (argv[i], with_value[k]) == 0)
          {
            i++;
            break;
          }
    }
  return false;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fputs (usage_text, stderr);
      return EXIT_USAGE;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0
      || strcmp (argv[1], "help") == 0)
    {
      fputs (usage_text, stdout);
      return 0;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      printf ("boxmaker %s\n", BX_VERSION);
      return 0;
    }
  if (strcmp (argv[1], "call") == 0)
    return cmd_call (argc - 1, argv + 1);
  if (strcmp (argv[1], "mcp") != 0 && asks_for_help (argc - 2, argv + 2))
    {
      fputs (usage_text, stdout);
      return 0;
    }
  if (strcmp (argv[1], "approvals") == 0)
    return bx_cli_approvals (argc - 2, argv + 2);
  if (strcmp (argv[1], "approve") == 0)
    return bx_cli_approve (argc - 2, argv + 2);
  if (strcmp (argv[1], "decline") == 0)
    return bx_cli_decline (argc - 2, argv + 2);
  if (strcmp (argv[1], "stats") == 0)
    return bx_cmd_stats (argc - 2, argv + 2);
  if (strcmp (argv[1], "audit") == 0)
    {
      if (argc < 3 || strcmp (argv[2], "verify") != 0)
        return usage_error ("audit: expected 'audit verify FILE...'");
      return bx_cmd_audit_verify (argc - 3, argv + 3);
    }
  if (strcmp (argv[1], "mcp") == 0)
    return bx_mcp_main (argc - 1, argv + 1);
  return usage_error ("unknown command '%s'", argv[1]);
}
