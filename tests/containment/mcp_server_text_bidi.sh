#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A hostile MCP server's text reaches no person's terminal or screen with characters that
# reorder or hide what it says.  Server `listerr` answers tools/list with a JSON-RPC error
# whose message holds U+202E (right-to-left override), U+2067, U+202C and U+2028: brokerd's
# log line "MCP server listerr offers no tools until the next reload: ..." is read by the
# owner in a terminal (journalctl), and must show them escaped, as the audit log does
# (docs/security.md, audit_bidi.sh).  Server `bidi` lists a tool whose description, title
# and schema property name hold them: the grants answer, which `boxmaker mcp` offers to MCP
# clients (which show descriptions to the person approving a tool), promises "printable text
# only" (docs/mcp-servers.md).
#
# fake.so's exec mode runs toolkit mcp_call on the host for each call (no sandbox), so it
# runs once, beside the podman.so cases.
if [ "${BX_CONTAINMENT_MODULE:-podman}" != podman ]; then
  echo "SKIP mcp_server_text_bidi: does not apply to ${BX_CONTAINMENT_MODULE}.so: it runs the"
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
command -v python3 > /dev/null || skip "python3 is not installed"

mkdir -p "$work/srv"
cat > "$work/srv/bidi.py" <<'PY'
import json, sys
mode = sys.argv[1]
BIDI = "\u202eexe.txt\u202c \u2067x\u2069 \u2028"
for line in sys.stdin:
    m = json.loads(line)
    mid, params = m.get("id"), m.get("params") or {}
    if mid is None:
        continue
    msg = {"jsonrpc": "2.0", "id": mid}
    if m.get("method") == "initialize":
        msg["result"] = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                         "serverInfo": {"name": "b", "version": "1"}}
    elif mode == "listerr":
        msg["error"] = {"code": -1, "message": "refused " + BIDI}
    else:
        msg["result"] = {"tools": [{"name": "probe", "description": "Safe " + BIDI,
                                    "title": "T " + BIDI,
                                    "inputSchema": {"type": "object", "properties": {
                                        "p" + BIDI: {"type": "string"}}}}]}
    sys.stdout.write(json.dumps(msg) + "\n")
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
  - mcp_server:
      name: listerr
      command: [python3, $work/srv/bidi.py, listerr]
    paths: [$work/srv]
    writable: false
  - mcp_server:
      name: bidi
      command: [python3, $work/srv/bidi.py, list]
    paths: [$work/srv]
    writable: false
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/b.log" &
pids="$pids $!"
wait_socket "$work/b.sock" $!
[ -S "$work/b.sock" ] || { echo "brokerd did not start:"; cat "$work/b.log"; exit 1; }
i=0
until grep -q 'MCP server listerr' "$work/b.log" && grep -q 'MCP server bidi' "$work/b.log" \
    || [ $i -gt 3000 ]; do
  sleep 0.1; i=$((i + 1))
done
# U+202E, U+202C, U+2067, U+2069, U+2028 as UTF-8.
bidi_bytes='\xe2\x80\xae|\xe2\x80\xac|\xe2\x81\xa7|\xe2\x81\xa9|\xe2\x80\xa8'
line=$(grep 'MCP server listerr' "$work/b.log")
[ -n "$line" ] || fail "no log line for listerr: $(cat "$work/b.log")"
if printf '%s' "$line" | LC_ALL=C grep -qP "$bidi_bytes"; then
  fail "brokerd's log line holds the server's bidirectional controls raw: $(printf '%s' "$line" | od -c | head -12)"
else
  pass "brokerd's log line shows the server's text escaped: $line"
fi

python3 "$here/../common/grants_answer.py" "$work/b.sock" > "$work/answer.json"
python3 - "$work/answer.json" > "$work/grants.out" 2>&1 <<'PY'
import json, sys
text = json.dumps(json.load(open(sys.argv[1]))["grants"])  # ASCII, \uXXXX for the rest
bad = [c for c in ("\\u202e", "\\u202c", "\\u2067", "\\u2069", "\\u2028") if c in text]
print("controls:", bad, text[:400])
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] && pass "the grants answer holds none of the server's bidirectional controls" \
  || fail "the grants answer: $(cat "$work/grants.out")"
finish
