/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd and systemd.  See notify.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
/* Every entry would say notify.c, emit(): no help to anyone reading the journal. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "bx/cleanup.h"

#include "notify.h"

void
bx_notify_ready (const struct bx_config *cfg, const char *module_name)
{
  sd_notifyf (0, "READY=1\nSTATUS=listening on %s with runtime %s, %zu grant(s)\nMAINPID=%lu",
              cfg->socket, module_name, cfg->n_grants, (unsigned long)getpid ());
}

void
bx_notify_in_flight (unsigned in_flight)
{
  sd_notifyf (0, "STATUS=serving, %u call(s) in flight", in_flight);
}

void
bx_notify_reloading (void)
{
  sd_notify (0, "RELOADING=1\nSTATUS=reloading the config");
}

void
bx_notify_reloaded (const struct bx_config *cfg)
{
  sd_notifyf (0, "READY=1\nSTATUS=serving, %zu grant(s)", cfg->n_grants);
}

void
bx_notify_stopping (void)
{
  sd_notify (0, "STOPPING=1\nSTATUS=stopping: running calls finish");
}

int
bx_notify_listen_fd (const struct bx_config *cfg, int *fd, bx_error *err)
{
  /* unset_environment: the module and the sandboxes it starts must not see LISTEN_FDS. */
  int n = sd_listen_fds (1);
  if (n < 0)
    return bx_error_set (err, -n, "socket activation: cannot read LISTEN_FDS");
  if (n == 0)
    return 0;
  if (n != 1)
    return bx_error_setc (err, EINVAL,
                          "socket activation: %d sockets were passed; brokerd takes one", n);
  int passed = SD_LISTEN_FDS_START;
  if (sd_is_socket_unix (passed, SOCK_STREAM, 1, cfg->socket, 0) <= 0)
    return bx_error_setc (err, EINVAL,
                          "socket activation: the socket passed is not a Unix stream socket "
                          "listening on %s (the config's socket)",
                          cfg->socket);
  /* systemd passes it without close-on-exec; a sandbox must not inherit it. */
  int flags = fcntl (passed, F_GETFD);
  if (flags < 0 || fcntl (passed, F_SETFD, flags | FD_CLOEXEC) < 0)
    return bx_error_set (err, errno, "socket activation: cannot set close-on-exec");
  *fd = passed;
  return 1;
}

bool
bx_journal_is_stderr (void)
{
  const char *e = getenv ("JOURNAL_STREAM");
  if (e == NULL)
    return false;
  unsigned long long dev, ino;
  if (sscanf (e, "%llu:%llu", &dev, &ino) != 2)
    return false;
  struct stat st;
  if (fstat (STDERR_FILENO, &st) < 0)
    return false;
  /* sd_journal_send drops a message silently when the journal's socket is missing: then
   * standard error is the better place. */
  return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino
         && access ("/run/systemd/journal/socket", W_OK) == 0;
}

/* Set once, before brokerd starts its threads: only read after that. */
static bool to_journal;

void
bx_log_to_journal (bool journal)
{
  to_journal = journal;
}

/* One line: MSG to the journal, or PREFIX and MSG to standard error. */
static void
emit (int priority, const struct bx_log_context *ctx, const char *prefix, const char *msg)
{
  if (to_journal)
    {
      static const struct bx_log_context none = { 0 };
      if (ctx == NULL)
        ctx = &none;
      /* Absent fields are left out rather than sent empty. */
      cleanup_free char *call = ctx->call ? bx_xasprintf ("BOXMAKER_CALL=%s", ctx->call) : NULL;
      cleanup_free char *session
          = ctx->session ? bx_xasprintf ("BOXMAKER_SESSION=%s", ctx->session) : NULL;
      cleanup_free char *tool = ctx->tool ? bx_xasprintf ("BOXMAKER_TOOL=%s", ctx->tool) : NULL;
      cleanup_free char *grant
          = ctx->grant > 0 ? bx_xasprintf ("BOXMAKER_GRANT=%ld", ctx->grant) : NULL;
      const char *extra[4];
      int n = 0;
      if (call)
        extra[n++] = call;
      if (session)
        extra[n++] = session;
      if (tool)
        extra[n++] = tool;
      if (grant)
        extra[n++] = grant;
      int r;
      switch (n)
        {
        case 0:
          r = sd_journal_send ("MESSAGE=%s", msg, "PRIORITY=%d", priority,
                               "SYSLOG_IDENTIFIER=brokerd", NULL);
          break;
        case 1:
          r = sd_journal_send ("MESSAGE=%s", msg, "PRIORITY=%d", priority,
                               "SYSLOG_IDENTIFIER=brokerd", "%s", extra[0], NULL);
          break;
        case 2:
          r = sd_journal_send ("MESSAGE=%s", msg, "PRIORITY=%d", priority,
                               "SYSLOG_IDENTIFIER=brokerd", "%s", extra[0], "%s", extra[1], NULL);
          break;
        case 3:
          r = sd_journal_send ("MESSAGE=%s", msg, "PRIORITY=%d", priority,
                               "SYSLOG_IDENTIFIER=brokerd", "%s", extra[0], "%s", extra[1], "%s",
                               extra[2], NULL);
          break;
        default:
          r = sd_journal_send ("MESSAGE=%s", msg, "PRIORITY=%d", priority,
                               "SYSLOG_IDENTIFIER=brokerd", "%s", extra[0], "%s", extra[1], "%s",
                               extra[2], "%s", extra[3], NULL);
          break;
        }
      if (r >= 0)
        return;
      /* The journal went away: the plain line below still reaches standard error. */
    }
  cleanup_free char *line = bx_xasprintf ("%s%s\n", prefix, msg);
  if (write (STDERR_FILENO, line, strlen (line)) < 0)
    return; /* nowhere else to say it */
}

void
bx_log (int priority, const struct bx_log_context *ctx, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *msg = bx_xvasprintf (fmt, ap);
  va_end (ap);
  emit (priority, ctx, "brokerd: ", msg);
}

/* Per thread, not per process: each worker runs its own call. */
static _Thread_local const struct bx_log_context *running;

void
bx_log_set_running (const struct bx_log_context *ctx)
{
  running = ctx;
}

const struct bx_log_context *
bx_log_running (void)
{
  return running;
}

void
bx_log_bare (int priority, const char *text)
{
  emit (priority, NULL, "", text);
}
