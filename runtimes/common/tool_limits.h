/* SPDX-License-Identifier: Apache-2.0 */
/* The per-tool time options every runtime takes (read_file_ms, ...), read one way for
 * podman.so and bwrap.so: names and defaults from the tool table (bx/tools.h), one ceiling. */
#ifndef BX_RUNTIME_TOOL_LIMITS_H
#define BX_RUNTIME_TOOL_LIMITS_H

#include <stdint.h>

#include <boxmaker/runtime.h>

/* BX_RUNTIME_TOOL_COUNT (boxmaker/runtime.h) is the tool table's count (tool_limits.c
 * checks), in its order (enum bx_tool). */

/* The longest time limit an option or a call may set: a deadline must fit in an int64_t. */
#define BX_RUNTIME_MAX_LIMIT_MS (24ull * 3600 * 1000)

/* Reads each tool's time option into LIMIT_MS (its default when absent), refusing one past
 * BX_RUNTIME_MAX_LIMIT_MS.  0, or -1 with the error in SINK. */
int bx_runtime_read_limits (const struct bx_host *host, const bx_options *options,
                            uint64_t limit_ms[BX_RUNTIME_TOOL_COUNT], bx_error_sink *sink);

#endif
