/* SPDX-License-Identifier: Apache-2.0 */
/* The host services of the runtime ABI: see host_services.h and boxmaker/runtime.h. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bx/cleanup.h"
#include "bx/contract.h"
#include "bx/hosts.h"
#include "bx/printable.h"
#include "host_services.h"
#include "values.h"
#include "options.h"
#include "run_spec.h"

/* A message from a module may reach brokerd's start-up error line: keep it to one line of
 * reasonable length. */
#define SINK_MESSAGE_MAX 1024

/* How much of a bad option value a message quotes. */
#define QUOTE_MAX 64

const char *
bx_log_level_name (enum bx_log_level level)
{
  switch (level)
    {
    case BX_LOG_ERROR:
      return "error";
    case BX_LOG_WARNING:
      return "warning";
    case BX_LOG_INFO:
      return "info";
    case BX_LOG_DEBUG:
      return "debug";
    }
  return "log";
}

/* ---- logging ------------------------------------------------------------------------- */

static void
host_log (const struct bx_host *host, enum bx_log_level level, const char *fmt, ...)
{
  if (host == NULL || fmt == NULL)
    return;
  /* The table is the first member of the services: see host_services.h. */
  const struct bx_host_services *services = (const struct bx_host_services *)host;
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *line = bx_xvasprintf (fmt, ap);
  va_end (ap);
  /* A newline could forge a second log line. */
  bx_one_line (line, BX_HOST_LOG_LINE_MAX, ' ');
  if ((unsigned)level > BX_LOG_DEBUG)
    level = BX_LOG_DEBUG;
  if (services->log != NULL)
    services->log (services->log_ctx, services->module_name, level, line);
  else
    fprintf (stderr, "%s: %s: %s\n", services->module_name, bx_log_level_name (level), line);
}

/* The ABI numbers the tools as proto's table does (a number is the ABI's, never reused). */
_Static_assert(BX_TOOL_READ_FILE == BX_RUNTIME_TOOL_READ_FILE, "tool numbers");
_Static_assert(BX_TOOL_WRITE_FILE == BX_RUNTIME_TOOL_WRITE_FILE, "tool numbers");
_Static_assert(BX_TOOL_SHELL == BX_RUNTIME_TOOL_SHELL, "tool numbers");
_Static_assert(BX_TOOL_HTTP_FETCH == BX_RUNTIME_TOOL_HTTP_FETCH, "tool numbers");
/* The header promises modules what toolkit reads at most. */
_Static_assert(BX_RUNTIME_ARGUMENTS_MAX == BX_TOOL_ARGS_MAX, "argument size");

static int
host_spec_tool_id (const bx_run_spec *spec)
{
  return spec == NULL ? -1 : (int)bx_run_spec_tool_id (spec);
}

/* ---- output -------------------------------------------------------------------------- */

static int
host_output_append (bx_run_result *result, const void *bytes, size_t len)
{
  if (result == NULL)
    return -1;
  if (len == 0)
    return result->truncated ? -1 : 0;
  if (bytes == NULL || result->truncated)
    return -1;
  size_t room = result->cap - result->len;
  size_t take = len < room ? len : room;
  if (take > 0)
    {
      if (result->len + take + 1 > result->alloc)
        {
          /* Double, so a module appending a byte at a time costs linear time. */
          size_t want = result->alloc < 4096 ? 4096 : result->alloc;
          while (want < result->len + take + 1)
            want *= 2;
          if (want > result->cap + 1)
            want = result->cap + 1;
          result->data = bx_xrealloc (result->data, want);
          result->alloc = want;
        }
      memcpy (result->data + result->len, bytes, take);
      result->len += take;
      result->data[result->len] = '\0';
    }
  if (take < len)
    {
      result->truncated = true;
      return -1;
    }
  return 0;
}

static void
host_output_set_truncated (bx_run_result *result)
{
  if (result != NULL)
    result->truncated = true;
}

/* ---- egress records ------------------------------------------------------------------ */

/* An integer member of O within [0, MAX], or -1. */
static json_int_t
small_int (const json_t *o, const char *key, json_int_t max)
{
  const json_t *v = json_object_get (o, key);
  if (!json_is_integer (v) || json_integer_value (v) < 0 || json_integer_value (v) > max)
    return -1;
  return json_integer_value (v);
}

