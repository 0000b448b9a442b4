/* SPDX-License-Identifier: Apache-2.0 */
/* One tool call: read, decide, run, finish.  See call.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bx/cleanup.h"
#include "bx/deadline.h"
#include "bx/frame.h"
#include "bx/printable.h"
#include "bx/tool_args.h"
#include "bx/utf8.h"

#include "call.h"
#include "daemon.h"
#include "grants_view.h"
#include "mcp_server.h"

/* How long a refusal or an error frame may take to write: the socket buffer of a fresh
 * connection holds it at once, so this only matters for a client that does not read. */
#define SHORT_WRITE_MS 200

struct bx_call *
bx_call_new (struct brokerd *brokerd, int fd, uid_t uid, pid_t pid)
{
  struct bx_call *c = bx_xzalloc (sizeof *c);
  c->brokerd = brokerd;
  c->fd = fd;
  c->uid = uid == (uid_t)-1 ? -1 : (int64_t)uid;
  c->pid = pid == (pid_t)-1 ? -1 : (int64_t)pid;
  c->started_ms = bx_now_ms ();
  c->t0_ns = bx_now_ns ();
  c->decide_ns = -1;
  c->run_ns = -1;
  c->rec.content_bytes = -1;
  c->report.outcome = BX_OUTCOME_FAILED;
  c->answer_ms = SHORT_WRITE_MS;
  bx_audit_set_peer_ids (&c->rec, uid, pid);
  bx_metrics_call_started (brokerd->metrics);
  return c;
}

static struct bx_log_context
log_context (const struct bx_call *c)
{
  return (struct bx_log_context){
    .call = c->rec.call, .session = c->rec.session, .tool = c->rec.tool, .grant = (long)c->rec.grant
  };
}

/* An audit line could not be written (errno says why): counted and logged; BEFORE when it
 * was the line before the call waits or runs, which then does not. */
static void
audit_failed (struct bx_call *c, bool before)
{
  int e = errno;
  struct bx_log_context ctx = log_context (c);
  bx_metrics_audit_failed (c->brokerd->metrics);
  bx_log (LOG_CRIT, &ctx, "call %s: cannot write the audit log%s: %s",
          c->rec.call ? c->rec.call : "?", before ? ", not running it" : "", strerror (e));
}

void
bx_call_end (struct bx_call *c, enum bx_outcome outcome, const char *reason, int64_t within_ms)
{
  free (c->owned_reason);
  c->owned_reason = reason ? bx_xstrdup (reason) : NULL;
  c->rec.reason = c->owned_reason;
  c->rec.outcome = outcome;
  json_decref (c->answer);
  switch (outcome)
    {
    case BX_OUTCOME_DENIED:
      c->answer = bx_msg_denied (c->id, reason);
      break;
    case BX_OUTCOME_ERROR:
      c->answer = bx_msg_error (c->id, reason);
      break;
    case BX_OUTCOME_CANCELLED:
      c->answer = NULL;
      break;
    default:
      c->answer = bx_msg_failed (c->id, reason);
      break;
    }
  c->answer_ms = within_ms;
}

/* A request brokerd could not take: an `error` frame with DETAIL, answered with ID when
 * there is a usable one. */
static bool
refuse (struct bx_call *c, const char *id, const char *detail)
{
  c->id = id;
  c->rec.decision = BX_DECISION_ERROR;
  bx_call_end (c, BX_OUTCOME_ERROR, detail, SHORT_WRITE_MS);
  return false;
}

/* A request that names a tool we do not have, or arguments the parser refuses: the model
 * wrote them, so the answer is `denied` with the reason, which it can act on. */
static bool
deny_request (struct bx_call *c, const char *reason)
{
  c->rec.decision = BX_DECISION_ERROR;
  bx_call_end (c, BX_OUTCOME_DENIED, reason, c->brokerd->config->request_timeout_ms);
  return false;
}

/* A grants_request: the grants of the config serving now, as a peer may see them.  Every
 * grant applies to every peer (no grant is matched by uid), so the answer is the same for
 * all; it is read under the same deadline and limits as a tool call. */
