/* SPDX-License-Identifier: Apache-2.0 */
/* brokerd's metrics, in the Prometheus text format (version 0.0.4), served on a Unix socket
 * of their own (`metrics_socket:` in the config) and read by `boxmaker stats`.
 *
 *   boxmaker_calls_total{tool,decision,outcome}   calls by their final audit line
 *   boxmaker_decision_seconds                     histogram: parse and policy
 *   boxmaker_run_seconds                          histogram: the module's run of allowed calls
 *   boxmaker_calls_in_flight                      gauge
 *   boxmaker_module_failures_total                allowed calls the module answered failed
 *   boxmaker_audit_failures_total                 audit lines that could not be written
 *   boxmaker_reloads_total{result}                reloads taken ("ok") and refused ("refused")
 *   boxmaker_egress_connections_total{verdict}    egress records: "allowed" or "refused"
 *
 * A tool label is one of the four tools, "unknown" for any other name, or "none" when the
 * request could not be read: a model cannot grow the label set.  Every counter is updated
 * with relaxed atomics, so a call never waits for a metrics reader. */
#ifndef BX_BROKER_METRICS_H
#define BX_BROKER_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "bx/error.h"

#include "audit.h"

struct bx_metrics;

struct bx_metrics *bx_metrics_new (void);
void bx_metrics_free (struct bx_metrics *metrics);

void bx_metrics_call_started (struct bx_metrics *metrics);
/* A call's end, with its final audit record; DECIDE_NS the time to parse and decide, RUN_NS
 * the module's run (-1 when nothing ran). */
void bx_metrics_call_ended (struct bx_metrics *metrics, const struct bx_audit_record *record,
                            int64_t decide_ns, int64_t run_ns);
/* A connection that turned out not to be a call (a probe that sent nothing). */
void bx_metrics_call_left (struct bx_metrics *metrics);
void bx_metrics_audit_failed (struct bx_metrics *metrics);
void bx_metrics_reload (struct bx_metrics *metrics, bool ok);
unsigned bx_metrics_in_flight (struct bx_metrics *metrics);

/* The whole exposition, newly allocated. */
char *bx_metrics_render (struct bx_metrics *metrics);

/* Listens on PATH (mode 0660, a stale socket replaced) and answers each connection with the
 * exposition, as sources of LOOP (brokerd's), so that a reader costs no thread and a slow one
 * holds up nobody; a connection may send an HTTP GET first, which is answered with an HTTP
 * response around the same text.  -1 and ERR when the socket cannot be made. */
int bx_metrics_serve (struct bx_metrics *metrics, sd_event *loop, const char *path, bx_error *err);
/* Stops serving, closes the readers' connections and removes the socket; on the loop's
 * thread, before the loop goes. */
void bx_metrics_stop (struct bx_metrics *metrics);

#endif
