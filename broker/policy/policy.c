/* SPDX-License-Identifier: Apache-2.0 */
/* Policy: grants -> decision.  See policy.h; docs/config.md explains the rules to owners. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bx/cleanup.h"
#include "bx/hosts.h"
#include "bx/printable.h"

#include "mcp_server.h"
#include "policy.h"

/* A model-supplied string quoted in a reason: cut (the reason must stay a sentence, not an
 * echo of a two-megabyte argument) and made safe (no control byte may reach a terminal). */
static char *
shown (const char *s)
{
  return bx_printable (s, strlen (s), BX_SHOWN_TEXT_MAX);
}

static void deny (struct bx_decision *d, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void
deny (struct bx_decision *d, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *s = bx_xvasprintf (fmt, ap);
  va_end (ap);
  d->verdict = BX_DENIED;
  d->grant = NULL;
  d->folder = NULL;
  d->cwd = NULL;
  free (d->reason);
  d->reason = s;
}

static void
allow (struct bx_decision *d, const struct bx_config *cfg, size_t index)
{
  d->verdict = BX_ALLOWED;
  d->grant = &cfg->grants[index];
  d->grant_index = index;
}

/* Names the tools a grant lists, for a reason: "read_file, shell". */
static char *
tool_list (const struct bx_grant *g)
{
  char buf[64] = "";
  for (int t = 0; t < BX_TOOL_COUNT; t++)
    if (bx_grant_lists (g, (enum bx_tool)t))
      {
        if (buf[0])
          strcat (buf, ", ");
        strcat (buf, bx_tool_name ((enum bx_tool)t));
      }
  return bx_xstrdup (buf);
}

/* Why PATH (named WHAT in the reason) cannot be used at all, or false when it is clean. */
static bool
refuse_unclean (struct bx_decision *d, const char *tool, const char *what, const char *path)
{
  cleanup_free char *p = shown (path);
  if (path[0] != '/')
    {
      deny (d, "%s: %s \"%s\" is not an absolute path: expected a path starting with '/'", tool,
            what, p);
      return true;
    }
  if (!bx_path_is_clean (path))
    {
      deny (d,
            "%s: %s \"%s\" is not a clean path: expected no '.' or '..' component, no '//' and "
            "no trailing '/'",
            tool, what, p);
      return true;
    }
  return false;
}

/* The first of G's folders that holds PATH, or NULL. */
static const char *
folder_of (const struct bx_grant *g, const char *path)
{
  for (size_t i = 0; i < g->n_paths; i++)
    if (bx_path_inside (path, g->paths[i]))
      return g->paths[i];
  return NULL;
}

static void
decide_file (const struct bx_config *cfg, struct bx_decision *d)
{
  enum bx_tool tool = d->args.tool;
  const char *name = bx_tool_name (tool);
  const char *path = d->args.path;
  if (refuse_unclean (d, name, "path", path))
    return;
  for (size_t i = 0; i < cfg->n_grants; i++)
    {
      const struct bx_grant *g = &cfg->grants[i];
      const char *folder;
      if (bx_grant_lists (g, tool) && (folder = folder_of (g, path)) != NULL)
        {
          allow (d, cfg, i);
          d->folder = folder;
          return;
        }
    }
  cleanup_free char *p = shown (path);
  /* Inside a folder granted to other tools: say so, the model can then ask differently. */
  for (size_t i = 0; i < cfg->n_grants; i++)
    if (folder_of (&cfg->grants[i], path) != NULL)
      {
        cleanup_free char *tools = tool_list (&cfg->grants[i]);
        deny (d, "%s: %s is in a folder granted only for %s", name, p, tools);
        return;
      }
  deny (d, "%s: %s is outside every granted folder", name, p);
}

static void
decide_shell (const struct bx_config *cfg, struct bx_decision *d)
{
  const char *name = bx_tool_name (d->args.tool);
  const char *cwd = d->args.cwd;
  if (cwd != NULL && refuse_unclean (d, name, "cwd", cwd))
    return;
  bool any = false;
  for (size_t i = 0; i < cfg->n_grants; i++)
    {
      const struct bx_grant *g = &cfg->grants[i];
      if (!bx_grant_lists (g, d->args.tool))
        continue;
      any = true;
      if (cwd == NULL || folder_of (g, cwd) != NULL)
        {
          allow (d, cfg, i);
          /* No cwd: the grant's first folder, the one place the model was told it may work
           * (a grants_request lists it first), for every front end alike; /tmp only when the
           * grant mounts no folder.  The arguments stay as sent: the audit line and an
           * approval's summary say what the model asked. */
          d->cwd = cwd != NULL ? cwd : g->n_paths > 0 ? g->paths[0] : NULL;
          return;
        }
    }
  if (!any)
    {
      deny (d, "%s: no grant allows %s", name, name);
      return;
    }
  cleanup_free char *p = shown (cwd);
  deny (d, "%s: cwd %s is outside every folder granted for %s", name, p, name);
}

static bool
all_digits (const char *s, size_t n)
{
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!isdigit ((unsigned char)s[i]))
      return false;
  return true;
}

