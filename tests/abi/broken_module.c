/* SPDX-License-Identifier: Apache-2.0 */
/* One source for every broken module the loader must refuse; a compile definition picks
 * the fault (see tests/abi/CMakeLists.txt).  Each is the smallest module with exactly that
 * fault, so the test proves the loader names that fault and no other. */
#include <stddef.h>

#include <boxmaker/runtime.h>

static int __attribute__ ((unused))
broken_create (const struct bx_host *host, const bx_options *options, void **instance,
               bx_error_sink *sink)
{
#ifdef BROKEN_OPTIONS_REJECTED
  /* Checks its options with the host's helpers, then insists on one the config must give. */
  static const char *const known[] = { "memory", "flavour", NULL };
  uint64_t memory;
  const char *flavour;
  if (host->option_check_known (options, known, sink) < 0
      || host->option_size (options, "memory", 1024, &memory, sink) < 0
      || host->option_string (options, "flavour", NULL, &flavour, sink) < 0)
    return -1;
  if (flavour == NULL)
    {
      host->error_set (sink, "option \"flavour\" is required");
      return -1;
    }
  host->error_set (sink, "option \"flavour\": no flavour is good enough, got \"%s\"", flavour);
  return -1;
#else
  *instance = NULL;
  return 0;
#endif
}

static enum bx_run_status __attribute__ ((unused))
broken_run (void *instance, const bx_run_spec *spec, bx_run_result *result, const char **sentence)
{
  return BX_RUN_OK;
}

static void __attribute__ ((unused)) broken_destroy (void *instance)
{
}

#ifndef BROKEN_NAME
#define BROKEN_NAME "broken"
#endif
#ifndef BROKEN_MAGIC
#define BROKEN_MAGIC BX_RUNTIME_MAGIC
#endif
#ifndef BROKEN_MAJOR
#define BROKEN_MAJOR BX_RUNTIME_ABI_MAJOR
#endif
#ifndef BROKEN_MINOR
#define BROKEN_MINOR BX_RUNTIME_ABI_MINOR
#endif
#ifndef BROKEN_SIZE
#define BROKEN_SIZE sizeof (struct bx_runtime)
#endif

static const struct bx_runtime broken_table = {
  .magic = BROKEN_MAGIC,
  .abi_major = BROKEN_MAJOR,
  .abi_minor = BROKEN_MINOR,
  .size = BROKEN_SIZE,
#ifndef BROKEN_NO_NAME
  .name = BROKEN_NAME,
#endif
#ifndef BROKEN_NULL_CREATE
  .create = broken_create,
#endif
#ifndef BROKEN_NULL_RUN
  .run = broken_run,
#endif
#ifndef BROKEN_NULL_DESTROY
  .destroy = broken_destroy,
#endif
};

#ifdef BROKEN_UNDEFINED_SYMBOL
/* Defined nowhere: dlopen with RTLD_NOW must fail on it. */
extern int bx_no_such_function (void);
int (*volatile broken_needs) (void) = bx_no_such_function;
#endif

#ifdef BROKEN_NO_ENTRY
/* Exports a symbol, but under another name. */
BX_RUNTIME_EXPORT const struct bx_runtime *
bx_runtime_entry_v0 (uint32_t host_major, uint32_t host_minor)
#else
BX_RUNTIME_EXPORT const struct bx_runtime *
bx_runtime_entry (uint32_t host_major, uint32_t host_minor)
#endif
{
#ifdef BROKEN_REFUSES_HOST
  /* Wants a host of a later ABI than any that exists. */
  if (host_major < 99)
    return NULL;
#endif
  return &broken_table;
}