/* The record rebuilt from its checked members only, or NULL: what reaches the audit log is
 * never the module's text. */
static json_t *
checked_record (const json_t *o)
{
  if (!json_is_object (o))
    return NULL;
  const char *key;
  const json_t *v;
  json_object_foreach ((json_t *)o, key, v) if (strcmp (key, "host") != 0
                                                && strcmp (key, "port") != 0
                                                && strcmp (key, "reply") != 0
                                                && strcmp (key, "address") != 0) return NULL;
  const json_t *host = json_object_get (o, "host");
  if (!json_is_null (host)
      && (!json_is_string (host) || strlen (json_string_value (host)) != json_string_length (host)
          || !bx_valid_host (json_string_value (host))))
    return NULL;
  json_int_t port = small_int (o, "port", 65535);
  json_int_t reply = small_int (o, "reply", 255);
  if (port < 0 || reply < 0)
    return NULL;
  const json_t *address = json_object_get (o, "address");
  unsigned char buf[sizeof (struct in6_addr)];
  if (address != NULL
      && (!json_is_string (address)
          || (inet_pton (AF_INET, json_string_value (address), buf) != 1
              && inet_pton (AF_INET6, json_string_value (address), buf) != 1)))
    return NULL;
  json_t *r = json_object ();
  json_object_set_new (r, "host",
                       json_is_null (host) ? json_null () : json_string (json_string_value (host)));
  json_object_set_new (r, "port", json_integer (port));
  json_object_set_new (r, "reply", json_integer (reply));
  if (address != NULL)
    json_object_set_new (r, "address", json_string (json_string_value (address)));
  return r;
}

static int
host_egress_record (bx_run_result *result, const char *record, size_t len)
{
  if (result == NULL || record == NULL)
    return -1;
  /* No more than the proxy may write (bx/contract.h). */
  if (result->egress != NULL && json_array_size (result->egress) >= BX_EGRESS_RECORDS_MAX)
    return -1;
  json_t *o = json_loadb (record, len, JSON_REJECT_DUPLICATES, NULL);
  json_t *r = checked_record (o);
  json_decref (o);
  if (r == NULL)
    return -1;
  if (result->egress == NULL)
    result->egress = json_array ();
  json_array_append_new (result->egress, r);
  return 0;
}

static void
host_output_set_refused (bx_run_result *result)
{
  if (result != NULL)
    result->refused = true;
}

void
bx_run_result_init (struct bx_run_result *result, size_t cap)
{
  memset (result, 0, sizeof (*result));
  result->cap = cap;
}

void
bx_run_result_clear (struct bx_run_result *result)
{
  free (result->data);
  json_decref (result->egress);
  memset (result, 0, sizeof (*result));
}

/* ---- errors -------------------------------------------------------------------------- */

static void
sink_take (bx_error_sink *sink, char *msg)
{
  if (sink == NULL)
    {
      free (msg);
      return;
    }
  bx_one_line (msg, SINK_MESSAGE_MAX, ' ');
  free (sink->msg);
  sink->msg = msg;
}

static void
host_error_set (bx_error_sink *sink, const char *fmt, ...)
{
  if (fmt == NULL)
    return;
  va_list ap;
  va_start (ap, fmt);
  char *msg = bx_xvasprintf (fmt, ap);
  va_end (ap);
  sink_take (sink, msg);
}

/* A refusal of option NAME by one of the host's readers: the message, and which option it
 * is about, so brokerd can say where the option was written. */
static void __attribute__ ((format (printf, 3, 4)))
sink_printf (bx_error_sink *sink, const char *name, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *msg = bx_xvasprintf (fmt, ap);
  va_end (ap);
  sink_take (sink, msg);
  if (sink != NULL)
    {
      free (sink->option);
      sink->option = bx_xstrdup (name);
    }
}

void
bx_error_sink_clear (struct bx_error_sink *sink)
{
  free (sink->msg);
  sink->msg = NULL;
  free (sink->option);
  sink->option = NULL;
}

/* ---- options ------------------------------------------------------------------------- */

/* VALUE in double quotes for a message, made safe (bx/printable.h). */
static char *
quote (const char *value)
{
  return bx_quoted (value, QUOTE_MAX);
}

/* The single value of NAME: 1 and *value set, 0 when absent, -1 (message in SINK) when it
 * holds a list. */