int
bx_fetch_url_host (const char *url, char **host, unsigned *port, bx_sentence *why)
{
  static const char scheme[] = "https://";
  *host = NULL;
  *port = BX_HOST_DEFAULT_PORT;
  for (const char *p = url; *p; p++)
    {
      unsigned char c = (unsigned char)*p;
      if (c <= 0x20 || c >= 0x7f)
        {
          *why
              = BX_SENTENCE ("the URL holds a space, a control character or a non-ASCII character: "
                             "expected them percent-encoded");
          return -1;
        }
      if (c == '\\')
        {
          *why = BX_SENTENCE ("the URL holds a backslash: expected none");
          return -1;
        }
    }
  if (strncasecmp (url, scheme, sizeof scheme - 1) != 0)
    {
      *why = strstr (url, "://") != NULL ? BX_SENTENCE ("only https URLs are allowed")
                                         : BX_SENTENCE ("expected an absolute https:// URL");
      return -1;
    }
  const char *auth = url + sizeof scheme - 1;
  size_t alen = strcspn (auth, "/?#");
  if (alen == 0)
    {
      *why = BX_SENTENCE ("the URL has no host");
      return -1;
    }
  if (memchr (auth, '@', alen) != NULL)
    {
      *why = BX_SENTENCE ("the URL holds user information (user@): expected none");
      return -1;
    }
  if (auth[0] == '[')
    {
      *why = BX_SENTENCE ("the URL's host is an IP address: expected a host name");
      return -1;
    }
  if (memchr (auth, '%', alen) != NULL)
    {
      *why = BX_SENTENCE ("the URL's host is percent-encoded: expected a plain host name");
      return -1;
    }
  const char *colon = memchr (auth, ':', alen);
  size_t hlen = colon ? (size_t)(colon - auth) : alen;
  if (colon != NULL)
    {
      /* curl reads "0443" as 443 and ":" as no port; only one spelling of each port passes,
       * so the port policy matched is the port curl asks the proxy for. */
      *port = bx_port_parse (colon + 1, alen - hlen - 1);
      if (*port == 0)
        {
          *why = BX_SENTENCE (
              "the URL's port is not a port number: expected 1 to 65535 without a leading "
              "zero, or no port");
          return -1;
        }
    }
  cleanup_free char *h = bx_xstrndup (auth, hlen);
  for (char *p = h; *p; p++)
    *p = (char)tolower ((unsigned char)*p);
  const char *last = strrchr (h, '.');
  last = last ? last + 1 : h;
  struct in_addr a4;
  if (hlen == 0)
    {
      *why = BX_SENTENCE ("the URL has no host");
      return -1;
    }
  if (inet_aton (h, &a4) != 0 || all_digits (last, strlen (last)))
    {
      *why = BX_SENTENCE ("the URL's host is an IP address: expected a host name");
      return -1;
    }
  if (!bx_valid_host (h))
    {
      *why = BX_SENTENCE ("the URL's host is not a valid host name");
      return -1;
    }
  /* curl reads [1-1000] and {a,b} as a pattern of many URLs (toolkit's fixed argument list for
   * it has no --globoff): one call must stay one fetch.  Outside an IPv6 literal
   * (refused above) a URL has no use for them unencoded. */
  if (strpbrk (auth + hlen, "[]{}") != NULL)
    {
      *why = BX_SENTENCE ("the URL holds '[', ']', '{' or '}' outside an address: expected them "
                          "percent-encoded");
      return -1;
    }
  *host = steal_pointer (&h);
  return 0;
}

