/* SPDX-License-Identifier: Apache-2.0 */
/* http_fetch: curl with a fixed argument list (bx_toolkit_curl_argv) and the URL as one
 * argument of its own, never through a shell.  The body and curl's --write-out trailer go to the
 * model as they are; a failure is one line: what the egress proxy's refusal means, in words,
 * or else the first of what curl said on standard error. */
#include <string.h>

#include "bx/cleanup.h"
#include "bx/command.h"
#include "bx/deadline.h"
#include "egress.h"
#include "tools.h"

/* curl's standard error is kept up to this much: only its first line is used. */
#define STDERR_KEEP 4096
/* Room for the --write-out trailer after a body of the largest size. */
#define TRAILER_ROOM 64
/* The trailer curl writes: "\n[http NNN]", the status always three digits (%03ld). */
#define TRAILER_LEN 11

size_t
bx_toolkit_curl_argv (const char *curl, const char *url, const char *argv[BX_TOOLKIT_CURL_ARGC + 1])
{
  static const char *const fixed[] = {
    "--silent",
    "--show-error",
    "--proto",
    "=https",
    "--proto-redir",
    "=https",
    "--location",
    "--max-redirs",
    "5",
    "--max-time",
    "50",
    "--max-filesize",
    BX_STR (BX_FETCH_BODY_MAX),
    "--cacert",
    "/etc/ssl/certs/ca-certificates.crt",
    "--proxy",
    "socks5h://localhost" BX_EGRESS_SOCKET,
    "--write-out",
    "\n[http %{response_code}]",
    "--url",
  };
  _Static_assert(sizeof fixed / sizeof fixed[0] + 2 == BX_TOOLKIT_CURL_ARGC,
                 "BX_TOOLKIT_CURL_ARGC counts curl, the fixed list and the URL");
  size_t n = 0;
  argv[n++] = curl;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    argv[n++] = fixed[i];
  argv[n++] = url;
  argv[n] = NULL;
  return n;
}

static int
refuse (int out_fd, const char *url, const char *reason)
{
  return bx_toolkit_refuse (out_fd, "http_fetch", url, reason);
}

/* curl 7.88 ends a transfer the proxy refused with exit 97 (CURLE_PROXY) and this line,
 * the name it asked for and the proxy's SOCKS5 reply code at its end. */
#define CURL_SOCKS_REFUSED "curl: (97) Can't complete SOCKS5 connection to "

/* The reason the proxy gave (egress.h: a code per reason), naming HOST; NULL for any other
 * code (7 answers a command curl never sends). */
static char *
refusal_words (int code, const char *host)
{
  switch (code)
    {
    case BX_SOCKS_GENERAL_FAILURE:
      return bx_xasprintf ("too many connections in one call: %s was not tried", host);
    case BX_SOCKS_NOT_ALLOWED:
      return bx_xasprintf ("%s is not granted, or not on this port", host);
    case BX_SOCKS_NETWORK_UNREACHABLE:
      return bx_xasprintf ("%s resolves only to addresses that are not public", host);
    case BX_SOCKS_HOST_UNREACHABLE:
      return bx_xasprintf ("could not resolve %s", host);
    case BX_SOCKS_CONNECTION_REFUSED:
      return bx_xasprintf ("could not connect to %s", host);
    case BX_SOCKS_TTL_EXPIRED:
      return bx_xasprintf ("timed out connecting to %s", host);
    case BX_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED:
      return bx_xasprintf ("%s is an IP address: http_fetch reaches granted host names only", host);
    default:
      return NULL;
    }
}

/* LINE (curl's first line of error, after exit EXIT_CODE) in words when it is the proxy's
 * refusal; NULL when it is anything else, which stays curl's own.  The host is curl's, not
 * the URL's: after a redirect it is the one refused. */
static char *
proxy_refusal (int exit_code, const char *line)
{
  static const char prefix[] = CURL_SOCKS_REFUSED;
  size_t len = strlen (line);
  if (exit_code != 97 || strncmp (line, prefix, sizeof prefix - 1) != 0)
    return NULL;
  const char *host = line + sizeof prefix - 1;
  /* "HOST. (CODE)": the code is the last parenthesis, one digit as the proxy sends it. */
  const char *tail = len >= sizeof prefix - 1 + 6 ? line + len - 5 : NULL;
  if (tail == NULL || memcmp (tail, ". (", 3) != 0 || tail[3] < '0' || tail[3] > '9'
      || tail[4] != ')')
    return NULL;
  cleanup_free char *name = bx_xstrndup (host, (size_t)(tail - host));
  return refusal_words (tail[3] - '0', name);
}

int
bx_toolkit_http_fetch (const struct bx_tool_args *args, const struct bx_toolkit_env *env,
                       int out_fd)
{
  const char *curl = env->curl;
  const char *url = args->url;
  cleanup_error bx_error err = NULL;
  const char *argv[BX_TOOLKIT_CURL_ARGC + 1];
  bx_toolkit_curl_argv (curl, url, argv);

  /* The body is held back until curl has ended: a transfer that fails half-way must show
   * the model only the failure, not half a page that looks whole.  curl's --max-time ends
   * it; the runner needs no deadline of its own. */
  struct bx_command cmd = {
    .argv = argv,
    .keep_output = true,
    .output_cap = BX_FETCH_BODY_MAX + TRAILER_ROOM,
    .error_keep = STDERR_KEEP,
    .deadline = BX_NO_DEADLINE,
  };
  struct bx_command_result r;
  bx_command_run (&cmd, &r);
  bool fits = r.end != BX_COMMAND_CAPPED;
  bx_command_reap (&r, 0);
  cleanup_free char *body = steal_pointer (&r.out);
  size_t body_len = r.out_len;
  cleanup_free char *errbuf = steal_pointer (&r.err);
  bx_command_result_clear (&r);

  if (r.end == BX_COMMAND_NOT_RUN)
    {
      char buf[128];
      cleanup_free char *reason = bx_xasprintf ("cannot run %s: %s", curl,
                                                bx_toolkit_reason (r.spawn_errno, buf, sizeof buf));
      return refuse (out_fd, url, reason);
    }
  bool ok = r.end == BX_COMMAND_EXITED && r.exit_code == 0;

  /* TRAILER_ROOM is only room to read into: the body itself may not pass the limit. */
  if (!fits || (ok && body_len > BX_FETCH_BODY_MAX + TRAILER_LEN))
    return refuse (out_fd, url, "the response is larger than " BX_STR (BX_FETCH_BODY_MAX) " bytes");

  if (ok)
    {
      if (body_len > 0 && bx_toolkit_write (out_fd, body, body_len, &err) < 0)
        return bx_toolkit_misused ("%s", bx_error_msg (err));
      return BX_TOOLKIT_DONE;
    }

  size_t line = strcspn (errbuf, "\r\n");
  errbuf[line] = '\0';
  cleanup_free char *words
      = r.end == BX_COMMAND_EXITED ? proxy_refusal (r.exit_code, errbuf) : NULL;
  if (words != NULL)
    return refuse (out_fd, url, words);
  if (line > 0)
    return refuse (out_fd, url, errbuf);
  cleanup_free char *reason = r.end == BX_COMMAND_SIGNALED
                                  ? bx_xasprintf ("curl was killed by signal %d", r.signal)
                                  : bx_xasprintf ("curl exited with status %d", r.exit_code);
  return refuse (out_fd, url, reason);
}
