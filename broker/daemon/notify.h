/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd and systemd: readiness and status (sd_notify), socket activation, and log lines
 * for the journal.
 *
 * Everything here also works without systemd: with no NOTIFY_SOCKET the notifications are
 * no-ops, with no passed socket brokerd binds its own, and with standard error not connected
 * to the journal (JOURNAL_STREAM, and the journal's socket there) log lines are plain
 * "brokerd: ..." lines. */
#ifndef BX_BROKER_NOTIFY_H
#define BX_BROKER_NOTIFY_H

#include <stdbool.h>
#include <syslog.h>

#include "bx/error.h"

#include "config.h"

/* READY=1 with a STATUS= line: after the socket listens and the module was created. */
void bx_notify_ready (const struct bx_config *config, const char *module_name);
/* STATUS= with the calls in flight. */
void bx_notify_in_flight (unsigned in_flight);
void bx_notify_reloading (void);
void bx_notify_reloaded (const struct bx_config *config);
void bx_notify_stopping (void);

/* The listening socket systemd passed (socket activation, LISTEN_FDS): 1 and *FD when one
 * was passed; 0 when none was (brokerd binds its own); -1 and ERR when what was passed is
 * not one Unix stream socket listening on CONFIG's socket path. */
int bx_notify_listen_fd (const struct bx_config *config, int *fd, bx_error *err);

/* Whether standard error is the journal's stream (JOURNAL_STREAM names its device and
 * inode) and the journal's socket is there. */
bool bx_journal_is_stderr (void);

/* Call context for a log line; each NULL when unknown. */
struct bx_log_context
{
  const char *call;
  const char *session;
  const char *tool;
  long grant; /* 1-based; 0 for none */
};

/* Where log lines go from now on: the journal (JOURNAL true), or standard error (the
 * default).  brokerd sets it once, before any thread starts. */
void bx_log_to_journal (bool journal);

/* One log line at syslog PRIORITY.  To the journal with PRIORITY and the context as fields
 * BOXMAKER_CALL, BOXMAKER_SESSION, BOXMAKER_TOOL, BOXMAKER_GRANT; otherwise
 * "brokerd: MESSAGE" on standard error in one write. */
void bx_log (int priority, const struct bx_log_context *context, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* The call the calling thread is running in the module, for the module's own log lines: set
 * (CONTEXT) around the module's run() and cleared (NULL) after it.  A module logs through
 * brokerd's callback, which knows no call; a line it logs from the thread that runs the call
 * is that call's.  Lines from threads of its own carry no call. */
void bx_log_set_running (const struct bx_log_context *context);
/* The context set on this thread, or NULL. */
const struct bx_log_context *bx_log_running (void);

/* The same for a TEXT that goes out as it is, without "brokerd: " on standard error: a
 * config error, which starts with FILE:LINE:COLUMN. */
void bx_log_bare (int priority, const char *text);

#endif
