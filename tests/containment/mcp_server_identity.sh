#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A hostile MCP server cannot pass for another server or for boxmaker's own tools.  Server
# `hostile` (server.py impostor) lists tools named py.echo (the tool of server `py`, also
# configured), other.tool, read_file and the other three own tools, mcp_call, hostile.echo,
# and names that are no names (a newline, a Cyrillic letter, a slash, a bidirectional
# control); and every call of it answers that it is py.echo, with boxmaker's labels of its
# own.  Then the grants answer, `boxmaker mcp`'s tools/list and the audit line name each of
# its tools hostile.X only, drop the non-names, never offer one of the four or another
# server's tool for it, and label its results with its own grant's class and trust.
#
# The servers really run: fake.so's exec mode runs toolkit mcp_call on the host for each
# call (no sandbox: what this case checks is brokerd's and `boxmaker mcp`'s, not the
# sandbox's), so it runs once, beside the podman.so cases.  BX_TOOLKIT names toolkit.
if [ "${BX_CONTAINMENT_MODULE:-podman}" != podman ]; then
  echo "SKIP mcp_server_identity: does not apply to ${BX_CONTAINMENT_MODULE}.so: it runs the"
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
mkdir -p "$work/data" "$work/py" "$work/hostile"
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
    class: internal
  - mcp_server:
      name: hostile
      command: [python3, $server, impostor]
    paths: [$work/hostile]
    class: public
    untrusted: true
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/b.log" &
pids="$pids $!"
wait_socket "$work/b.sock" $!
[ -S "$work/b.sock" ] || { echo "brokerd did not start:"; cat "$work/b.log"; exit 1; }
i=0
until grep -q 'MCP server py: ' "$work/b.log" && grep -q 'MCP server hostile' "$work/b.log" \
    || [ $i -gt 3000 ]; do
  sleep 0.1; i=$((i + 1))
done
grep -q 'MCP server py: 5 tool(s) listed' "$work/b.log" && pass "py listed its five tools" \
  || fail "py's listing: $(grep 'MCP server' "$work/b.log")"
# Of the impostor's 14 names, the 10 that are names, each under its own server's name.
grep -q 'MCP server hostile: 10 tool(s) listed' "$work/b.log" \
  && pass "hostile: its ten names that are names kept, the four others dropped" \
  || fail "hostile's listing: $(grep 'MCP server' "$work/b.log")"

# The grants answer, read as any peer reads it.
python3 "$here/../common/grants_answer.py" "$work/b.sock" > "$work/answer.json"
python3 - "$work/answer.json" > "$work/grants.out" 2>&1 <<'PY'
import json, sys
grants = json.load(open(sys.argv[1]))["grants"]
problems = []
names = {}
for g in grants:
    for t in g.get("mcp_tools", []):
        names.setdefault(g.get("mcp_server"), []).append(t["name"])
        if not t["name"].startswith(g["mcp_server"] + "."):
            problems.append("grant %d offers %s" % (g["grant"], t["name"]))
own = {"read_file", "write_file", "shell", "http_fetch", "mcp_call"}
every = [n for ns in names.values() for n in ns]
problems += ["%s is offered twice" % n for n in set(every) if every.count(n) > 1]
problems += ["%s passes for an own tool" % n for n in every if n in own]
py_tools = set(names.get("py", []))
problems += ["hostile offers py's %s" % n for n in names.get("hostile", []) if n in py_tools]
expected = sorted("hostile." + n for n in ["py.echo", "py", "other.tool", "read_file",
                  "write_file", "shell", "http_fetch", "mcp_call", "hostile.echo", "echo"])
if sorted(names.get("hostile", [])) != expected:
    problems.append("hostile's tools are %s" % sorted(names.get("hostile", [])))
print("grants:", json.dumps(names, sort_keys=True))
print("problems:", problems)
sys.exit(1 if problems else 0)
PY
[ $? = 0 ] && pass "the grants answer names hostile's tools hostile.X only: $(head -1 "$work/grants.out")" \
  || fail "the grants answer: $(cat "$work/grants.out")"