static int
single_value (const bx_options *options, const char *name, const char **value, bx_error_sink *sink)
{
  const char *const *items;
  size_t count;
  int kind = bx_options_lookup (options, name, &items, &count);
  if (kind == 0)
    return 0;
  if (kind == 2)
    {
      sink_printf (sink, name, "option \"%s\": expected a single value, got a list", name);
      return -1;
    }
  *value = items[0];
  return 1;
}

static int
host_option_check_known (const bx_options *options, const char *const *known, bx_error_sink *sink)
{
  size_t n = bx_options_count (options);
  for (size_t i = 0; i < n; i++)
    {
      const char *key = bx_options_key (options, i);
      bool found = false;
      for (size_t k = 0; known != NULL && known[k] != NULL; k++)
        if (strcmp (known[k], key) == 0)
          found = true;
      if (found)
        continue;
      cleanup_free char *quoted = quote (key);
      if (known == NULL || known[0] == NULL)
        {
          sink_printf (sink, key, "unknown option %s: this runtime takes no options", quoted);
          return -1;
        }
      /* Name what is known, so the fix for a typo is in the message. */
      size_t len = 0;
      for (size_t k = 0; known[k] != NULL; k++)
        len += strlen (known[k]) + 2;
      cleanup_free char *list = bx_xzalloc (len + 1);
      for (size_t k = 0; known[k] != NULL; k++)
        {
          if (k > 0)
            strcat (list, ", ");
          strcat (list, known[k]);
        }
      sink_printf (sink, key, "unknown option %s (this runtime knows: %s)", quoted, list);
      return -1;
    }
  return 0;
}

static int
host_option_string (const bx_options *options, const char *name, const char *fallback,
                    const char **out, bx_error_sink *sink)
{
  const char *value;
  int r = single_value (options, name, &value, sink);
  if (r < 0)
    return -1;
  *out = r == 0 ? fallback : value;
  return 0;
}

static int
host_option_int (const bx_options *options, const char *name, int64_t min, int64_t max,
                 int64_t fallback, int64_t *out, bx_error_sink *sink)
{
  const char *value;
  int r = single_value (options, name, &value, sink);
  if (r < 0)
    return -1;
  if (r == 0)
    {
      *out = fallback;
      return 0;
    }
  bool negative = value[0] == '-';
  const char *digits = negative ? value + 1 : value;
  uint64_t magnitude;
  int p = bx_value_digits (digits, strlen (digits), &magnitude);
  bool fits = p == 0 && (negative ? magnitude <= (uint64_t)INT64_MAX + 1 : magnitude <= INT64_MAX);
  int64_t v = 0;
  if (fits)
    v = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
  if (!fits || v < min || v > max)
    {
      cleanup_free char *quoted = quote (value);
      sink_printf (sink, name,
                   "option \"%s\": expected an integer from %" PRId64 " to %" PRId64 ", got %s",
                   name, min, max, quoted);
      return -1;
    }
  *out = v;
  return 0;
}

/* A size or a duration: digits with one of the kind's suffixes, at least 1. */
struct scaled_kind
{
  int (*parse) (const char *s, uint64_t *out);
  const char *noun;     /* "size" */
  const char *too_big;  /* "too large" */
  const char *expected; /* "a size such as 512m" */
  const char *at_least; /* "a size of at least 1 byte" */
};

static int
read_scaled (const bx_options *options, const char *name, const struct scaled_kind *kind,
             uint64_t fallback, uint64_t *out, bx_error_sink *sink)
{
  const char *value;
  int r = single_value (options, name, &value, sink);
  if (r < 0)
    return -1;
  if (r == 0)
    {
      *out = fallback;
      return 0;
    }
  uint64_t v;
  int p = kind->parse (value, &v);
  cleanup_free char *quoted = quote (value);
  if (p == -2)
    sink_printf (sink, name, "option \"%s\": %s %s is %s", name, kind->noun, quoted, kind->too_big);
  else if (p < 0)
    sink_printf (sink, name, "option \"%s\": expected %s, got %s", name, kind->expected, quoted);
  else if (v == 0)
    sink_printf (sink, name, "option \"%s\": expected %s, got %s", name, kind->at_least, quoted);
  if (p < 0 || v == 0)
    return -1;
  *out = v;
  return 0;
}

