/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness: policy's decisions on arbitrary arguments.  The first byte picks the
 * tool, the rest is the path, cwd or URL.  Whatever comes in: no crash, a denial always has a
 * reason starting with the tool's name, and an allowed call is inside its grant (a file in
 * the matched folder, a URL whose host the grant's patterns match). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bx/cleanup.h"
#include "bx/hosts.h"
#include "config.h"
#include "policy.h"

static const char grants[] = "grants:\n"
                             "  - tools: [read_file, write_file]\n"
                             "    paths: [/home/me/notes, /srv/docs]\n"
                             "  - tools: [shell]\n"
                             "    paths: [/home/me/work]\n"
                             "  - tools: [http_fetch]\n"
                             "    hosts: [example.com, \"*.wikipedia.org\", \"git.test:8443\"]\n";

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static struct bx_config *cfg;
  if (cfg == NULL)
    {
      bx_error err = NULL;
      if (bx_config_parse (grants, strlen (grants), "fuzz.yaml", &cfg, &err) < 0)
        abort ();
    }
  if (size < 1)
    return 0;
  /* Tool arguments never hold a NUL (the parser refuses one). */
  char *text = bx_xstrndup ((const char *)data + 1, size - 1);
  struct bx_tool_args args = { .tool = (enum bx_tool) (data[0] % BX_TOOL_COUNT) };
  switch (args.tool)
    {
    case BX_TOOL_READ_FILE:
      args.path = text;
      break;
    case BX_TOOL_WRITE_FILE:
      args.path = text;
      args.content = bx_xstrdup ("");
      break;
    case BX_TOOL_SHELL:
      args.command = bx_xstrdup ("true");
      args.cwd = text;
      break;
    case BX_TOOL_HTTP_FETCH:
      args.url = text;
      break;
    case BX_TOOL_MCP_CALL:
      /* Nothing of a model's reaches it; it must be denied all the same. */
      free (text);
      break;
    }
  struct bx_decision d;
  bx_policy_decide (cfg, &args, &d);
  const char *tool = bx_tool_name (d.args.tool);
  if (d.args.tool == BX_TOOL_MCP_CALL && d.verdict != BX_DENIED)
    abort ();
  if (d.verdict == BX_DENIED)
    {
      if (d.reason == NULL || strncmp (d.reason, tool, strlen (tool)) != 0)
        abort ();
    }
  else if (d.args.tool == BX_TOOL_READ_FILE || d.args.tool == BX_TOOL_WRITE_FILE)
    {
      if (!bx_path_is_clean (d.args.path) || !bx_path_inside (d.args.path, d.folder))
        abort ();
    }
  else if (d.args.tool == BX_TOOL_HTTP_FETCH)
    {
      bool matched = false;
      for (size_t i = 0; i < d.grant->n_hosts; i++)
        matched = matched || bx_host_port_matches (d.grant->hosts[i], d.host, d.port);
      if (!matched || strncasecmp (d.args.url, "https://", 8) != 0)
        abort ();
    }
  bx_decision_clear (&d);
  return 0;
}
