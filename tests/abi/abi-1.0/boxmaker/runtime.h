/* SPDX-License-Identifier: Apache-2.0 */
/* boxmaker/runtime.h: the runtime module ABI.
 *
 * brokerd decides whether a tool call may run; a runtime module runs it.  A module is a
 * shared object that exports exactly one symbol, bx_runtime_entry, and is loaded with
 * dlopen (RTLD_NOW | RTLD_LOCAL) when brokerd starts.  brokerd never unloads a module.
 *
 * This header is the whole contract.  It holds no type from any other library: module
 * options, the call to run and the results all cross as plain C through the tables below.
 *
 * Build a module outside the boxmaker tree with
 *
 *   cc -shared -fPIC -fvisibility=hidden $(pkg-config --cflags boxmaker-runtime) \
 *      mymodule.c -o mymodule.so
 *
 * and install it in $(pkg-config --variable=runtimedir boxmaker-runtime), or name it by
 * absolute path in brokerd's config.  docs/writing-a-runtime.md walks through one.
 *
 * VERSIONS
 *   The ABI has a major and a minor number.  A minor release only appends fields at the end
 *   of struct bx_runtime and struct bx_host; a major release may change anything.  brokerd
 *   loads a module whose major equals its own and whose minor is the same or older, reading
 *   only the fields the module's table size says are there.  It refuses, naming both
 *   versions, a module of another major or a newer minor.  A module is told the host's
 *   version in bx_runtime_entry and may refuse the host by returning NULL.
 *
 * THREADS
 *   run() is called from many threads at once, on the same instance, one call per thread.
 *   A module must be thread-safe in run(); create() and destroy() are never concurrent with
 *   anything else.  Every host function below may be called from any thread.
 *
 * OUTPUT
 *   A module never writes to brokerd's standard output or standard error: it logs through
 *   bx_host.log.  Output bytes go to the host with bx_host.output_append, which copies them
 *   into memory the host owns, so no allocation ever crosses the ABI.
 */
#ifndef BOXMAKER_RUNTIME_H
#define BOXMAKER_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BX_RUNTIME_MAGIC     0x62786d72u /* "bxmr" */
#define BX_RUNTIME_ABI_MAJOR 1
#define BX_RUNTIME_ABI_MINOR 0
#define BX_RUNTIME_ENTRY     "bx_runtime_entry"

/* Modules build with -fvisibility=hidden; this marks the one symbol they export. */
#define BX_RUNTIME_EXPORT __attribute__ ((visibility ("default")))

/* ---- Opaque types: the host defines them, a module only holds pointers. ---------------- */

/* One allowed call, sealed.  brokerd builds it from a policy decision, and only there; a
 * module reads it through the bx_host.spec_* functions and can neither build nor change
 * one (the struct is not defined in this header, so `struct bx_run_spec s;` does not
 * compile). */
typedef struct bx_run_spec bx_run_spec;

/* The module's options: the `runtime.options` mapping of brokerd's config, a set of keys
 * each holding a string or a list of strings.  Read it with the bx_host.option_* helpers. */
typedef struct bx_options bx_options;

/* Where create() puts an error message (host-owned). */
typedef struct bx_error_sink bx_error_sink;

/* Where run() puts output bytes (host-owned). */
typedef struct bx_run_result bx_run_result;

enum bx_log_level
{
  BX_LOG_ERROR = 0,
  BX_LOG_WARNING = 1,
  BX_LOG_INFO = 2,
  BX_LOG_DEBUG = 3,
};

/* What run() answers.
 *   BX_RUN_OK           the tool ran; its output is in the result (possibly empty)
 *   BX_RUN_FAILED       the tool could not run or did not finish (time limit, out of memory)
 *   BX_RUN_UNAVAILABLE  the runtime itself cannot run anything now (no podman, no image)
 * With FAILED and UNAVAILABLE the module sets *sentence to a fixed sentence. */
enum bx_run_status
{
  BX_RUN_OK = 0,
  BX_RUN_FAILED = 1,
  BX_RUN_UNAVAILABLE = 2,
};

/* ---- What the host gives a module. -------------------------------------------------------
 *
 * One table per module, handed to create() and valid until the process ends.  Its size
 * field says how many fields it has: a host newer than the module has at least the fields
 * the module knows. */
struct bx_host
{
  uint32_t size; /* sizeof (struct bx_host) as the host was built */
  uint16_t abi_major;
  uint16_t abi_minor;

  /* Logging: one line per call, no newline needed.  brokerd prefixes the module's name. */
  void (*log) (const struct bx_host *host, enum bx_log_level level, const char *fmt, ...)
      __attribute__ ((format (printf, 3, 4)));

