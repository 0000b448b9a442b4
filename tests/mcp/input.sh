#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Valid JSON that cannot be used as it stands is answered with the request's own id, over
# stdio and over HTTP (a Unix socket, through curl):
#   - a string holding U+0000 ("\u0000") in a tool argument, a tool name or a key is -32602
#     naming it: refused, never cut short into another path or command;
#   - U+0000 in "method" or "jsonrpc" is -32600;
#   - initialize without params, or without a string protocolVersion, is -32602.
# No brokerd: each of these is answered before any call would reach it.
#
#   input.sh BOXMAKER
set -u
boxmaker=$1
. "$(dirname "$0")/../common/wait_socket.sh"

work=$(mktemp -d /tmp/bx-mcp-input.XXXXXX)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
fail=0

# One request per line, and after each the answer expected, exactly.
cat > "$work/cases" <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/etc/passwd\u0000.txt"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: \"arguments.path\" holds U+0000 (a NUL character), refused rather than cut short"}}
{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"shell","arguments":{"command":"ls\u0000; rm -rf /"}}}
{"jsonrpc":"2.0","id":"two","error":{"code":-32602,"message":"Invalid params: \"arguments.command\" holds U+0000 (a NUL character), refused rather than cut short"}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file\u0000x","arguments":{}}}
{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: \"name\" holds U+0000 (a NUL character), refused rather than cut short"}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","arguments":{"pa\u0000th":"/x"}}}
{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params: \"arguments.(a key)\" holds U+0000 (a NUL character), refused rather than cut short"}}
{"jsonrpc":"2.0","id":"id\u0000","method":"tools/call","params":{"name":"write_file","arguments":{"path":"/w","content":["a","\u0000"]}}}
{"jsonrpc":"2.0","id":"id\u0000","error":{"code":-32602,"message":"Invalid params: \"arguments.content[1]\" holds U+0000 (a NUL character), refused rather than cut short"}}
{"jsonrpc":"2.0","id":6,"method":"ping\u0000"}
{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"Invalid Request: \"method\" holds U+0000"}}
{"jsonrpc":"2.0\u0000","id":7,"method":"ping"}
{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""}}
{"jsonrpc":"2.0","id":8,"method":"initialize"}
{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Invalid params: initialize needs \"params\" with \"protocolVersion\""}}
{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Invalid params: \"protocolVersion\" must be a string"}}
{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-06-18\u0000"}}
{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"Invalid params: \"protocolVersion\" holds U+0000 (a NUL character), refused rather than cut short"}}
{"jsonrpc":"2.0","id":11,"method":"ping"}
{"jsonrpc":"2.0","id":11,"result":{}}
EOF
sed -n 'p;n' "$work/cases" > "$work/requests"
sed -n 'n;p' "$work/cases" > "$work/expected"

# stdio: every answer, in order (none of these reaches a thread of its own).
"$boxmaker" mcp --socket "$work/no-broker.sock" < "$work/requests" > "$work/stdio.out" \
  2> "$work/stdio.err"
if cmp -s "$work/expected" "$work/stdio.out"; then
  echo "PASS: stdio answers each with its own id"
else
  echo "FAIL: stdio: expected, then got:"
  diff "$work/expected" "$work/stdio.out"
  cat "$work/stdio.err"
  fail=1
fi

if ! command -v curl >/dev/null 2>&1; then
  echo "SKIP: curl is not installed: the HTTP transport is not checked"
  exit $fail
fi
"$boxmaker" mcp --socket "$work/no-broker.sock" --http "$work/mcp.sock" 2> "$work/http.err" &
pid=$!
wait_socket "$work/mcp.sock" $pid 60 || { echo "FAIL: no HTTP socket:"; cat "$work/http.err"; exit 1; }
n=0
while IFS= read -r request <&3 && IFS= read -r want <&4; do
  n=$((n + 1))
  # Each read under the revision it names, 2025-06-18, so initialize is not told apart.
  code=$(printf '%s' "$request" |
         curl -s -o "$work/body" -w '%{http_code}' --unix-socket "$work/mcp.sock" \
              -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
              -H 'MCP-Protocol-Version: 2025-06-18' --data-binary @- http://localhost/mcp)
  got=$(cat "$work/body")
  if [ "$code" != 200 ] || [ "$got" != "$want" ]; then
    echo "FAIL: HTTP request $n: $request"
    echo "  want 200 $want"
    echo "  got  $code $got"
    fail=1
  fi
done 3< "$work/requests" 4< "$work/expected"
[ $fail -ne 0 ] || echo "PASS: HTTP answers each with its own id and 200"
exit $fail
