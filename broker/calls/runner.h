/* SPDX-License-Identifier: Apache-2.0 */
/* The runner: where a decision becomes a response.
 *
 * An allowed decision becomes a run spec (here and nowhere else: host/run_spec.h is only
 * used by this file), the module runs it, and the output comes back labelled with the
 * grant's class and trust.  A module's failure sentence passes through unchanged as
 * `failed`; a denied decision becomes `denied` with its reason. */
#ifndef BX_BROKER_RUNNER_H
#define BX_BROKER_RUNNER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include <boxmaker/runtime.h>

#include "bx/frame.h"

#include "cancel.h"
#include "fair.h"
#include "host_services.h"
#include "module_loader.h"
#include "outcome.h"
#include "policy.h"

/* What the audit log needs to know about a run. */
struct bx_run_report
{
  enum bx_outcome outcome; /* result, failed, cancelled or denied */
  size_t output_bytes;     /* bytes of content in the response */
  bool truncated;
  json_t *egress; /* the egress records of the run (owned; NULL: none) */
  bool refused;   /* the tool refused (the content is its reason) */
  char *problem;  /* for the owner's log, not the model: why the call did not run (owned;
                     NULL: nothing to say).  The caller logs it with the call's context. */
};

/* The spec of an allowed DECISION, by tool:
 *
 *   read_file   the matched folder, read-only     no network
 *   write_file  the matched folder, writable      no network
 *   shell       every folder of the grant, writable (read-only with `writable: false`),
 *               in order                          no network
 *   http_fetch  nothing mounted                   egress: the grant's host patterns
 *
 * After each writable folder come the mounts protecting its `readonly` paths (readonly_paths.h).
 * NULL for a denied decision, or when a protected path could not be checked.  The
 * placeholders made for missing protected paths are removed again before it returns: the
 * spec is only to look at. */
bx_run_spec *bx_runner_spec (const struct bx_decision *decision, const char *call,
                             const char *session);

/* The response frame (with ID, final) for DECISION: denied, or the module's run of the spec
 * as a result or failed.  The run waits its turn in FAIR (may be NULL: none) as a call of
 * the peer UID (-1: unknown).  While it waits and runs, CANCELLER (may be NULL) watches
 * CLIENT_FD: a client that hangs up cancels the call (cancel.h), which then answers failed
 * with BX_SENTENCE_CANCELLED and reports "cancelled". */
json_t *bx_runner_respond (struct bx_module *module, const struct bx_decision *decision,
                           const char *id, const char *call, const char *session,
                           struct bx_canceller *canceller, int client_fd, struct bx_fair *fair,
                           int64_t uid, struct bx_run_report *report);

/* The answer to a call whose protected paths could not be checked (a symbolic link where a
 * protected path or a folder on its way should be): the call does not run. */
#define BX_SENTENCE_PROTECTED                                                                      \
  "the call did not run: a protected path in a granted folder is a symbolic link or cannot be "    \
  "checked"

/* The most content bytes a response carries once escaped for JSON: what is beyond is cut
 * (at a character boundary) and the result marked truncated, so the frame always fits. */
#define BX_RESPONSE_CONTENT_MAX BX_HOST_OUTPUT_CAP

#endif
