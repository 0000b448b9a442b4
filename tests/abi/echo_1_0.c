/* SPDX-License-Identifier: Apache-2.0 */
/* The echo example as it was written for runtime ABI 1.0, kept unchanged and built against
 * the frozen 1.0 header (tests/abi/abi-1.0/boxmaker/runtime.h): a 1.1 brokerd must go on
 * loading and running it (the header's VERSIONS rules). */
#include <stdlib.h>
#include <string.h>

#include <boxmaker/runtime.h>

struct echo
{
  const struct bx_host *host;
  const char *prefix; /* options live as long as the process */
  uint64_t limit;     /* the most output bytes one call answers */
};

static int
echo_create (const struct bx_host *host, const bx_options *options, void **instance,
             bx_error_sink *sink)
{
  static const char *const known[] = { "prefix", "limit", NULL };
  struct echo e = { .host = host };
  if (host->option_check_known (options, known, sink) < 0
      || host->option_string (options, "prefix", "echo", &e.prefix, sink) < 0
      || host->option_size (options, "limit", 64 * 1024, &e.limit, sink) < 0)
    return -1; /* the host's message names the option at fault */

  struct echo *copy = malloc (sizeof (*copy));
  if (copy == NULL)
    {
      host->error_set (sink, "out of memory");
      return -1;
    }
  *copy = e;
  host->log (host, BX_LOG_INFO, "ready, answering at most %llu bytes a call",
             (unsigned long long)e.limit);
  *instance = copy;
  return 0;
}

/* Appends TEXT, keeping the whole answer within the limit.  0, or -1 once it is cut. */
static int
put (struct echo *e, bx_run_result *result, size_t *used, const char *text)
{
  size_t len = strlen (text);
  int cut = *used + len > e->limit;
  if (cut)
    len = e->limit - *used;
  *used += len;
  if (e->host->output_append (result, text, len) < 0 || cut)
    {
      e->host->output_set_truncated (result);
      return -1;
    }
  return 0;
}

/* Called from many threads at once: it only reads the instance and writes to RESULT. */
static enum bx_run_status
echo_run (void *instance, const bx_run_spec *spec, bx_run_result *result, const char **sentence)
{
  struct echo *e = instance;
  const struct bx_host *host = e->host;

  if (host->spec_has_egress (spec))
    {
      /* A fixed sentence: it reaches the model as it is.  Details go to the log. */
      host->log (host, BX_LOG_WARNING, "call %s wants the network", host->spec_call (spec));
      *sentence = "the echo runtime has no network";
      return BX_RUN_FAILED;
    }

  size_t used = 0;
  if (put (e, result, &used, e->prefix) < 0 || put (e, result, &used, ": ") < 0
      || put (e, result, &used, host->spec_tool (spec)) < 0 || put (e, result, &used, " ") < 0
      || put (e, result, &used, host->spec_arguments (spec, NULL)) < 0)
    return BX_RUN_OK; /* truncated: what fitted is the answer */
  for (size_t i = 0; i < host->spec_mount_count (spec); i++)
    if (put (e, result, &used, host->spec_mount_writable (spec, i) ? "\nrw " : "\nro ") < 0
        || put (e, result, &used, host->spec_mount_path (spec, i)) < 0)
      break;
  return BX_RUN_OK;
}

static void
echo_destroy (void *instance)
{
  free (instance);
}

static const struct bx_runtime echo_table = {
  .magic = BX_RUNTIME_MAGIC,
  .abi_major = BX_RUNTIME_ABI_MAJOR,
  .abi_minor = BX_RUNTIME_ABI_MINOR,
  .size = sizeof (struct bx_runtime),
  .name = "echo",
  .create = echo_create,
  .run = echo_run,
  .destroy = echo_destroy,
};

/* The one exported symbol.  A host of another major lays its tables out differently. */
BX_RUNTIME_EXPORT const struct bx_runtime *
bx_runtime_entry (uint32_t host_major, uint32_t host_minor)
{
  if (host_major != BX_RUNTIME_ABI_MAJOR)
    return NULL;
  return &echo_table;
}
