/* SPDX-License-Identifier: Apache-2.0 */
/* refusing.so: the runtime of a brokerd whose config names none.  Every allowed call is
 * answered Unavailable, so a broker without a sandbox fails closed instead of running
 * anything on the host. */
#include <stddef.h>

#include <boxmaker/runtime.h>

/* A fixed sentence: it reaches the model unlabelled (see boxmaker/runtime.h). */
static const char refusal[] = "no tool runtime is configured: every call is refused";

static int
refusing_create (const struct bx_host *host, const bx_options *options, void **instance,
                 bx_error_sink *sink)
{
  static const char *const known[] = { NULL };
  /* It takes no options: any option is a mistake in the config (a runtime named wrongly, or
   * options meant for another runtime), so say so instead of ignoring it. */
  if (host->option_check_known (options, known, sink) < 0)
    return -1;
  *instance = NULL;
  host->log (host, BX_LOG_WARNING, "no tool runtime is configured: every call is refused");
  return 0;
}

static enum bx_run_status
refusing_run (void *instance, const bx_run_spec *spec, bx_run_result *result, const char **sentence)
{
  *sentence = refusal;
  return BX_RUN_UNAVAILABLE;
}

static void
refusing_destroy (void *instance)
{
}

BX_RUNTIME_DEFINE (.name = "refusing", .create = refusing_create, .run = refusing_run,
                   .destroy = refusing_destroy);
