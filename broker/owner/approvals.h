/* SPDX-License-Identifier: Apache-2.0 */
/* Approvals: a call whose grant says `approval: always` or `once_per_session` waits for a
 * person (docs/config.md, "Approvals"; docs/protocol.md, "The admin socket").
 *
 * The worker that read the call hands it over here and goes back to accept(): the call
 * (call.h) is parked with what its wait adds (a random 128-bit approval id, the canonical
 * argument bytes, the summary, the expiry).  brokerd's loop is the waiter: every waiting
 * connection is one of its io sources and the next expiry its timer, so a thousand waiting
 * calls cost descriptors, not threads, and never take a slot from the calls that need no
 * approval.  Workers and the owners' connections (admin.h, also on the loop) change the
 * waiting calls under a lock and wake the loop through an eventfd; only the loop's thread calls
 * sd_event.  An approved call runs in a thread of its own, exactly the bytes stored; every other
 * end is a final `denied`, or nothing when the client left.  Every change is an audit line. */
#ifndef BX_BROKER_APPROVALS_H
#define BX_BROKER_APPROVALS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bx/error.h"

#include "audit.h"
#include "config.h"
#include "module_loader.h"
#include "policy.h"

/* At most this many calls wait at once; past it a call that needs approval is denied. */
#define BX_APPROVALS_MAX_PENDING 256
/* And at most this many of one caller's uid: one local user cannot take every place and
 * keep another's calls from reaching the owner.  A fixed share, not a config key: an eighth
 * of the places is more calls than a person reviews at once, and eight uids must work
 * together to fill them. */
#define BX_APPROVALS_MAX_PENDING_PER_UID 32
/* The hex digits of an approval id (128 random bits). */
#define BX_APPROVAL_ID_LEN 32

struct bx_approvals;
struct bx_call;
struct brokerd;

/* Makes the approvals, whose waiting calls are watched by BROKERD's loop.  BROKERD (daemon.h:
 * the config, module and audit log the parked calls run with, the canceller that watches
 * approved calls' clients, the loop) must outlive them. */
int bx_approvals_start (struct brokerd *brokerd, struct bx_approvals **out, bx_error *err);

/* The server's hook, after the call was decided: false when it needs no approval (A is NULL,
 * the call is denied, or its grant says never) or runs on a remembered once_per_session
 * approval (then its audit record carries that approval, state "remembered"); the caller
 * then runs it as usual.  Such an approval covers the calls of the same caller uid, session
 * and tool, in the same folder (read_file, write_file) or host (http_fetch), to a grant of
 * the same content, wherever it stands in the file.  True when CALL was taken: it is parked
 * here, and its pending_approval frame, its audit lines (pending, running when approved,
 * final), its final answer and its end are all done from here.  The request's "peer" plays
 * no part in the approval. */
bool bx_approvals_take (struct bx_approvals *a, struct bx_call *call);

/* After a reload to CONFIG: forgets every remembered approval whose grant CONFIG no longer
 * has with the same content; a call waiting now is not remembered when approved later.
 * Nothing when A is NULL. */
void bx_approvals_forget_changed (struct bx_approvals *a, const struct bx_config *config);

/* ---- The owners' side (admin.c). ----------------------------------------------- */

/* Every waiting call as a JSON array of objects (docs/protocol.md); *SEQ (if not NULL) gets
 * the number of the last event, for bx_approvals_events. */
json_t *bx_approvals_list (struct bx_approvals *a, uint64_t *seq);

/* Approves or declines the waiting call APPROVAL for a person with uid APPROVER.  REASON
 * (declining only, may be NULL) reaches the model made safe.  0, or -1 with *ERR for the
 * owner when no call with that id waits (a wrong id, one already answered, or expired). */
int bx_approvals_answer (struct bx_approvals *a, const char *approval, bool approve,
                         const char *reason, uid_t approver, bx_error *err);

/* The events after *SEQ (a JSON array, possibly empty), without waiting; *SEQ moves past
 * them.  NULL once brokerd stopped and every event was read. */
json_t *bx_approvals_events (struct bx_approvals *a, uint64_t *seq);

/* Has brokerd's loop call NOTIFY (CTX) after events were posted, and once the approvals
 * finished (bx_approvals_events then ends with NULL): the owners' watchers then read them.
 * One NOTIFY at most; NULL removes it. */
void bx_approvals_on_events (struct bx_approvals *a, void (*notify) (void *ctx), void *ctx);

/* Starts stopping (the server calls it as it stops accepting): every waiting call gets its
 * final answer ("brokerd stopped ...") now, and calls taken after this are denied at once.
 * Once only; a later call does nothing. */
void bx_approvals_stop_waiting (struct bx_approvals *a);
/* Stops: bx_approvals_stop_waiting when that has not been done, then waits until DEADLINE
 * (bx/deadline.h: the grace period that began with the signal) for approved calls still
 * running and owners' connections; approved calls still running then are cancelled and get
 * two more seconds to end.  Returns how many are left: while any is, A, the module, audit and
 * config stay in use. */
unsigned bx_approvals_stop (struct bx_approvals *a, int64_t deadline);
/* Frees a stopped A; only when nothing can use it any more (no worker either). */
void bx_approvals_free (struct bx_approvals *a);

/* For admin.c, on brokerd's loop: counts an owner's connection in or out of the ones stop
 * waits for.  Enter fails (false) once brokerd is stopping. */
bool bx_approvals_enter (struct bx_approvals *a);
void bx_approvals_leave (struct bx_approvals *a);

/* An approval_timeout of MS (whole seconds) in its largest whole unit: "90s", "5m", "1h"
 * (for 60m).  Newly allocated. */
char *bx_approvals_timeout_text (int64_t ms);

/* The summary a person reads for DECISION: the tool, the folder or host, then the path,
 * command or URL, each cut and made safe (printable ASCII only, every other byte as \xNN);
 * every cut shows "...", and a summary with a cut anywhere ends in "...".  Newly
 * allocated. */
char *bx_approvals_summary (const struct bx_decision *decision);

#endif