static bool
answer_grants (struct bx_call *c, const char *id)
{
  const struct bx_config *grants = NULL;
  c->id = id;
  c->grants_only = true;
  c->hold = bx_live_config_get (c->brokerd->live, &grants);
  c->answer = bx_msg_grants (id, bx_grants_view (grants, c->brokerd->mcp_lists));
  c->answer_ms = c->brokerd->config->request_timeout_ms;
  return false;
}

/* ---- Read. --------------------------------------------------------------------------- */

/* The frame's "id" when it is a valid id, for answering a frame that could not be taken
 * apart; NULL otherwise.  Compared with its JSON length: "c1\u0000x" is not "c1". */
static const char *
usable_id (const json_t *frame)
{
  const json_t *j = json_object_get (frame, "id");
  const char *id = json_string_value (j);
  if (id == NULL || strlen (id) != json_string_length (j) || !bx_valid_id (id))
    return NULL;
  return id;
}

bool
bx_call_read (struct bx_call *c)
{
  const struct bx_config *cfg = c->brokerd->config;
  cleanup_error bx_error err = NULL;
  if (bx_frame_read (c->fd, bx_deadline_in (cfg->request_timeout_ms), &c->frame, &err) < 0)
    {
      cleanup_free char *detail = NULL;
      switch (bx_error_code (err))
        {
        case BX_FRAME_CLOSED:
          /* Connected and left without a byte: a probe (another brokerd checking whether
           * this socket is live), not a call. */
          c->probe = true;
          return false;
        case BX_FRAME_TIMED_OUT:
          detail = bx_xasprintf ("no complete request within %lld ms",
                                 (long long)cfg->request_timeout_ms);
          break;
        case BX_FRAME_TOO_LARGE:
          detail = bx_xasprintf ("bad frame: %s (at most %u bytes)", bx_error_msg (err),
                                 (unsigned)BX_FRAME_MAX);
          break;
        default:
          detail = bx_xasprintf ("bad frame: %s", bx_error_msg (err));
          break;
        }
      return refuse (c, NULL, detail);
    }

  /* The version first: a later version may shape its messages differently, and the client
   * deserves to hear that it speaks the wrong one rather than what failed to parse. */
  json_t *v = json_object_get (c->frame, "v");
  if (json_is_integer (v) && json_integer_value (v) != BX_PROTOCOL_VERSION)
    {
      cleanup_free char *detail
          = bx_xasprintf ("unsupported protocol version %lld: this brokerd speaks %d",
                          (long long)json_integer_value (v), BX_PROTOCOL_VERSION);
      return refuse (c, usable_id (c->frame), detail);
    }
  struct bx_envelope *env = &c->env;
  if (bx_envelope_parse (c->frame, env, &err) < 0)
    {
      /* Answer with the id when there is a usable one, so the client can match it. */
      cleanup_free char *detail = bx_xasprintf ("bad message: %s", bx_error_msg (err));
      return refuse (c, usable_id (c->frame), detail);
    }
  const char *id = bx_valid_id (env->id) ? env->id : NULL;
  const char *detail = NULL;
  if (id == NULL)
    detail = "bad id: expected 1 to 64 of [A-Za-z0-9_.-]";
  else if (env->type == BX_MSG_GRANTS_REQUEST)
    return env->final ? answer_grants (c, id) : refuse (c, id, "a grants_request must be final");
  else if (env->type != BX_MSG_TOOL_REQUEST)
    detail = "unexpected message: expected a tool_request or a grants_request";
  else if (!env->final)
    detail = "a tool_request must be final";
  else if (!bx_valid_id (env->u.request.call))
    detail = "bad call id: expected 1 to 64 of [A-Za-z0-9_.-]";
  else if (!bx_valid_id (env->u.request.session))
    detail = "bad session id: expected 1 to 64 of [A-Za-z0-9_.-]";
  else if (strcmp (env->id, env->u.request.call) != 0)
    detail = "bad id: the frame's id must equal the request's call";
  if (detail != NULL)
    return refuse (c, id, detail);
  c->id = id;
  c->rec.call = env->u.request.call;
  c->rec.session = env->u.request.session;
  c->rec.tool = env->u.request.tool;
  c->rec.peer = env->u.request.peer;
  return true;
}

/* ---- Decide. ------------------------------------------------------------------------- */

