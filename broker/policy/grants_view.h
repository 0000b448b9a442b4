/* SPDX-License-Identifier: Apache-2.0 */
/* The grants as a peer may see them: the answer to a grants_request (docs/protocol.md, "What
 * a peer was granted").
 *
 * Only what a model may know to use its tools well: the tools, the folders (and whether a
 * tool of the grant may change files there), the host patterns, the class, the trust label
 * and whether calls wait for an owner.  Never the runtime's options, the images, the limits,
 * the protected paths or the private address ranges: those are the owner's business, and a
 * front end passes what it gets on to the model. */
#ifndef BX_BROKER_GRANTS_VIEW_H
#define BX_BROKER_GRANTS_VIEW_H

#include <jansson.h>

#include "config.h"
#include "mcp_lists.h"

/* The grants of CONFIG, in file order, as a new JSON array; an MCP server's grant also
 * carries the tools LISTS holds for it (may be NULL: none), made safe. */
json_t *bx_grants_view (const struct bx_config *config, struct bx_mcp_lists *lists);

#endif
