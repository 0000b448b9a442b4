/* SPDX-License-Identifier: Apache-2.0 */
/* http_fetch: curl with a fixed argument list (bx_toolkit_curl_argv) and the URL as one
 * argument of its own, never through a shell.  The body and curl's --write-out trailer go to the
 * model as they are; a failure is one line, the first of what curl said on standard error. */
#include <string.h>

#include "bx/cleanup.h"
#include "bx/command.h"
#include "bx/deadline.h"
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
  if (line > 0)
    return refuse (out_fd, url, errbuf);
  cleanup_free char *reason = r.end == BX_COMMAND_SIGNALED
                                  ? bx_xasprintf ("curl was killed by signal %d", r.signal)
                                  : bx_xasprintf ("curl exited with status %d", r.exit_code);
  return refuse (out_fd, url, reason);
}