  /* The spec.  Strings live as long as the spec, i.e. until run() returns.  An index out of
   * range reads as NULL (or 0). */
  const char *(*spec_tool) (const bx_run_spec *spec); /* "read_file", ..., "http_fetch" */
  /* The tool's arguments as canonical JSON text (what toolkit reads on standard input);
   * *len gets its length when len is not NULL. */
  const char *(*spec_arguments) (const bx_run_spec *spec, size_t *len);
  /* The folders to mount, in order, each read-only or writable. */
  size_t (*spec_mount_count) (const bx_run_spec *spec);
  const char *(*spec_mount_path) (const bx_run_spec *spec, size_t index);
  int (*spec_mount_writable) (const bx_run_spec *spec, size_t index);
  /* Network: 0 means none at all (every tool but http_fetch); 1 means the call may reach
   * exactly the host patterns listed, on port 443, at public addresses. */
  int (*spec_has_egress) (const bx_run_spec *spec);
  size_t (*spec_egress_count) (const bx_run_spec *spec);
  const char *(*spec_egress_host) (const bx_run_spec *spec, size_t index);
  /* The call's and the session's ids: 1 to 64 of [A-Za-z0-9_.-], safe in container names. */
  const char *(*spec_call) (const bx_run_spec *spec);
  const char *(*spec_session) (const bx_run_spec *spec);

  /* Output: copies LEN bytes to the end of the result's content.  0, or -1 when the host
   * will take no more (it caps what a response can carry); then stop and mark truncated. */
  int (*output_append) (bx_run_result *result, const void *bytes, size_t len);
  /* The output was cut at the module's cap: the model is told so. */
  void (*output_set_truncated) (bx_run_result *result);

  /* Errors from create(): the message should name the option at fault. */
  void (*error_set) (bx_error_sink *sink, const char *fmt, ...)
      __attribute__ ((format (printf, 2, 3)));

  /* Options.  Each helper returns 0 and sets *out (to FALLBACK when the key is absent), or
   * returns -1 and puts a message naming the option into SINK.  Strings read from the
   * options (and the options themselves) stay valid until destroy() returns. */
  /* Fails for any key not in KNOWN (a NULL-terminated list), naming it: a typo must not pass
   * silently. */
  int (*option_check_known) (const bx_options *options, const char *const *known,
                             bx_error_sink *sink);
  int (*option_string) (const bx_options *options, const char *name, const char *fallback,
                        const char **out, bx_error_sink *sink);
  /* A decimal integer within [min, max]. */
  int (*option_int) (const bx_options *options, const char *name, int64_t min, int64_t max,
                     int64_t fallback, int64_t *out, bx_error_sink *sink);
  /* A byte size: digits with an optional suffix k, m, g (powers of 1024, either case), at
   * least 1. */
  int (*option_size) (const bx_options *options, const char *name, uint64_t fallback, uint64_t *out,
                      bx_error_sink *sink);
  /* A duration in milliseconds: plain digits are ms; or digits with ms, s or m; at least 1. */
  int (*option_duration_ms) (const bx_options *options, const char *name, uint64_t fallback,
                             uint64_t *out, bx_error_sink *sink);
  /* true/false (also yes/no). */
  int (*option_bool) (const bx_options *options, const char *name, int fallback, int *out,
                      bx_error_sink *sink);
  /* A list of strings (a single string counts as a list of one).  Absent: *count is 0. */
  int (*option_list) (const bx_options *options, const char *name, const char *const **items,
                      size_t *count, bx_error_sink *sink);

  /* Where brokerd keeps its state (config key `home`), for per-call folders. */
  const char *home;
};

/* ---- What a module gives the host. ------------------------------------------------------ */

struct bx_runtime
{
  uint32_t magic;     /* BX_RUNTIME_MAGIC */
  uint16_t abi_major; /* BX_RUNTIME_ABI_MAJOR the module was built with */
  uint16_t abi_minor; /* BX_RUNTIME_ABI_MINOR the module was built with */
  uint32_t size;      /* sizeof (struct bx_runtime) the module was built with */

  const char *name; /* a short name for logs, such as "podman" */

  /* Checks OPTIONS and makes an instance.  0 and *instance set, or -1 with a message in
   * SINK (naming the option at fault).  Called once, before any run(). */
  int (*create) (const struct bx_host *host, const bx_options *options, void **instance,
                 bx_error_sink *sink);

  /* Runs one allowed call.  Called from many threads at once (see THREADS).
   *
   * On BX_RUN_OK the output is what the module passed to host->output_append.  On
   * BX_RUN_FAILED or BX_RUN_UNAVAILABLE, *sentence must point to a fixed sentence in static
   * storage, such as "the tool ran past its time limit": it reaches the model as a failure,
   * unlabelled and trusted, so it must never carry tool output, paths, or anything else a
   * sandboxed program or a remote server could have written.  Details belong in the log. */
  enum bx_run_status (*run) (void *instance, const bx_run_spec *spec, bx_run_result *result,
                             const char **sentence);

  /* Frees the instance; no run() is in progress or will follow. */
  void (*destroy) (void *instance);

  /* ABI 1.1 and later append fields here. */
};

/* The 1.0 table ends after destroy: a smaller table is refused. */
#define BX_RUNTIME_TABLE_MIN_SIZE                                                                  \
  (offsetof (struct bx_runtime, destroy) + sizeof (void (*) (void *)))

/* The one symbol a module exports.  HOST_MAJOR and HOST_MINOR are brokerd's ABI version.
 * Return the module's table (static storage), or NULL to refuse this host. */
typedef const struct bx_runtime *(*bx_runtime_entry_fn) (uint32_t host_major, uint32_t host_minor);
BX_RUNTIME_EXPORT const struct bx_runtime *bx_runtime_entry (uint32_t host_major,
                                                             uint32_t host_minor);

#ifdef __cplusplus
}
#endif

#endif
