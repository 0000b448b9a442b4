/* SPDX-License-Identifier: Apache-2.0 */
/* The arguments of the tools, as the tool table (bx/tools.h) lists them.  brokerd parses the
 * model's arguments with these and writes the canonical JSON to the sandbox's standard input;
 * toolkit parses that JSON back with the same functions.
 *
 *   read_file  {"path": string}
 *   write_file {"path": string, "content": string}
 *   shell      {"command": string, "cwd": string (optional)}
 *   http_fetch {"url": string}
 *
 * Strict: an unknown field, a missing field, a wrong type, a duplicate key, a NUL in a
 * string, or a document over BX_TOOL_ARGS_MAX bytes is an error whose message names the
 * field (for example `shell: "cwd" must be a string`). */
#ifndef BX_TOOL_ARGS_H
#define BX_TOOL_ARGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "bx/contract.h"
#include "bx/error.h"
#include "bx/tools.h"

#define BX_TOOL_ARGS_MAX (2u * 1024 * 1024)

/* Parses a JSON document (LEN bytes, need not be NUL-terminated) as TOOL's arguments. */
int bx_tool_args_parse (enum bx_tool tool, const char *json, size_t len, struct bx_tool_args *out,
                        bx_error *err);
/* The same, from an already-parsed object (brokerd's frame holds the arguments as an object;
 * its parser must have rejected duplicate keys). */
int bx_tool_args_from_json (enum bx_tool tool, const json_t *obj, struct bx_tool_args *out,
                            bx_error *err);
/* The canonical JSON text toolkit reads: keys in the order above, compact, no "cwd" when it
 * is absent.  Newly allocated, NUL-terminated; *len (if not NULL) gets its length.  NULL when
 * a required field is NULL or a string is not valid UTF-8 (never the case for arguments that
 * came from bx_tool_args_parse or bx_tool_args_from_json). */
char *bx_tool_args_to_json (const struct bx_tool_args *args, size_t *len);
/* The same as a jansson object (new reference), or NULL in the same cases. */
json_t *bx_tool_args_to_object (const struct bx_tool_args *args);
/* The JSON Schema of TOOL's arguments, made from the same table the parser reads: string
 * properties with descriptions, the required ones listed, additionalProperties false.  A new
 * reference, or NULL for an unknown tool. */
json_t *bx_tool_args_schema (enum bx_tool tool);
/* Frees the strings and zeroes the struct; safe to call twice. */
void bx_tool_args_clear (struct bx_tool_args *args);

#endif
