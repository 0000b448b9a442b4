/* SPDX-License-Identifier: Apache-2.0 */
/* The host services of boxmaker/runtime.h: the one struct bx_host table brokerd hands each
 * module at create(), and the host-owned objects behind its opaque pointers (the error sink
 * of create(), the output buffer of run()).
 *
 * Each module gets its own table, because logging prefixes the module's name: the table is
 * the first member of struct bx_host_services, so a log call finds its module from the
 * table pointer alone. */
#ifndef BX_BROKER_HOST_SERVICES_H
#define BX_BROKER_HOST_SERVICES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <boxmaker/runtime.h>

#include "bx/frame.h"

#include "module_loader.h"

/* The most output one run may hand the host: what a response frame can carry (the frame
 * less room for the rest of the message), whatever the module's own cap; it is also the
 * largest BX_LIMIT_OUTPUT a spec holds.  Beyond it output_append keeps what fits, returns -1
 * and marks the result truncated. */
#define BX_HOST_OUTPUT_CAP BX_HOST_OUTPUT_MAX

/* A log line longer than this is cut (a module must not be able to flood the log with one
 * call). */
#define BX_HOST_LOG_LINE_MAX 4096

struct bx_error_sink
{
  char *msg;    /* the last message set, NULL when none */
  char *option; /* the option a host reader refused in it, NULL when none */
};

struct bx_run_result
{
  char *data;
  size_t len;
  size_t alloc;
  size_t cap; /* the most bytes this result takes */
  bool truncated;
  json_t *egress; /* the checked egress records, an array; NULL: none */
  bool refused;   /* the tool refused: the content is its reason */
};

struct bx_host_services
{
  struct bx_host host; /* first: modules only ever see &services->host */
  char *module_name;
  char *home;
  bx_module_log_fn log; /* NULL: standard error */
  void *log_ctx;
};

/* Fills SERVICES with every host function, for a module called MODULE_NAME. */
void bx_host_services_init (struct bx_host_services *services, const char *module_name,
                            const char *home, bx_module_log_fn log, void *log_ctx);
void bx_host_services_clear (struct bx_host_services *services);

void bx_error_sink_clear (struct bx_error_sink *sink);

/* An empty result that takes up to CAP bytes. */
void bx_run_result_init (struct bx_run_result *result, size_t cap);
void bx_run_result_clear (struct bx_run_result *result);

/* "error", "warning", "info", "debug" (and "log" for a level the ABI does not define). */
const char *bx_log_level_name (enum bx_log_level level);

#endif
