/* SPDX-License-Identifier: Apache-2.0 */
/* The host side of bx_options (boxmaker/runtime.h): the `runtime.options` mapping of the
 * config, kept as plain C so no libyaml type crosses the ABI.  The config parser builds one;
 * modules read it through the bx_host.option_* helpers (host_services.c). */
#ifndef BX_BROKER_OPTIONS_H
#define BX_BROKER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include <boxmaker/runtime.h>

bx_options *bx_options_new (void);
void bx_options_free (bx_options *options);
/* A deep copy (the loader keeps one per module, so what a module reads stays valid for as
 * long as the module lives, whatever the caller does with its own). */
bx_options *bx_options_copy (const bx_options *options);

/* Adds KEY with a string value, or with a list of strings.  The caller (the config parser)
 * has already refused duplicate keys with a file:line:column message; adding a key twice
 * replaces it. */
void bx_options_add_string (bx_options *options, const char *key, const char *value);
void bx_options_add_list (bx_options *options, const char *key, const char *const *items,
                          size_t count);

/* Where KEY was written (FILE:LINE:COLUMN), for messages about its value; a NULL key sets
 * or reads the place of the whole set (the config's runtime module).  bx_options_where
 * gives the whole set's place for a key with none, or NULL. */
void bx_options_set_where (bx_options *options, const char *key, const char *where);
const char *bx_options_where (const bx_options *options, const char *key);

size_t bx_options_count (const bx_options *options);
const char *bx_options_key (const bx_options *options, size_t index);
/* The value of KEY as a string, or NULL when absent or a list. */
const char *bx_options_string (const bx_options *options, const char *key);

/* What KEY holds, for the option helpers.  0 when absent; 1 for a string and 2 for a list,
 * with *items and *count set either way (a string reads as a list of one).  The items live
 * as long as OPTIONS. */
int bx_options_lookup (const bx_options *options, const char *key, const char *const **items,
                       size_t *count);

#endif
