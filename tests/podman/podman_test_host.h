/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by podman.so's test suites: loading the module through brokerd's own loader with
 * a set of options, running one spec, and capturing what the module logs. */
#ifndef BX_PODMAN_TEST_HOST_H
#define BX_PODMAN_TEST_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "module_loader.h"
#include "options.h"
#include "run_spec.h"

struct test_log
{
  char *text; /* every line, each ending in \n */
  size_t len;
};

/* Loads podman.so (PODMAN_SO) and creates it with OPTIONS (NULL-terminated key, value
 * pairs; a value starting with '[' is a list "[a,b,c]"), HOME and a log capture.  Returns
 * NULL and sets *error (static text or the loader's message, owned by the caller) when
 * create refuses. */
struct bx_module *test_podman_load (const char *const *options, const char *home,
                                    struct test_log *log, char **error);

/* Destroys M and frees the options it was created with. */
void test_podman_unload (struct bx_module *m);

/* A spec: TOOL with ARGUMENTS_JSON, call and session ids, and mounts "ro:/path" or
 * "rw:/path" (NULL-terminated, may be NULL). */
bx_run_spec *test_spec (enum bx_tool tool, const char *arguments_json, const char *call,
                        const char *const *mounts);

/* Concatenation of the captured log, safe against concurrent module threads. */
const char *test_log_text (struct test_log *log);
void test_log_clear (struct test_log *log);

#endif
