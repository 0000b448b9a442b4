/* SPDX-License-Identifier: Apache-2.0 */
/* The names of decisions, outcomes and approval states.  See outcome.h. */
#include "outcome.h"

static const char *const decision_names[BX_DECISION_COUNT] = {
  [BX_DECISION_ALLOWED] = "allowed",
  [BX_DECISION_DENIED] = "denied",
  [BX_DECISION_ERROR] = "error",
};

static const char *const outcome_names[BX_OUTCOME_COUNT] = {
  [BX_OUTCOME_RESULT] = "result",       [BX_OUTCOME_FAILED] = "failed",
  [BX_OUTCOME_DENIED] = "denied",       [BX_OUTCOME_ERROR] = "error",
  [BX_OUTCOME_CANCELLED] = "cancelled", [BX_OUTCOME_RUNNING] = "running",
  [BX_OUTCOME_PENDING] = "pending",
};

static const char *const state_names[BX_APPROVAL_STATE_COUNT] = {
  [BX_APPROVAL_PENDING] = "pending",       [BX_APPROVAL_APPROVED] = "approved",
  [BX_APPROVAL_DECLINED] = "declined",     [BX_APPROVAL_EXPIRED] = "expired",
  [BX_APPROVAL_CANCELLED] = "cancelled",   [BX_APPROVAL_STOPPED] = "stopped",
  [BX_APPROVAL_REMEMBERED] = "remembered",
};

const char *
bx_call_decision_name (enum bx_call_decision d)
{
  return (unsigned)d < BX_DECISION_COUNT ? decision_names[d] : "?";
}

const char *
bx_outcome_name (enum bx_outcome o)
{
  return (unsigned)o < BX_OUTCOME_COUNT ? outcome_names[o] : "?";
}

const char *
bx_approval_state_name (enum bx_approval_state s)
{
  return (unsigned)s < BX_APPROVAL_STATE_COUNT ? state_names[s] : "?";
}