# boxmaker mcp: tools/list, then the impostor's py.echo and read_file, and py's py.echo,
# each request sent once the one before is answered (an end of input cancels what runs).
python3 - "$boxmaker" "$work/b.sock" "$session" > "$work/mcp.out" 2> "$work/mcp.err" <<'PY'
import json, subprocess, sys
mcp = subprocess.Popen([sys.argv[1], "mcp", "--socket", sys.argv[2], "--session", sys.argv[3]],
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(msg):
    mcp.stdin.write(json.dumps(msg) + "\n")
    mcp.stdin.flush()
    if "id" in msg:
        line = mcp.stdout.readline()
        sys.stdout.write(line)
send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "t", "version": "1"}}})
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
for i, tool in ((3, "hostile.py.echo"), (4, "hostile.read_file"), (5, "py.echo")):
    send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
          "params": {"name": tool, "arguments": {"text": "x"}}})
mcp.stdin.close()
mcp.wait()
PY
python3 - "$work/mcp.out" > "$work/mcp.check" 2>&1 <<'PY'
import json, sys
answers = {}
for line in open(sys.argv[1]):
    m = json.loads(line)
    answers[m.get("id")] = m
problems = []
tools = answers.get(2, {}).get("result", {}).get("tools", [])
names = [t["name"] for t in tools]
problems += ["%s is offered twice" % n for n in set(names) if names.count(n) > 1]
problems += ["%s is neither own nor a server's" % n for n in names
             if n != "read_file" and not n.startswith(("py.", "hostile."))]
problems += ["%s is offered, which no grant gives" % n for n in names
             if n in ("write_file", "shell", "http_fetch", "mcp_call")]
desc = {t["name"]: t.get("description", "") for t in tools}
if "The py server's own" in desc.get("read_file", "") or "read_file" not in desc:
    problems.append("read_file is not boxmaker's own: %r" % desc.get("read_file"))
if desc.get("py.echo") != "Returns its text.":
    problems.append("py.echo is not py's: %r" % desc.get("py.echo"))
for i, tool in ((3, "hostile.py.echo"), (4, "hostile.read_file")):
    r = answers.get(i, {}).get("result", {})
    labels = [r.get("_meta", {})] + [b.get("_meta", {}) for b in r.get("content", [])]
    for meta in labels:
        if meta.get("boxmaker/class") != "public" or meta.get("boxmaker/untrusted") is not True:
            problems.append("%s labelled %s" % (tool, meta))
r = answers.get(5, {}).get("result", {})
if r.get("_meta", {}).get("boxmaker/class") != "internal" or \
        r.get("content", [{}])[0].get("text") != "x":
    problems.append("py.echo answered %s" % r)
print("offered:", names)
print("problems:", problems)
sys.exit(1 if problems else 0)
PY
[ $? = 0 ] && pass "boxmaker mcp offers and labels hostile's tools as its own grant's" \
  || fail "boxmaker mcp: $(cat "$work/mcp.check"); $(cat "$work/mcp.out") $(cat "$work/mcp.err")"

# The audit line: each call is named by the tool called, under the grant that ran it.
for tool in hostile.py.echo hostile.read_file; do
  grep -q "\"tool\":\"$tool\",.*\"grant\":3,\"decision\":\"allowed\".*\"outcome\":\"result\"" "$work/audit.log" \
    && pass "the audit line of $tool names $tool and hostile's grant" \
    || fail "no audit line of $tool in grant 3: $(cat "$work/audit.log")"
done
grep -q '"tool":"py.echo",.*"grant":2,"decision":"allowed".*"outcome":"result"' "$work/audit.log" \
  && pass "py.echo is py's call, in py's grant" || fail "py.echo: $(cat "$work/audit.log")"
tools=$(grep -o '"tool":"[^"]*"' "$work/audit.log" | sort -u | tr '\n' ' ')
[ "$tools" = '"tool":"hostile.py.echo" "tool":"hostile.read_file" "tool":"py.echo" ' ] \
  && pass "no audit line names another tool ($tools)" || fail "the audit log's tools: $tools"
finish
