/* SPDX-License-Identifier: Apache-2.0 */
/* The per-tool time options: see tool_limits.h. */
#include "bx/tools.h"
#include "tool_limits.h"

_Static_assert(BX_TOOL_COUNT == BX_RUNTIME_TOOL_COUNT, "a time option per tool");

int
bx_runtime_read_limits (const struct bx_host *host, const bx_options *options,
                        uint64_t limit_ms[BX_RUNTIME_TOOL_COUNT], bx_error_sink *sink)
{
  /* Each tool's option name and default are its row in the tool table. */
  for (int i = 0; i < BX_RUNTIME_TOOL_COUNT; i++)
    {
      const struct bx_tool_def *def = bx_tool_def ((enum bx_tool)i);
      if (host->option_duration_ms (options, def->limit_option, def->limit_ms, &limit_ms[i], sink)
          < 0)
        return -1;
      if (limit_ms[i] > BX_RUNTIME_MAX_LIMIT_MS)
        {
          host->error_set (sink, "option %s: at most a day (86400000 ms)", def->limit_option);
          return -1;
        }
    }
  return 0;
}
