/* SPDX-License-Identifier: Apache-2.0 */
/* `boxmaker mcp`: its options (getopt_long), then one transport.  boxmaker-mcp(1). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "bx/message.h"
#include "bx/number.h"

#include "../env.h"
#include "mcp.h"

static const char usage_text[]
    = "usage: boxmaker mcp [--socket PATH] [--timeout-ms N] [--session ID] [--max-calls N]\n"
      "                    [--progress-ms N] [--refresh-ms N]\n"
      "                    [--http ADDRESS [--token-file FILE] [--allow-origin ORIGIN]...]\n"
      "\n"
      "Serves the four tools to an MCP client: over standard input and output by default,\n"
      "over streamable HTTP with --http.  Each tools/call is one brokerd call.\n"
      "  --socket PATH        brokerd's socket (default $" BX_ENV_SOCKET ", else\n"
      "                       " BX_CLIENT_DEFAULT_SOCKET ")\n"
      "  --timeout-ms N       deadline of each call (default 120000)\n"
      "  --session ID         session id sent with every call (default: one of this\n"
      "                       process's own, mcp-PID-RANDOM)\n"
      "  --max-calls N        tools/call in flight at once (default 16)\n"
      "  --progress-ms N      while a call waits for approval, a progress notification\n"
      "                       every N ms (default 10000)\n"
      "  --refresh-ms N       ask brokerd again what it grants every N ms while a client\n"
      "                       is connected, and tell it when its tools change (default 10000)\n"
      "  --http ADDRESS       listen on HOST:PORT or on a Unix socket path (starting with /)\n"
      "  --token-file FILE    HTTP clients must send 'Authorization: Bearer <the file's text>';\n"
      "                       needed with HOST:PORT; other users must not read the file\n"
      "  --allow-origin ORIGIN  also accept this Origin header (repeatable)\n"
      "  -h, --help           this text\n";

static int
usage_error (const char *what, const char *value)
{
  fprintf (stderr, "boxmaker mcp: %s%s%s%s\nTry 'boxmaker mcp --help'.\n", what, value ? " '" : "",
           value ? value : "", value ? "'" : "");
  return 2;
}

/* A session id of this process's own, "mcp-PID-" and 64 random bits in hex: two servers
 * never share a session (and with it a once_per_session approval) unless told to. */
static void
own_session (char out[64])
{
  unsigned char raw[8] = { 0 };
  size_t got = 0;
  while (got < sizeof raw)
    {
      ssize_t n = getrandom (raw + got, sizeof raw - got, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break; /* the pid still tells this process's session from a running one's */
      got += (size_t)n;
    }
  int len = snprintf (out, 64, "mcp-%ld-", (long)getpid ());
  for (size_t i = 0; i < sizeof raw; i++)
    len += snprintf (out + len, (size_t)(64 - len), "%02x", raw[i]);
}

int
bx_mcp_main (int argc, char **argv)
{
  static const struct option longopts[] = {
    { "socket", required_argument, NULL, 's' },
    { "timeout-ms", required_argument, NULL, 't' },
    { "session", required_argument, NULL, 'S' },
    { "max-calls", required_argument, NULL, 'm' },
    { "progress-ms", required_argument, NULL, 'p' },
    { "refresh-ms", required_argument, NULL, 'r' },
    { "http", required_argument, NULL, 'H' },
    { "token-file", required_argument, NULL, 'T' },
    { "allow-origin", required_argument, NULL, 'o' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  char session[64];
  own_session (session);
  struct bx_mcp_options opts = {
    .socket = bx_cli_env_or (BX_ENV_SOCKET, BX_CLIENT_DEFAULT_SOCKET),
    .timeout_ms = BX_CLIENT_DEFAULT_TIMEOUT_MS,
    .session = session,
    .max_calls = 16,
    .progress_ms = 10000,
    .refresh_ms = 10000,
  };
  struct bx_mcp_http_options http = { 0 };
  const char *origins[17] = { NULL };
  size_t n_origins = 0;
  uint64_t v;

  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long (argc, argv, "+:h", longopts, NULL)) != -1)
    switch (c)
      {
      case 's':
        if (*optarg == '\0')
          return usage_error ("--socket needs a path", NULL);
        opts.socket = optarg;
        break;
      case 't':
        if (bx_parse_u64 (optarg, &opts.timeout_ms) < 0 || opts.timeout_ms == 0)
          return usage_error ("--timeout-ms must be a whole number of milliseconds above 0, not",
                              optarg);
        break;
      case 'S':
        if (!bx_valid_id (optarg))
          return usage_error ("--session must be 1 to 64 of [A-Za-z0-9_.-], not", optarg);
        opts.session = optarg;
        break;
      case 'm':
        if (bx_parse_u64 (optarg, &v) < 0 || v == 0 || v > 1024)
          return usage_error ("--max-calls must be 1 to 1024, not", optarg);
        opts.max_calls = (unsigned)v;
        break;
      case 'p':
        if (bx_parse_u64 (optarg, &v) < 0 || v < 10 || v > 3600000)
          return usage_error ("--progress-ms must be 10 to 3600000, not", optarg);
        opts.progress_ms = v;
        break;
      case 'r':
        if (bx_parse_u64 (optarg, &v) < 0 || v < 100 || v > 3600000)
          return usage_error ("--refresh-ms must be 100 to 3600000, not", optarg);
        opts.refresh_ms = v;
        break;
      case 'H':
        if (*optarg == '\0')
          return usage_error ("--http needs an address", NULL);
        http.address = optarg;
        break;
      case 'T':
        http.token_file = optarg;
        break;
      case 'o':
        if (n_origins == 16)
          return usage_error ("at most 16 --allow-origin", NULL);
        origins[n_origins++] = optarg;
        break;
      case 'h':
        fputs (usage_text, stdout);
        return 0;
      case ':':
        return usage_error ("an option needs a value:", argv[optind - 1]);
      default:
        return usage_error ("unknown option", argv[optind - 1]);
      }
  if (optind < argc)
    return usage_error ("unexpected argument", argv[optind]);
  if (http.address == NULL && (http.token_file != NULL || n_origins > 0))
    return usage_error ("--token-file and --allow-origin need --http", NULL);
  http.origins = origins;

  /* A client that goes away mid-answer is a write error, not a signal. */
  signal (SIGPIPE, SIG_IGN);
  struct bx_mcp_server *srv = bx_mcp_server_new (&opts);
  int status = http.address ? bx_mcp_http (srv, &http) : bx_mcp_stdio (srv, 0, 1);
  bx_mcp_server_free (srv);
  return status;
}