/* A refused name as the audit line keeps it: cut as the refusal shows it (the line is JSON,
 * which escapes the rest), since the whole name could make the line megabytes long. */
static void
cut_logged_tool (struct bx_call *c)
{
  const char *name = c->env.u.request.tool;
  c->owned_tool = bx_xstrndup (name, bx_utf8_cut (name, strlen (name), BX_SHOWN_NAME_MAX));
  c->rec.tool = c->owned_tool;
}

bool
bx_call_decide (struct bx_call *c)
{
  cleanup_error bx_error err = NULL;
  const struct bx_envelope *env = &c->env;
  /* The grants of the config serving now, held until the call ends (a reload may replace
   * them meanwhile; the decision points into these). */
  const struct bx_config *grants = NULL;
  c->hold = bx_live_config_get (c->brokerd->live, &grants);
  enum bx_tool tool;
  struct bx_tool_args args = { 0 };
  bx_sentence mcp_why = { 0 };
  /* SERVER.TOOL: one tools/call of an owner's MCP server (mcp_server.h). */
  if (bx_tool_from_name (env->u.request.tool, &tool) < 0
      && bx_mcp_server_call (grants, env->u.request.tool, env->u.request.arguments, &args, &mcp_why)
             == 0)
    {
      tool = BX_TOOL_MCP_CALL;
      c->rec.mcp_server = true;
    }
  else if (mcp_why.text != NULL)
    {
      cleanup_free char *quoted
          = bx_printable (env->u.request.tool, strlen (env->u.request.tool), BX_SHOWN_NAME_MAX);
      cleanup_free char *reason = bx_xasprintf ("%s: %s", quoted, mcp_why.text);
      cut_logged_tool (c);
      return deny_request (c, reason);
    }
  else if (bx_tool_from_name (env->u.request.tool, &tool) < 0)
    {
      /* The name as sent, made safe and cut: it reaches the model and the operator's
       * terminal, so no control byte of it may pass. */
      const char *name = env->u.request.tool;
      size_t len = strlen (name);
      cleanup_free char *quoted = bx_printable (name, len, BX_SHOWN_NAME_MAX);
      cleanup_free char *reason = bx_xasprintf (
          "unknown tool \"%s\": expected read_file, write_file, shell or http_fetch", quoted);
      cut_logged_tool (c);
      return deny_request (c, reason);
    }
  if (tool != BX_TOOL_MCP_CALL
      && bx_tool_args_from_json (tool, env->u.request.arguments, &args, &err) < 0)
    {
      bx_tool_args_clear (&args);
      return deny_request (c, bx_error_msg (err));
    }
  if (tool == BX_TOOL_WRITE_FILE && args.content != NULL)
    c->rec.content_bytes = (ssize_t)strlen (args.content);

  struct bx_decision *d = &c->decision;
  bx_policy_decide (grants, &args, d);
  /* The summary points into the decision's copy of the arguments, which the call keeps. */
  bx_audit_set_args (&c->rec, &d->args);
  c->decide_ns = bx_now_ns () - c->t0_ns;
  c->rec.decision = d->verdict == BX_ALLOWED ? BX_DECISION_ALLOWED : BX_DECISION_DENIED;
  c->rec.grant = d->verdict == BX_ALLOWED ? (ssize_t)d->grant_index + 1 : 0;
  c->rec.reason = d->reason;
  return true;
}

/* ---- Run. ---------------------------------------------------------------------------- */

int
bx_call_log (struct bx_call *c, enum bx_outcome outcome)
{
  enum bx_outcome final = c->rec.outcome;
  c->rec.outcome = outcome;
  c->rec.duration_ms = bx_now_ms () - c->started_ms;
  int r = bx_audit_write (c->brokerd->audit, &c->rec);
  if (r < 0)
    audit_failed (c, true);
  c->rec.outcome = final;
  return r;
}

