/* SPDX-License-Identifier: Apache-2.0 */
/* toolkit mcp_call: toolkit as the MCP client of one server on stdio, for one request.
 *
 * Standard input holds one JSON object:
 *
 *   {"command": ["python3", "/srv/server.py"],      the server's argv (PATH is searched)
 *    "cwd": "/srv",                                 optional; toolkit's own when absent
 *    "method": "tools/list" | "tools/call",
 *    "params": {"name": "echo", "arguments": {}}}   tools/call: name, and arguments (an
 *                                                   object) when the tool takes any;
 *                                                   tools/list: optional, a cursor only
 *
 * When the egress proxy's socket is mounted (a grant with hosts), toolkit first starts the
 * local forwarder shell gets (egress_local.h), so the server inherits the proxy variables;
 * a server that ignores them has no network at all.
 *
 * toolkit starts the command with pipes on its standard input and output (standard error goes
 * to /dev/null, so nothing of it mixes into the result), in a process group of its own, and
 * speaks JSON-RPC 2.0 to it, one message a line: `initialize`, `notifications/initialized`,
 * then the one request.  Then it closes the server's standard input, waits up to
 * BX_MCP_SERVER_EXIT_GRACE_MS for it to end, sends its group SIGTERM, waits up to
 * BX_MCP_SERVER_TERM_GRACE_MS, and kills the group and every process the server left
 * behind (toolkit is a child subreaper), so nothing of the server outlives the call.
 *
 * Exit 0: standard output holds the request's `result` object, as compact JSON.  Exit 1:
 * one line `mcp_call: STEP: SENTENCE`, STEP being initialize, tools/list or tools/call
 * (or the program's name when it could not be started, with the system's reason), and
 * SENTENCE one of the fixed sentences below.  Exit 2: toolkit was run wrongly, such as an
 * input that is not the object above (the reason is on standard error).
 *
 * A server that never answers is ended by the sandbox's time limit: toolkit waits in poll(2)
 * without a timeout of its own, so it costs no CPU meanwhile; SIGTERM, SIGINT or SIGHUP
 * make toolkit end the server and answer BX_MCP_SERVER_STOPPED. */
#ifndef BX_TOOLKIT_MCP_SERVER_H
#define BX_TOOLKIT_MCP_SERVER_H

#include "bx/contract.h"

/* The most toolkit reads of the server's standard output, all messages together. */
#define BX_MCP_SERVER_READ_MAX 4194304
/* How long a server may take to end after its standard input closes, then after SIGTERM. */
#define BX_MCP_SERVER_EXIT_GRACE_MS 1000
#define BX_MCP_SERVER_TERM_GRACE_MS 500

/* The fixed sentences, one per way a server fails. */
#define BX_MCP_SERVER_ENDED      "the server ended before it answered"
#define BX_MCP_SERVER_GARBAGE    "the server wrote something that is not a JSON-RPC message"
#define BX_MCP_SERVER_FLOOD      "the server wrote more than " BX_STR (BX_MCP_SERVER_READ_MAX) " bytes"
#define BX_MCP_SERVER_WRONG_ID   "the server answered a request it was not sent"
#define BX_MCP_SERVER_BAD_RESULT "the server's result is not what MCP defines for it"
#define BX_MCP_SERVER_VERSION    "the server speaks no MCP revision toolkit knows"
/* Followed by ": CODE MESSAGE", the server's own message made safe and cut. */
#define BX_MCP_SERVER_ERROR   "the server answered with an error"
#define BX_MCP_SERVER_STOPPED "toolkit was stopped before the server answered"

/* Reads the request from IN_FD, runs it, writes the result or the refusal line to OUT_FD and
 * returns toolkit's exit status.  EGRESS_SOCKET: where the proxy's socket is when the grant
 * has hosts (BX_EGRESS_SOCKET), or NULL. */
int bx_toolkit_mcp_server (int in_fd, int out_fd, const char *egress_socket);

#endif
