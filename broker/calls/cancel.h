/* SPDX-License-Identifier: Apache-2.0 */
/* Cancellation (ABI 1.1): while a call runs, brokerd's loop watches every running call's client
 * socket for POLLRDHUP and POLLHUP.  When a client hangs up (POLLHUP: it closed the
 * connection, or died), its call's spec is cancelled, which makes the descriptor the module
 * polls readable.  POLLRDHUP alone is a client that shut down its sending side: it may still
 * read the answer, so the call goes on (approvals.c treats a waiting call the same way).  When
 * brokerd stops and its grace period is over, every call still running is cancelled the same way.
 *
 * One epoll set for the whole server, itself one io source of brokerd's loop (with a timer),
 * rather than a thread per call: the workers add and remove their calls' clients under a
 * lock (epoll_ctl is safe from any thread) and never touch the loop.  A call's
 * client joins the epoll set only once its run has lasted BX_CANCEL_WATCH_AFTER_MS: most
 * runs end sooner, and then watching them costs no system call at all; a client that hangs
 * up during a longer run is still seen at once, and one gone before is seen at that point. */
#ifndef BX_BROKER_CANCEL_H
#define BX_BROKER_CANCEL_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include <boxmaker/runtime.h>

#include "bx/error.h"

struct bx_canceller;

/* How long a run goes before its client is watched. */
#define BX_CANCEL_WATCH_AFTER_MS 10

/* One watched call; lives in the caller's frame between watch and unwatch. */
struct bx_cancel_watch
{
  struct bx_canceller *canceller;
  int client_fd;
  bx_run_spec *spec;
  uint64_t id;
  int64_t since_ns; /* when the watch started (CLOCK_MONOTONIC) */
  bool listed;      /* on the canceller's list */
  bool registered;  /* in its epoll set */
  bool cancelled;   /* set (under the canceller's lock) when the call was cancelled */
  struct bx_cancel_watch *next;
};

/* Makes a canceller whose sources are LOOP's. */
int bx_canceller_start (sd_event *loop, struct bx_canceller **out, bx_error *err);
/* On the loop's thread: removes its sources and frees it; no watch may be registered. */
void bx_canceller_stop (struct bx_canceller *canceller);

/* Starts watching CLIENT_FD for SPEC's call.  A client already gone cancels at once. */
void bx_cancel_watch_start (struct bx_canceller *canceller, struct bx_cancel_watch *watch,
                            int client_fd, bx_run_spec *spec);
/* Stops watching; true when the call was cancelled. */
bool bx_cancel_watch_end (struct bx_cancel_watch *watch);

/* Cancels every call being watched (brokerd stopping past its grace period). */
void bx_canceller_cancel_all (struct bx_canceller *canceller);

#endif
