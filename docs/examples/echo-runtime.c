/* SPDX-License-Identifier: Apache-2.0 */
/* echo: a complete boxmaker runtime module.  It runs nothing: it answers each call with
 * the tool's name, its arguments and its mounts, so you can watch what brokerd hands a
 * runtime.  With the option `wait`, each shell call first waits that long, the way a real
 * module waits for the command in its sandbox: within the call's time limit, and stopping
 * at once when brokerd cancels the call.  Build it and install it where brokerd looks modules up by
 * name:
 *
 *   cc -shared -fPIC $(pkg-config --cflags boxmaker-runtime) echo.c -o echo.so
 *   install -m 644 echo.so "$(pkg-config --variable=runtimedir boxmaker-runtime)"
 *
 * and name it in brokerd's config:  runtime: { module: echo, options: { prefix: "echo" } }
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <boxmaker/runtime.h>

struct echo
{
  const struct bx_host *host;
  const char *prefix; /* options live as long as the process */
  uint64_t limit;     /* the most output bytes one call answers */
  uint64_t wait_ms;   /* how long a shell call waits before answering */
};

static int
echo_create (const struct bx_host *host, const bx_options *options, void **instance,
             bx_error_sink *sink)
{
  static const char *const known[] = { "prefix", "limit", "wait", NULL };
  struct echo e = { .host = host };
  if (host->option_check_known (options, known, sink) < 0
      || host->option_string (options, "prefix", "echo", &e.prefix, sink) < 0
      || host->option_size (options, "limit", 64 * 1024, &e.limit, sink) < 0
      || host->option_duration_ms (options, "wait", 0, &e.wait_ms, sink) < 0)
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

/* Appends TEXT, keeping the whole answer within LIMIT.  0, or -1 once it is cut. */
static int
put (struct echo *e, bx_run_result *result, size_t *used, uint64_t limit, const char *text)
{
  size_t len = strlen (text);
  int cut = *used + len > limit;
  if (cut)
    len = limit - *used;
  *used += len;
  if (e->host->output_append (result, text, len) < 0 || cut)
    {
      e->host->output_set_truncated (result);
      return -1;
    }
  return 0;
}

/* Waits e->wait_ms, as a module waits for its sandbox: in poll(), on the call's cancel
 * descriptor too.  0 when the wait is over, or -1 with the fixed sentence to answer. */
static int
wait_for_sandbox (struct echo *e, const bx_run_spec *spec, const char **sentence)
{
  const struct bx_host *host = e->host;
  uint64_t ms = host->spec_tool_id (spec) == BX_RUNTIME_TOOL_SHELL ? e->wait_ms : 0;
  uint64_t time_limit = host->spec_limit (spec, BX_LIMIT_TIME); /* 0: not set */
  int past_limit = time_limit > 0 && ms > time_limit;
  if (past_limit)
    ms = time_limit;
  if (ms == 0)
    return 0;
  /* A real module polls its child's pipes and this descriptor together. */
  struct pollfd p = { .fd = host->spec_cancel_fd (spec), .events = POLLIN };
  if (poll (&p, 1, ms > 86400000 ? 86400000 : (int)ms) > 0 || host->spec_cancelled (spec))
    {
      /* A real module kills its sandbox here, within a second. */
      *sentence = BX_SENTENCE_CANCELLED;
      return -1;
    }
  if (past_limit)
    {
      *sentence = BX_SENTENCE_TIME_LIMIT;
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
      /* No egress to give: unavailable, as the header's contract asks.  A fixed sentence:
       * it reaches the model as it is.  Details go to the log. */
      host->log (host, BX_LOG_WARNING, "call %s wants the network", host->spec_call (spec));
      *sentence = "the echo runtime has no network";
      return BX_RUN_UNAVAILABLE;
    }
  if (wait_for_sandbox (e, spec, sentence) < 0)
    return BX_RUN_FAILED;

  /* The call's output cap (always set) and the module's own: the smaller wins. */
  uint64_t limit = host->spec_limit (spec, BX_LIMIT_OUTPUT);
  if (limit == 0 || limit > e->limit)
    limit = e->limit;
  size_t used = 0;
  if (put (e, result, &used, limit, e->prefix) < 0 || put (e, result, &used, limit, ": ") < 0
      || put (e, result, &used, limit, host->spec_tool (spec)) < 0
      || put (e, result, &used, limit, " ") < 0
      || put (e, result, &used, limit, host->spec_arguments (spec, NULL)) < 0)
    return BX_RUN_OK; /* truncated: what fitted is the answer */
  for (size_t i = 0; i < host->spec_mount_count (spec); i++)
    if (put (e, result, &used, limit, host->spec_mount_writable (spec, i) ? "\nrw " : "\nro ") < 0
        || put (e, result, &used, limit, host->spec_mount_path (spec, i)) < 0)
      break;
  return BX_RUN_OK;
}

static void
echo_destroy (void *instance)
{
  free (instance);
}

/* The table and the one exported symbol, bx_runtime_entry, which refuses a host of another
 * major or of an older minor. */
BX_RUNTIME_DEFINE (.name = "echo", .create = echo_create, .run = echo_run, .destroy = echo_destroy);
