/* SPDX-License-Identifier: Apache-2.0 */
/* One tool call, from the connection brokerd took to its answer.  Every call lives the same
 * four steps, all in call.c:
 *
 *   read    bx_call_read    the request frame, within request_timeout_ms, and its checks
 *   decide  bx_call_decide  the tool and its arguments, then policy against the grants
 *                           serving now (held until the call ends: a reload may come)
 *   run     bx_call_run     an allowed call's "running" audit line, then the module's run
 *   finish  bx_call_finish  the final audit line, the metrics, the answer
 *
 * A step that ends the call early (a bad frame, an unknown tool) sets its answer and outcome
 * and returns false; bx_call_finish then logs and sends it like any other.  A call whose
 * grant asks for approval is parked by approvals.c between decide and run: it keeps the
 * same object, and approvals.c either runs and finishes it or ends it (bx_call_end).
 *
 * Fail closed: an allowed call whose "running" line cannot be written does not run (it
 * answers BX_AUDIT_NOT_RUN), and a result whose final line cannot be written is withheld
 * (BX_AUDIT_WITHHELD). */
#ifndef BX_BROKER_CALL_H
#define BX_BROKER_CALL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bx/message.h"

#include "audit.h"
#include "outcome.h"
#include "policy.h"
#include "runner.h"

struct brokerd;
struct bx_config_hold;

struct bx_call
{
  struct brokerd *brokerd; /* the brokerd it runs in */
  int fd;                  /* the connection; the call closes it */
  int64_t uid, pid;        /* the peer's (SO_PEERCRED); -1 unknown */
  /* Clocks: the start (monotonic ms, for the audit log's duration) and, for the metrics,
   * the time to the decision and the module's run (-1: not yet, or nothing ran). */
  int64_t started_ms;
  int64_t t0_ns, decide_ns, run_ns;
  /* The request: the envelope's strings point into FRAME, which lives as long as the call. */
  json_t *frame;
  struct bx_envelope env;
  const char *id;
  /* The decision, and the grants it points into. */
  struct bx_decision decision;
  struct bx_config_hold *hold;
  /* The audit record every line of the call is written from, and the approval its lines
   * carry (a waiting call's, or the remembered one it runs on). */
  struct bx_audit_record rec;
  struct bx_audit_approval approval;
  char approval_id[33];
  /* The answer, and how long it may take to write. */
  json_t *answer;
  int64_t answer_ms;
  struct bx_run_report report;
  bool probe; /* the connection closed without a byte: not a call at all */
  /* A grants_request: answered from the config, nothing decided, run or logged. */
  bool grants_only;
  char *owned_reason;
  char *owned_tool;
};

/* A call taken on FD (owned from now) from the peer UID, PID ((uid_t)-1, (pid_t)-1 when the
 * kernel could not tell): its clocks start and the metrics count it in flight. */
struct bx_call *bx_call_new (struct brokerd *brokerd, int fd, uid_t uid, pid_t pid);

/* Reads and checks the request.  False when the call ends here (the client is answered at
 * bx_call_finish: an `error` frame, or nothing for a connection that sent nothing). */
bool bx_call_read (struct bx_call *call);
/* Parses the tool and its arguments and decides.  False when the call ends here: a tool or
 * arguments the model got wrong are `denied` with the reason. */
bool bx_call_decide (struct bx_call *call);
/* Runs a decided call: an allowed one through the module, after its "running" line; a
 * denied one gets its denial. */
void bx_call_run (struct bx_call *call);
/* Ends a call without running it: OUTCOME denied, failed or error answers REASON that way;
 * cancelled answers nothing (the client left).  The answer may take WITHIN_MS to write. */
void bx_call_end (struct bx_call *call, enum bx_outcome outcome, const char *reason,
                  int64_t within_ms);
/* A line before the end (pending, running) with OUTCOME.  0, or -1 when it could not be
 * written: it is logged and counted, and the call must not go on. */
int bx_call_log (struct bx_call *call, enum bx_outcome outcome);
/* The final audit line, the call's end in the metrics, then the answer.  The line comes
 * first: it exists even when the client is gone, and once the answer is out the client's
 * next call may come at once. */
void bx_call_finish (struct bx_call *call);
/* The connection, taken back from the call (which then does not close it). */
int bx_call_take_fd (struct bx_call *call);
/* Frees CALL, closes its connection and lets its grants go. */
void bx_call_free (struct bx_call *call);

#endif