static const struct scaled_kind size_kind = {
  bx_value_size, "size", "too large", "a size such as 512m", "a size of at least 1 byte",
};

static int
host_option_size (const bx_options *options, const char *name, uint64_t fallback, uint64_t *out,
                  bx_error_sink *sink)
{
  return read_scaled (options, name, &size_kind, fallback, out, sink);
}

static const struct scaled_kind duration_kind = {
  bx_value_duration_ms,         "duration", "too long", "a duration such as 30s, 500ms or 2m",
  "a duration of at least 1ms",
};

static int
host_option_duration_ms (const bx_options *options, const char *name, uint64_t fallback,
                         uint64_t *out, bx_error_sink *sink)
{
  return read_scaled (options, name, &duration_kind, fallback, out, sink);
}

static int
host_option_bool (const bx_options *options, const char *name, int fallback, int *out,
                  bx_error_sink *sink)
{
  const char *value;
  int r = single_value (options, name, &value, sink);
  if (r < 0)
    return -1;
  if (r == 0)
    {
      *out = fallback ? 1 : 0;
      return 0;
    }
  if (strcmp (value, "true") == 0 || strcmp (value, "yes") == 0)
    *out = 1;
  else if (strcmp (value, "false") == 0 || strcmp (value, "no") == 0)
    *out = 0;
  else
    {
      cleanup_free char *quoted = quote (value);
      sink_printf (sink, name, "option \"%s\": expected true or false, got %s", name, quoted);
      return -1;
    }
  return 0;
}

static int
host_option_list (const bx_options *options, const char *name, const char *const **items,
                  size_t *count, bx_error_sink *sink)
{
  /* A string reads as a list of one; absent reads as an empty list. */
  bx_options_lookup (options, name, items, count);
  return 0;
}

/* ---- the table ----------------------------------------------------------------------- */

void
bx_host_services_init (struct bx_host_services *services, const char *module_name, const char *home,
                       bx_module_log_fn log, void *log_ctx)
{
  memset (services, 0, sizeof (*services));
  services->module_name = bx_xstrdup (module_name != NULL ? module_name : "runtime");
  services->home = bx_xstrdup (home != NULL ? home : "");
  services->log = log;
  services->log_ctx = log_ctx;

  struct bx_host *h = &services->host;
  h->size = sizeof (struct bx_host);
  h->abi_major = BX_RUNTIME_ABI_MAJOR;
  h->abi_minor = BX_RUNTIME_ABI_MINOR;
  h->log = host_log;
  h->spec_tool = bx_run_spec_tool;
  h->spec_arguments = bx_run_spec_arguments;
  h->spec_mount_count = bx_run_spec_mount_count;
  h->spec_mount_path = bx_run_spec_mount_path;
  h->spec_mount_writable = bx_run_spec_mount_writable;
  h->spec_has_egress = bx_run_spec_has_egress;
  h->spec_egress_count = bx_run_spec_egress_count;
  h->spec_egress_host = bx_run_spec_egress_host;
  h->spec_call = bx_run_spec_call;
  h->spec_session = bx_run_spec_session;
  h->output_append = host_output_append;
  h->output_set_truncated = host_output_set_truncated;
  h->egress_record = host_egress_record;
  h->output_set_refused = host_output_set_refused;
  h->error_set = host_error_set;
  h->option_check_known = host_option_check_known;
  h->option_string = host_option_string;
  h->option_int = host_option_int;
  h->option_size = host_option_size;
  h->option_duration_ms = host_option_duration_ms;
  h->option_bool = host_option_bool;
  h->option_list = host_option_list;
  h->home = services->home;
  h->spec_limit = bx_run_spec_limit;
  h->spec_cancel_fd = bx_run_spec_cancel_fd;
  h->spec_cancelled = bx_run_spec_cancelled;
  h->spec_egress_private_count = bx_run_spec_egress_private_count;
  h->spec_egress_private = bx_run_spec_egress_private;
  h->spec_image = bx_run_spec_image;
  h->spec_rootfs = bx_run_spec_rootfs;
  h->spec_tool_id = host_spec_tool_id;
}

void
bx_host_services_clear (struct bx_host_services *services)
{
  free (services->module_name);
  free (services->home);
  memset (services, 0, sizeof (*services));
}
