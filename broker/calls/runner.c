/* SPDX-License-Identifier: Apache-2.0 */
/* The runner: decision -> spec -> module -> response.  See runner.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/frame.h"
#include "bx/message.h"
#include "bx/utf8.h"

#include "readonly_paths.h"
#include "call_limits.h"
#include "notify.h"
#include "run_spec.h"
#include "runner.h"

/* FOLDER, and when it is writable the grant's protected paths inside it, mounted over it. */
static int
add_folder (bx_run_spec *spec, const struct bx_grant *g, const char *folder, bool writable,
            struct bx_placeholder_refs *refs, bx_error *err)
{
  bx_run_spec_add_mount (spec, folder, writable);
  if (!writable)
    return 0;
  struct bx_protect_list list = { 0 };
  int r = bx_protect_folder (folder, (const char *const *)g->readonly, g->n_readonly, &list, refs,
                             err);
  for (size_t i = 0; r == 0 && i < list.count; i++)
    bx_run_spec_add_mount (spec, list.mounts[i].path, list.mounts[i].writable);
  bx_protect_list_clear (&list);
  return r;
}

/* The spec, or NULL (with *ERR when a protected path could not be checked).
 * REFS gets the placeholders the spec mounts: the caller releases them when the call is over,
 * whatever became of it. */
static bx_run_spec *
build_spec (const struct bx_decision *d, const char *call, const char *session,
            struct bx_placeholder_refs *refs, bx_error *err)
{
  if (d->verdict != BX_ALLOWED || d->grant == NULL)
    return NULL;
  const struct bx_grant *g = d->grant;
  size_t len = 0;
  cleanup_free char *json = bx_decision_arguments (d, &len);
  bx_run_spec *spec = bx_run_spec_new (d->args.tool, json, len, call, session);
  /* The grant's limits already hold the config's defaults (config.c). */
  for (int i = 0; i < BX_LIMIT_COUNT; i++)
    bx_run_spec_set_limit (spec, (enum bx_limit)i, bx_limit_for_call (i, g->limits, NULL));
  /* The tool's RunSpec row (bx/tools.h): policy only allows a tool of the table. */
  const struct bx_tool_def *def = bx_tool_def (d->args.tool);
  /* http_fetch keeps the module's minimal image: curl and the proxy are all it needs. */
  if (def->own_root)
    {
      bx_run_spec_set_image (spec, g->image);
      bx_run_spec_set_rootfs (spec, g->rootfs);
    }
  /* One switch per column with no default: a new kind of row must be given its case. */
  switch (def->mounts)
    {
    case BX_MOUNT_NONE:
      break;
    case BX_MOUNT_FOLDER_READ:
      if (d->folder != NULL)
        bx_run_spec_add_mount (spec, d->folder, false);
      break;
    case BX_MOUNT_FOLDER_WRITE:
      if (d->folder != NULL && add_folder (spec, g, d->folder, true, refs, err) < 0)
        goto refused;
      break;
    case BX_MOUNT_GRANT_FOLDERS:
      for (size_t i = 0; i < g->n_paths; i++)
        if (add_folder (spec, g, g->paths[i], g->writable, refs, err) < 0)
          goto refused;
      break;
    }
  bool egress = false;
  switch (def->egress)
    {
    case BX_EGRESS_NONE:
      break;
    case BX_EGRESS_IF_HOSTS:
      /* hosts on a shell grant: the proxy, and toolkit's forwarder inside the sandbox. */
      egress = g->n_hosts > 0;
      break;
    case BX_EGRESS_GRANT_HOSTS:
      egress = true;
      break;
    }
  if (egress)
    {
      bx_run_spec_set_egress (spec, (const char *const *)g->hosts, g->n_hosts);
      bx_run_spec_set_egress_private (spec, (const char *const *)g->private_ranges, g->n_private);
    }
  return spec;
refused:
  bx_run_spec_free (spec);
  return NULL;
}

bx_run_spec *
bx_runner_spec (const struct bx_decision *d, const char *call, const char *session)
{
  cleanup_error bx_error err = NULL;
  struct bx_placeholder_refs refs = { 0 };
  bx_run_spec *spec = build_spec (d, call, session, &refs, &err);
  bx_placeholder_release (&refs);
  return spec;
}

