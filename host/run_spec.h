/* SPDX-License-Identifier: Apache-2.0 */
/* The host side of bx_run_spec (boxmaker/runtime.h): the one definition of the sealed spec.
 * Only broker/calls/runner.c builds one, from a policy decision; modules read it through the
 * bx_host.spec_* accessors (host_services.c). */
#ifndef BX_BROKER_RUN_SPEC_H
#define BX_BROKER_RUN_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include <boxmaker/runtime.h>

#include "bx/tool_args.h"

/* ARGUMENTS_JSON is the canonical JSON text (bx_tool_args_to_json); everything is copied. */
bx_run_spec *bx_run_spec_new (enum bx_tool tool, const char *arguments_json, size_t len,
                              const char *call, const char *session);
void bx_run_spec_add_mount (bx_run_spec *spec, const char *path, bool writable);
/* Gives the spec network to exactly these host patterns (http_fetch, and shell with hosts). */
void bx_run_spec_set_egress (bx_run_spec *spec, const char *const *hosts, size_t count);
/* The allow_private ranges that go with the egress hosts. */
void bx_run_spec_set_egress_private (bx_run_spec *spec, const char *const *ranges, size_t count);
/* The grant's image (NULL: the module's own). */
void bx_run_spec_set_image (bx_run_spec *spec, const char *image);
/* The grant's root folder, /PATH@sha256:... (NULL: the module's own). */
void bx_run_spec_set_rootfs (bx_run_spec *spec, const char *rootfs);
void bx_run_spec_free (bx_run_spec *spec);
/* Sets limit WHICH (0: not set). */
void bx_run_spec_set_limit (bx_run_spec *spec, enum bx_limit which, uint64_t value);
/* Cancels the call: marks it and makes its descriptor readable.  Safe from any thread, at
 * most once in effect. */
void bx_run_spec_cancel (bx_run_spec *spec);

/* The readers behind bx_host.spec_* (host_services.c hands these to modules).  An index out
 * of range reads as NULL or false. */
enum bx_tool bx_run_spec_tool_id (const bx_run_spec *spec);
const char *bx_run_spec_tool (const bx_run_spec *spec);
const char *bx_run_spec_arguments (const bx_run_spec *spec, size_t *len);
size_t bx_run_spec_mount_count (const bx_run_spec *spec);
const char *bx_run_spec_mount_path (const bx_run_spec *spec, size_t index);
int bx_run_spec_mount_writable (const bx_run_spec *spec, size_t index);
int bx_run_spec_has_egress (const bx_run_spec *spec);
size_t bx_run_spec_egress_count (const bx_run_spec *spec);
const char *bx_run_spec_egress_host (const bx_run_spec *spec, size_t index);
size_t bx_run_spec_egress_private_count (const bx_run_spec *spec);
const char *bx_run_spec_egress_private (const bx_run_spec *spec, size_t index);
const char *bx_run_spec_image (const bx_run_spec *spec);
const char *bx_run_spec_rootfs (const bx_run_spec *spec);
const char *bx_run_spec_call (const bx_run_spec *spec);
const char *bx_run_spec_session (const bx_run_spec *spec);
uint64_t bx_run_spec_limit (const bx_run_spec *spec, int which);
/* The descriptor that becomes readable when the call is cancelled, made on the first ask;
 * -1 when none could be made (a cancelled call is still marked: bx_run_spec_cancelled). */
int bx_run_spec_cancel_fd (const bx_run_spec *spec);
int bx_run_spec_cancelled (const bx_run_spec *spec);

#endif
