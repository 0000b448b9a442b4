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

#endif