/* How many bytes C takes inside a JSON string as jansson writes it. */
static size_t
escaped_size (unsigned char c)
{
  if (c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f')
    return 2;
  if (c < 0x20)
    return 6;
  return 1;
}

/* The length of S (valid UTF-8) cut so that its JSON form takes at most MAX bytes, at a
 * character boundary. */
static size_t
fit_escaped (const char *s, size_t len, size_t max)
{
  size_t used = 0, i = 0;
  for (; i < len; i++)
    {
      used += escaped_size ((unsigned char)s[i]);
      if (used > max)
        break;
    }
  if (i == len)
    return len;
  while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80)
    i--;
  return i;
}

json_t *
bx_runner_respond (struct bx_module *module, const struct bx_decision *d, const char *id,
                   const char *call, const char *session, struct bx_canceller *canceller,
                   int client_fd, struct bx_fair *fair, int64_t uid, struct bx_run_report *report)
{
  memset (report, 0, sizeof *report);
  if (d->verdict != BX_ALLOWED)
    {
      report->outcome = BX_OUTCOME_DENIED;
      return bx_msg_denied (id, d->reason ? d->reason : "denied");
    }
  /* The label comes from the decision, taken before the run: nothing the module does can
   * change it. */
  const char *class = bx_class_name (d->grant->class);
  bool untrusted = d->grant->untrusted;
  cleanup_error bx_error err = NULL;
  struct bx_placeholder_refs refs = { 0 };
  bx_run_spec *spec = build_spec (d, call, session, &refs, &err);
  if (spec == NULL)
    {
      bx_placeholder_release (&refs);
      /* The owner's log says which path; the model gets the fixed sentence. */
      report->problem = bx_xstrdup (err != NULL ? bx_error_msg (err) : "no spec");
      report->outcome = BX_OUTCOME_FAILED;
      return bx_msg_failed (id, BX_SENTENCE_PROTECTED);
    }
  struct bx_cancel_watch watch;
  bx_cancel_watch_start (canceller, &watch, client_fd, spec);
  struct bx_run_output out = { 0 };
  const char *sentence = NULL;
  /* The module's log lines during the run are this call's. */
  struct bx_log_context log_ctx = { .call = call,
                                    .session = session,
                                    .tool = bx_tool_name (d->args.tool),
                                    .grant = (long)d->grant_index + 1 };
  enum bx_run_status status = BX_RUN_FAILED;
  /* Its turn first, among the other callers' calls (fair.h); a client that leaves while
   * it waits cancels it there. */
  bool admitted
      = bx_fair_try_enter (fair, uid) || bx_fair_enter (fair, uid, bx_run_spec_cancel_fd (spec));
  if (admitted)
    {
      bx_log_set_running (&log_ctx);
      status = bx_module_run (module, spec, &out, &sentence);
      bx_log_set_running (NULL);
      bx_fair_leave (fair, uid);
    }
  bool cancelled = bx_cancel_watch_end (&watch) || !admitted;
  bx_run_spec_free (spec);
  /* The sandbox is gone, whatever became of the call: its placeholders may go too. */
  bx_placeholder_release (&refs);
  report->egress = out.egress;
  out.egress = NULL;
  if (cancelled)
    {
      /* Whatever the module answered: nobody is waiting for it, or brokerd is going. */
      bx_run_output_clear (&out);
      report->outcome = BX_OUTCOME_CANCELLED;
      return bx_msg_failed (id, BX_SENTENCE_CANCELLED);
    }
  if (status != BX_RUN_OK)
    {
      bx_run_output_clear (&out);
      report->outcome = BX_OUTCOME_FAILED;
      return bx_msg_failed (id, sentence ? sentence : "the tool could not run");
    }
  size_t len = 0;
  cleanup_free char *content = bx_utf8_sanitize (out.content ? out.content : "", out.len, &len);
  bool truncated = out.truncated;
  report->refused = out.refused;
  bx_run_output_clear (&out);
  size_t fit = fit_escaped (content, len, BX_RESPONSE_CONTENT_MAX);
  if (fit < len)
    {
      len = fit;
      content[len] = '\0';
      truncated = true;
    }
  report->outcome = BX_OUTCOME_RESULT;
  report->output_bytes = len;
  report->truncated = truncated;
  return bx_msg_result (id, content, len, class, untrusted, truncated);
}
