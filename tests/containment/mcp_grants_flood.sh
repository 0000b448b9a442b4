#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One hostile MCP server cannot take every other grant and server away from the model.
# Server `fat` lists tools within every bound brokerd keeps (docs/mcp-servers.md, "Listing"):
# 48 tools over 16 pages of about 170 KiB, each schema made of short strings of double
# quotes, which the grants answer shows as \x22 (2.5 times their size in JSON).  The grants
# answer passed the 4 MiB frame: brokerd answered every grants_request `failed`, so
# `boxmaker mcp` offered none of server `py`'s tools, offered the four own tools as if all
# were granted, and told the model that the broker could not be reached.  The answer must
# stay an answer, with py's tools in it.
#
# fake.so's exec mode runs toolkit mcp_call on the host for each call (no sandbox: what this
# case checks is brokerd's and `boxmaker mcp`'s), so it runs once, beside the podman.so cases.
if [ "${BX_CONTAINMENT_MODULE:-podman}" != podman ]; then
  echo "SKIP mcp_grants_flood: does not apply to ${BX_CONTAINMENT_MODULE}.so: it runs the"
  echo "servers with fake.so, once, with the podman.so cases"
  exit 77
fi
BX_CONTAINMENT_MODULE=fake
. "$(dirname "$0")/lib.sh"
if [ ! -e "$runtimedir/fake.so" ]; then
  echo "SKIP $case_name: fake.so is not built (a build without BX_TEST_HOOKS)"
  exit 77
fi
[ -x "${BX_TOOLKIT:-}" ] || skip "BX_TOOLKIT does not name toolkit"
command -v python3 > /dev/null || skip "python3 is not installed (server.py needs it)"

server=$(cd "$here/../mcp-servers" && pwd)/server.py
mkdir -p "$work/py" "$work/fat" "$work/data"
cat > "$work/fat/fat.py" <<'PY'
import json, sys
props = {"p%d" % i: {"type": "string", "description": '"' * 100} for i in range(230)}
for line in sys.stdin:
    m = json.loads(line)
    mid, params = m.get("id"), m.get("params") or {}
    if m.get("method") == "initialize":
        r = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "fat", "version": "1"}}
    elif m.get("method") == "tools/list":
        n = int(params.get("cursor") or 0)
        r = {"tools": [{"name": "t%d_%d" % (n, k), "description": '"' * 1000,
                        "inputSchema": {"type": "object", "properties": props}} for k in range(3)]}
        if n < 15:
            r["nextCursor"] = str(n + 1)
    elif mid is None:
        continue
    else:
        r = {"content": [{"type": "text", "text": "fat"}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": r}) + "\n")
    sys.stdout.flush()
PY
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
home: $work/home
audit: $work/audit.log
runtime:
  module: fake
  options:
    mode: exec
    exec: [$BX_TOOLKIT, mcp_call]
grants:
  - tools: [read_file]
    paths: [$work/data]
  - mcp_server:
      name: py
      command: [python3, $server, good]
    paths: [$work/py]
  - mcp_server:
      name: fat
      command: [python3, $work/fat/fat.py]
    paths: [$work/fat]
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/b.log" &
pids="$pids $!"
wait_socket "$work/b.sock" $!
[ -S "$work/b.sock" ] || { echo "brokerd did not start:"; cat "$work/b.log"; exit 1; }
i=0
until grep -q 'MCP server py: ' "$work/b.log" && grep -q 'MCP server fat' "$work/b.log" \
    || [ $i -gt 3000 ]; do
  sleep 0.1; i=$((i + 1))
done
grep -q 'MCP server py: 5 tool(s) listed' "$work/b.log" && pass "py listed its five tools" \
  || fail "py's listing: $(grep 'MCP server' "$work/b.log")"
grep -q 'MCP server fat: 48 tool(s) listed' "$work/b.log" \
  && pass "fat's 48 tools were kept, each within the bounds" \
  || fail "fat's listing: $(grep 'MCP server' "$work/b.log")"

# The grants answer, read as any peer reads it.
python3 "$here/../common/grants_answer.py" "$work/b.sock" > "$work/grants.out" 2>&1
[ $? = 0 ] && pass "the grants answer is an answer" \
  || fail "the grants answer: $(head -c 300 "$work/grants.out")"

# boxmaker mcp: what the model is offered.
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  | "$boxmaker" mcp --socket "$work/b.sock" --session "$session" > "$work/mcp.out" 2> "$work/mcp.err"
python3 - "$work/mcp.out" > "$work/mcp.check" 2>&1 <<'PY'
import json, sys
answers = {}
for line in open(sys.argv[1]):
    m = json.loads(line)
    answers[m.get("id")] = m
names = [t["name"] for t in answers.get(2, {}).get("result", {}).get("tools", [])]
instructions = answers.get(1, {}).get("result", {}).get("instructions", "")
problems = []
if "py.echo" not in names:
    problems.append("py.echo is not offered")
problems += ["%s is offered, which no grant gives" % n for n in names
             if n in ("write_file", "shell", "http_fetch")]
if "could not be reached" in instructions:
    problems.append("the instructions say: %s" % instructions[-300:])
print("offered:", names[:12])
print("problems:", problems)
sys.exit(1 if problems else 0)
PY
[ $? = 0 ] && pass "boxmaker mcp still offers py's tools and only the granted own tools" \
  || fail "boxmaker mcp: $(cat "$work/mcp.check"); $(cat "$work/mcp.err")"
finish
