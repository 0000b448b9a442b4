/* SPDX-License-Identifier: Apache-2.0 */
/* The error type every boxmaker function uses, in the spirit of crun's libcrun_error_t.
 *
 * A fallible function returns an int: 0 (or a non-negative count) on success, a negative
 * number on failure, and then fills *err.  Callers add context on the way up with
 * bx_error_wrap(), so the final message reads from the outside in:
 *
 *   cannot load runtime "podman": /usr/lib/.../podman.so: undefined symbol bx_runtime_entry
 *
 * An error is owned by whoever holds the bx_error variable; declare it with cleanup_error so
 * every early return frees it.  A function that is handed an err that is already set must
 * not overwrite it (bx_error_set frees the old one first, so nothing leaks either way).
 *
 * The one error convention of the product code:
 *   - bx_error: a function that can fail for a reason the owner reads (the log, brokerd's
 *     config errors, an answer on the admin socket) takes `bx_error *err`;
 *   - bx_sentence: a function that can fail for a reason the model reads fills a
 *     `bx_sentence *` with a fixed sentence (below);
 *   - a programming error (a caller that broke the contract) is an assertion (assert(),
 *     as systemd's assert_return), never an error return;
 *   - nothing else: no `char **why`, no message returned as a string.
 * At the runtime ABI (boxmaker/runtime.h) the two have the ABI's own form, kept as they are
 * so that modules built against it keep working: bx_error_sink is bx_error for a module
 * (create() and check_root() fill it, the host turns it into a bx_error), and run()'s
 * `const char **sentence` is a bx_sentence's text.
 */
#ifndef BX_ERROR_H
#define BX_ERROR_H

#include <stdarg.h>

struct bx_error_s
{
  int code;  /* an errno value, or 0 when the failure has none */
  char *msg; /* the whole message, context included */
};
typedef struct bx_error_s *bx_error;

/* Sets *err to a new error with CODE and the printf-style message, and returns -1.  With a
 * non-zero CODE, ": <strerror(CODE)>" is appended.  Use it as `return bx_error_set (...)`. */
int bx_error_set (bx_error *err, int code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Like bx_error_set, but the message stands alone: no strerror text is appended, even though
 * CODE is kept so callers can tell failures apart (ETIMEDOUT, EMSGSIZE, ...). */
int bx_error_setc (bx_error *err, int code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Prefixes the message of *err with the printf-style context and ": ", keeps its code, and
 * returns -1.  With *err unset, it sets a new error from the context alone. */
int bx_error_wrap (bx_error *err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* The message, or "" for no error. */
const char *bx_error_msg (bx_error err);

/* The code, or 0 for no error. */
int bx_error_code (bx_error err);

/* Frees *err and sets it to NULL; safe on NULL. */
void bx_error_free (bx_error *err);

/* A fixed sentence: what the model reads when its call cannot go on.  Static text that
 * holds nothing the model sent and nothing of the host (no path, no errno text), so it can
 * be shown as it is and quoted by tests and docs.  Made only by BX_SENTENCE from a string
 * literal. */
typedef struct
{
  const char *text;
} bx_sentence;
#define BX_SENTENCE(literal) ((bx_sentence){ .text = "" literal })

#endif
