/* SPDX-License-Identifier: Apache-2.0 */
/* How a call was decided and how it ended, with the one table of their names: the audit log
 * writes the names, the metrics count by the enums, approvals report their states. */
#ifndef BX_BROKER_OUTCOME_H
#define BX_BROKER_OUTCOME_H

/* What policy made of a request: "error" when it could not be decided (a frame that could
 * not be read, a tool or arguments that do not parse). */
enum bx_call_decision
{
  BX_DECISION_ALLOWED,
  BX_DECISION_DENIED,
  BX_DECISION_ERROR,
  BX_DECISION_COUNT,
};

/* How a call ended.  The final outcomes come first: a call's last audit line has one of
 * them, and the metrics count calls by them.  "running" (an allowed call's line before it
 * runs) and "pending" (a call that begins to wait for approval) come before the end. */
enum bx_outcome
{
  BX_OUTCOME_RESULT,
  BX_OUTCOME_FAILED,
  BX_OUTCOME_DENIED,
  BX_OUTCOME_ERROR,
  BX_OUTCOME_CANCELLED,
  BX_OUTCOME_FINAL_COUNT,
  BX_OUTCOME_RUNNING = BX_OUTCOME_FINAL_COUNT,
  BX_OUTCOME_PENDING,
  BX_OUTCOME_COUNT,
};

/* Where an approval stands, in its audit lines and the owners' events. */
enum bx_approval_state
{
  BX_APPROVAL_PENDING,
  BX_APPROVAL_APPROVED,
  BX_APPROVAL_DECLINED,
  BX_APPROVAL_EXPIRED,
  BX_APPROVAL_CANCELLED,  /* the client left */
  BX_APPROVAL_STOPPED,    /* brokerd stopped first */
  BX_APPROVAL_REMEMBERED, /* a once_per_session approval given to an earlier call */
  BX_APPROVAL_STATE_COUNT,
};

/* The names as the audit log, the metrics and the admin socket spell them; "?" out of
 * range. */
const char *bx_call_decision_name (enum bx_call_decision decision);
const char *bx_outcome_name (enum bx_outcome outcome);
const char *bx_approval_state_name (enum bx_approval_state state);

#endif