void
bx_call_run (struct bx_call *c)
{
  const struct bx_decision *d = &c->decision;
  bool allowed = d->verdict == BX_ALLOWED;
  struct bx_run_report *report = &c->report;
  c->answer_ms = c->brokerd->config->request_timeout_ms;
  json_decref (c->answer);
  if (allowed && bx_call_log (c, BX_OUTCOME_RUNNING) < 0)
    c->answer = bx_msg_failed (c->id, BX_AUDIT_NOT_RUN);
  else
    {
      int64_t t = bx_now_ns ();
      /* Cancelled when its client hangs up, or when brokerd stops past its grace period. */
      c->answer = bx_runner_respond (bx_runtimes_of_grant (c->brokerd->runtimes, d->grant), d,
                                     c->id, c->rec.call, c->rec.session, c->brokerd->canceller,
                                     c->fd, c->brokerd->fair, c->uid, report);
      if (allowed)
        c->run_ns = bx_now_ns () - t;
      if (report->problem != NULL)
        {
          struct bx_log_context ctx = log_context (c);
          bx_log (LOG_ERR, &ctx, "call %s: %s", c->rec.call, report->problem);
        }
    }
  c->rec.outcome = report->outcome;
  c->rec.refused = report->outcome == BX_OUTCOME_RESULT && report->refused;
  c->rec.egress = report->egress;
  c->rec.output_bytes = report->output_bytes;
  c->rec.truncated = report->truncated;
  /* Only a client that asked reads "refused": a 1.0 client refuses a field it does not know. */
  if (report->refused && c->env.u.request.refusals)
    bx_msg_mark_refused (c->answer);
  if (allowed)
    bx_audit_grant_reach (&c->rec, d->grant, d->args.tool);
}

/* ---- Finish. ------------------------------------------------------------------------- */

/* Sends the answer (the call's deadline for it starts now).  The runner keeps results under
 * the frame limit; an answer over it is the last line of defence, and becomes `failed`. */
static void
send_answer (struct bx_call *c)
{
  if (c->answer == NULL)
    return;
  int64_t deadline = bx_deadline_in (c->answer_ms);
  cleanup_error bx_error err = NULL;
  if (bx_frame_write (c->fd, c->answer, deadline, &err) < 0
      && bx_error_code (err) == BX_FRAME_TOO_LARGE)
    {
      struct bx_log_context ctx = log_context (c);
      bx_log (LOG_ERR, &ctx, "call %s: the answer is too large for a frame",
              c->rec.call ? c->rec.call : "?");
      json_t *failed = bx_msg_failed (json_string_value (json_object_get (c->answer, "id")),
                                      "the tool's output is too large to send");
      bx_error_free (&err);
      bx_frame_write (c->fd, failed, deadline, &err);
      json_decref (failed);
    }
}

void
bx_call_finish (struct bx_call *c)
{
  if (c->probe || c->grants_only)
    {
      /* Not a call: no audit line (as for the admin and metrics sockets' requests), and
       * not counted among the calls. */
      bx_metrics_call_left (c->brokerd->metrics);
      send_answer (c);
      return;
    }
  c->rec.duration_ms = bx_now_ms () - c->started_ms;
  if (bx_audit_write (c->brokerd->audit, &c->rec) < 0)
    {
      audit_failed (c, false);
      /* Fail closed: a result whose line is not in the log is withheld. */
      if (c->answer != NULL && c->rec.outcome == BX_OUTCOME_RESULT)
        {
          json_t *failed = bx_msg_failed (json_string_value (json_object_get (c->answer, "id")),
                                          BX_AUDIT_WITHHELD);
          json_decref (c->answer);
          c->answer = failed;
        }
    }
  if (c->decide_ns < 0)
    c->decide_ns = bx_now_ns () - c->t0_ns;
  bx_metrics_call_ended (c->brokerd->metrics, &c->rec, c->decide_ns, c->run_ns);
  send_answer (c);
}

int
bx_call_take_fd (struct bx_call *c)
{
  int fd = c->fd;
  c->fd = -1;
  return fd;
}

void
bx_call_free (struct bx_call *c)
{
  if (c == NULL)
    return;
  if (c->fd >= 0)
    close (c->fd);
  json_decref (c->answer);
  json_decref (c->report.egress);
  free (c->report.problem);
  bx_audit_record_clear (&c->rec);
  bx_decision_clear (&c->decision);
  if (c->hold != NULL)
    bx_live_config_put (c->brokerd->live, c->hold);
  free (c->owned_reason);
  free (c->owned_tool);
  json_decref (c->frame);
  free (c);
}
