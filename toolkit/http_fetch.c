/* http_fetch: curl with a fixed argument list (seed 000 s6) and the URL as one argument of its
 * own, never through a shell.  The body and curl's --write-out trailer go to the model as
 * they are; a failure is one line, the first of what curl said on standard error. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bx/cleanup.h"
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

/* Reads curl's standard output (all of it, up to the cap) and standard error (the start)
 * until both are closed.  Returns false when the body passed the cap. */
static bool
collect (int out_r, int err_r, char *body, size_t body_cap, size_t *body_len, char *errbuf,
         size_t *err_len)
{
  int fds[2] = { out_r, err_r };
  char scratch[65536];
  while (fds[0] >= 0 || fds[1] >= 0)
    {
      struct pollfd p[2]
          = { { .fd = fds[0], .events = POLLIN }, { .fd = fds[1], .events = POLLIN } };
      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return true;
        }
      for (int i = 0; i < 2; i++)
        {
          if (fds[i] < 0 || p[i].revents == 0)
            continue;
          char *dst = scratch;
          size_t room = sizeof scratch;
          if (i == 0)
            {
              dst = body + *body_len;
              room = body_cap - *body_len;
              if (room == 0)
                return false;
            }
          ssize_t n = read (fds[i], dst, room);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            {
              fds[i] = -1;
              continue;
            }
          if (i == 0)
            *body_len += n;
          else if (*err_len < STDERR_KEEP)
            {
              size_t keep = (size_t)n < STDERR_KEEP - *err_len ? (size_t)n : STDERR_KEEP - *err_len;
              memcpy (errbuf + *err_len, scratch, keep);
              *err_len += keep;
            }
        }
    }
  return true;
}

int
bx_toolkit_http_fetch (const struct bx_tool_args *args, const char *curl, int out_fd)
{
  const char *url = args->url;
  cleanup_error bx_error err = NULL;
  const char *argv[BX_TOOLKIT_CURL_ARGC + 1];
  bx_toolkit_curl_argv (curl, url, argv);

  int op[2], ep[2];
  if (pipe2 (op, O_CLOEXEC) < 0)
    return bx_toolkit_misused ("cannot make a pipe: %s", strerror (errno));
  cleanup_close int out_r = op[0];
  cleanup_close int out_w = op[1];
  if (pipe2 (ep, O_CLOEXEC) < 0)
    return bx_toolkit_misused ("cannot make a pipe: %s", strerror (errno));
  cleanup_close int err_r = ep[0];
  cleanup_close int err_w = ep[1];

  struct bx_toolkit_spawn spawn = {
    .argv = argv,
    .cwd = NULL,
    .stdin_fd = -1,
    .stdout_fd = out_w,
    .stderr_fd = err_w,
    .own_group = false,
  };
  pid_t pid;
  enum bx_toolkit_spawn_stage stage;
  if (bx_toolkit_spawn (&spawn, &pid, &stage, &err) < 0)
    {
      char buf[128];
      cleanup_free char *reason = bx_xasprintf (
          "cannot run %s: %s", curl, bx_toolkit_reason (bx_error_code (err), buf, sizeof buf));
      return refuse (out_fd, url, reason);
    }
  close (steal_fd (&out_w));
  close (steal_fd (&err_w));

  /* The body is held back until curl has ended: a transfer that fails half-way must show
   * the model only the failure, not half a page that looks whole. */
  const size_t body_cap = (size_t)BX_FETCH_BODY_MAX + TRAILER_ROOM;
  cleanup_free char *body = bx_xmalloc (body_cap);
  size_t body_len = 0, err_len = 0;
  char errbuf[STDERR_KEEP + 1];
  bool fits = collect (out_r, err_r, body, body_cap, &body_len, errbuf, &err_len);
  if (!fits)
    kill (pid, SIGKILL);
  int status = 0;
  bx_toolkit_waitpid (pid, &status, 0);

  /* TRAILER_ROOM is only room to read into: the body itself may not pass the limit. */
  if (!fits
      || (WIFEXITED (status) && WEXITSTATUS (status) == 0
          && body_len > (size_t)BX_FETCH_BODY_MAX + TRAILER_LEN))
    return refuse (out_fd, url, "the response is larger than " BX_STR (BX_FETCH_BODY_MAX) " bytes");

  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    {
      if (bx_toolkit_write (out_fd, body, body_len, &err) < 0)
        return bx_toolkit_misused ("%s", bx_error_msg (err));
      return BX_TOOLKIT_DONE;
    }

  errbuf[err_len] = '\0';
  size_t line = strcspn (errbuf, "\r\n");
  errbuf[line] = '\0';
  if (line > 0)
    return refuse (out_fd, url, errbuf);
  cleanup_free char *reason
      = WIFSIGNALED (status) ? bx_xasprintf ("curl was killed by signal %d", WTERMSIG (status))
                             : bx_xasprintf ("curl exited with status %d", WEXITSTATUS (status));
  return refuse (out_fd, url, reason);
}
