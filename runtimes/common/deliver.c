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

enum bx_run_status
bx_runtime_toolkit_exit (const struct bx_host *host, const char *name, int code, const char *err,
                         bool *deliver, bool *refused, const char **sentence)
{
  if (code == 0 || code == 1)
    {
      *deliver = true;
      *refused = code == 1;
      return BX_RUN_OK;
    }
  if (code == 2)
    {
      host->log (host, BX_LOG_WARNING, "%s: toolkit refused its input: %.3500s", name, err);
      *sentence = BX_SENTENCE_COULD_NOT_RUN;
    }
  else if (code > 128)
    {
      host->log (host, BX_LOG_WARNING, "%s: killed by signal %d", name, code - 128);
      *sentence = BX_SENTENCE_STOPPED;
    }
  else
    {
      host->log (host, BX_LOG_WARNING, "%s: unexpected exit %d: %.3500s", name, code, err);
      *sentence = BX_RUNTIME_SENTENCE_UNEXPECTED;
    }
  return BX_RUN_FAILED;
}
