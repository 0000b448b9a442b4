/* SPDX-License-Identifier: Apache-2.0 */
/* What a module hands brokerd of a toolkit run that ended with an answer for the model: its
 * output, and the marks that go with it. */
#ifndef BX_RUNTIME_DELIVER_H
#define BX_RUNTIME_DELIVER_H

#include <stdbool.h>

#include <boxmaker/runtime.h>

#include "bx/command.h"

/* Appends R's output to RESULT, then marks it truncated when the output cap cut it (or the
 * host took less), and refused when toolkit refused the call (exit status 1; a host of ABI
 * 1.1 on has the mark). */
void bx_runtime_deliver (const struct bx_host *host, const struct bx_command_result *r,
                         bool refused, bx_run_result *result);

/* The fixed sentences every in-tree module answers beside the ABI's own (BX_SENTENCE_* in
 * boxmaker/runtime.h): the runtime could not start the sandbox, and a status nothing
 * explains. */
#define BX_RUNTIME_SENTENCE_UNAVAILABLE "the tool runner could not start the container"
#define BX_RUNTIME_SENTENCE_UNEXPECTED  "the tool failed with an unexpected status"

/* What toolkit's exit CODE means once the sandbox ended and the module found nothing of its
 * own to say: 0 and 1 deliver its output (1: toolkit refused the call, its output the
 * reason; *REFUSED), 2 is toolkit refusing the input the module gave it, past 128 a signal
 * (its memory limit, a kill), anything else unexpected.  Those three are logged for call
 * NAME with ERR (toolkit's standard error, made printable) and answered with their fixed
 * sentence in *SENTENCE.  BX_RUN_OK with *DELIVER set, or BX_RUN_FAILED. */
enum bx_run_status bx_runtime_toolkit_exit (const struct bx_host *host, const char *name, int code,
                                            const char *err, bool *deliver, bool *refused,
                                            const char **sentence);

#endif