static void
decide_fetch (const struct bx_config *cfg, struct bx_decision *d)
{
  const char *name = bx_tool_name (d->args.tool);
  bx_sentence why;
  cleanup_free char *u = shown (d->args.url);
  if (bx_fetch_url_host (d->args.url, &d->host, &d->port, &why) < 0)
    {
      deny (d, "%s: %s: %s", name, why.text, u);
      return;
    }
  for (size_t i = 0; i < cfg->n_grants; i++)
    {
      const struct bx_grant *g = &cfg->grants[i];
      if (!bx_grant_lists (g, d->args.tool))
        continue;
      for (size_t k = 0; k < g->n_hosts; k++)
        if (bx_host_port_matches (g->hosts[k], d->host, d->port))
          {
            allow (d, cfg, i);
            return;
          }
    }
  if (d->port == BX_HOST_DEFAULT_PORT)
    deny (d, "%s: %s is not a granted host", name, d->host);
  else
    deny (d, "%s: %s:%u is not a granted host and port", name, d->host, d->port);
}

/* An MCP server's call: its own grant, the one whose mcp_server it names (call.c builds the
 * arguments from SERVER.TOOL), and no other. */
static void
decide_mcp (const struct bx_config *cfg, struct bx_decision *d)
{
  size_t index;
  if (d->args.server == NULL || d->args.request == NULL
      || bx_mcp_server_grant (cfg, d->args.server, &index) == NULL)
    {
      deny (d, "%s: no MCP server is configured by that name", bx_tool_name (d->args.tool));
      return;
    }
  allow (d, cfg, index);
  /* The server starts in its cwd, toolkit's input says so; no folder of the model's. */
}

void
bx_policy_decide (const struct bx_config *cfg, struct bx_tool_args *args, struct bx_decision *out)
{
  memset (out, 0, sizeof *out);
  out->args = *args;
  memset (args, 0, sizeof *args);
  const struct bx_tool_def *def = bx_tool_def (out->args.tool);
  if (def == NULL)
    {
      deny (out, "unknown tool");
      return;
    }
  /* The tool's row names its rule: a new tool with an existing rule needs nothing here. */
  switch (def->rule)
    {
    case BX_RULE_FILE:
      decide_file (cfg, out);
      break;
    case BX_RULE_COMMAND:
      decide_shell (cfg, out);
      break;
    case BX_RULE_FETCH:
      decide_fetch (cfg, out);
      break;
    case BX_RULE_MCP_SERVER:
      decide_mcp (cfg, out);
      break;
    }
}

char *
bx_decision_arguments (const struct bx_decision *d, size_t *len)
{
  struct bx_tool_args args = d->args;
  if (args.cwd == NULL)
    args.cwd = (char *)d->cwd;
  return bx_tool_args_to_json (&args, len);
}

void
bx_decision_clear (struct bx_decision *d)
{
  bx_tool_args_clear (&d->args);
  free (d->host);
  free (d->reason);
  memset (d, 0, sizeof *d);
}
