/* SPDX-License-Identifier: Apache-2.0 */
/* Handing brokerd a run's output: see deliver.h. */
#include "deliver.h"

void
bx_runtime_deliver (const struct bx_host *host, const struct bx_command_result *r, bool refused,
                    bx_run_result *result)
{
  if (r->out_len > 0 && host->output_append (result, r->out, r->out_len) < 0)
    host->output_set_truncated (result);
  /* After the bytes: a host may take no more once a result is marked. */
  if (r->end == BX_COMMAND_CAPPED)
    host->output_set_truncated (result);
  if (refused && BX_HOST_HAS (host, output_set_refused))
    host->output_set_refused (result);
}
