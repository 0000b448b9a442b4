/* SPDX-License-Identifier: Apache-2.0 */
/* Policy: a tool call's arguments against the owner's grants -> a decision.
 *
 * The grants are tried in file order and the first that allows the call wins: its folder is
 * the one mounted, its class and trust label the result, its hosts are the egress list; a
 * shell call without a cwd runs in the grant's first folder.
 * Nothing here runs anything; broker/calls/runner.c turns an allowed decision into a run spec. */
#ifndef BX_BROKER_POLICY_H
#define BX_BROKER_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "bx/error.h"
#include "bx/tool_args.h"

#include "config.h"

enum bx_verdict
{
  BX_ALLOWED,
  BX_DENIED,
};

struct bx_decision
{
  enum bx_verdict verdict;
  struct bx_tool_args args;     /* owned: what the model sent, parsed */
  const struct bx_grant *grant; /* the grant that allowed it (NULL when denied) */
  size_t grant_index;           /* its place in the config, 0-based */
  /* read_file, write_file: the grant's folder the path lies in (points into the config). */
  const char *folder;
  /* shell: the folder the command runs in: args.cwd when given, else the grant's first folder
   * (points into the args or the config); NULL when the grant has no folder (toolkit's /tmp). */
  const char *cwd;
  /* http_fetch: the lowercase host of args.url.  Computed from args.url by the same parse
   * that checked it, so policy matched exactly the host the tool will fetch from. */
  char *host;
  unsigned port; /* http_fetch: the URL's port, 443 when it names none */
  char *reason;  /* denied: a sentence the model can act on, starting with the tool's name */
};

/* Decides the call in ARGS, which it takes over (*args is left empty).  Always fills OUT;
 * free it with bx_decision_clear.  CONFIG must outlive the decision. */
void bx_policy_decide (const struct bx_config *config, struct bx_tool_args *args,
                       struct bx_decision *out);
void bx_decision_clear (struct bx_decision *decision);
/* The canonical JSON text toolkit reads for an allowed DECISION: the arguments as sent, with
 * the cwd policy chose when the call gave none.  What runs and what an owner approves are
 * both made here, so they are the same bytes.  As bx_tool_args_to_json. */
char *bx_decision_arguments (const struct bx_decision *decision, size_t *len);

/* The strict URL check http_fetch uses: https only, no user info, a port (when named) of 1 to
 * 65535 without a leading zero, a host
 * bx_valid_host accepts (so no IP literal), no percent-encoding or backslash in the host, no
 * space, control character or non-ASCII byte anywhere, no unencoded [ ] { } (curl's URL
 * patterns) after the host.  0 and *host (lowercase, newly
 * allocated) and *port (443 when none is named), or -1 and *WHY, which the model reads in
 * its refusal. */
int bx_fetch_url_host (const char *url, char **host, unsigned *port, bx_sentence *why);

#endif
