#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# An MCP server in brokerd's config, against fake.so (which answers with the spec it was
# handed): a call of SERVER.TOOL becomes one mcp_call whose input holds the server's command
# and the model's tool and arguments, in the server's own grant (its folders, its class),
# its writable folder with a shell's protected paths read-only over it, named SERVER.TOOL on
# the audit line; an unknown server, a bad tool name and mcp_call itself
# are refused (a long name cut on the audit line); approving a server's tool shows SERVER.TOOL
# and the model's arguments and, once_per_session, covers that tool only; --check-config
# refuses a wrong mcp_server naming FILE:LINE:COLUMN; and, with fake.so running toolkit
# mcp_call on the host (its mode exec), a server listing 300 tools keeps 256, and one whose
# pages never end is asked for 16.
#
#   brokerd.sh BROKERD BOXMAKER RUNTIMEDIR TOOLKIT
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 toolkit=$4
. "$(dirname "$0")/../common/wait_socket.sh"

work=$(mktemp -d /tmp/bx-mcp-brokerd.XXXXXX)
pid=
cleanup () {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
contains () { case $1 in *"$2"*) return 0 ;; esac; return 1; }
mkdir -p "$work/data" "$work/notes" "$work/asked" "$work/home"

cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
home: $work/home
audit: $work/audit.log
admin_socket: $work/admin.sock
admin_group: 4242
runtime:
  module: fake
  options:
    mode: echo
grants:
  - tools: [read_file]
    paths: [$work/data]
  - mcp_server:
      name: notes
      command: [python3, /srv/mcp/server.py, good]
      cwd: $work/notes
    paths: [$work/notes]
    class: internal
  - mcp_server:
      name: asked
      command: [python3, /srv/mcp/server.py, good]
    paths: [$work/asked]
    approval: once_per_session
    approval_timeout: 3s
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/brokerd.log" &
pid=$!
wait_socket "$work/b.sock" $pid
[ -S "$work/b.sock" ] || { echo "brokerd did not start:"; cat "$work/brokerd.log"; exit 1; }
call () { # tool, arguments
  out=$("$boxmaker" call "$1" "$2" --socket "$work/b.sock" 2> "$work/call.err")
  rc=$? err=$(cat "$work/call.err")
}

call notes.echo '{"text": "hi"}'
[ $rc = 0 ] && contains "$out" '"tool":"mcp_call"' && contains "$out" '"tool_id":4' \
  && contains "$out" "\"arguments\":{\"command\":[\"python3\",\"/srv/mcp/server.py\",\"good\"],\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}},\"cwd\":\"$work/notes\"}" \
  && contains "$out" "\"mounts\":[{\"path\":\"$work/notes\",\"writable\":true},{\"path\":\"$work/notes/.git\",\"writable\":false}" \
  && contains "$out" '"egress":null' && contains "$err" 'class=internal untrusted=false' \
  && pass "notes.echo is one mcp_call in the server's own grant" \
  || fail "notes.echo: rc=$rc out=$out err=$err"
grep -q '"tool":"notes.echo",.*"args":{"arguments":"{\\"text\\":\\"hi\\"}"}.*"grant":2,"decision":"allowed"' "$work/audit.log" \
  && pass "the audit line names notes.echo, the arguments it was sent and the server's grant" \
  || fail "audit: $(cat "$work/audit.log")"

call other.echo '{}'
[ $rc = 1 ] && contains "$err" 'denied: unknown tool "other.echo": expected read_file, write_file, shell or http_fetch' \
  && pass "a server the config does not name is an unknown tool" || fail "other.echo: $rc $err"
call 'notes.a/b' '{}'
[ $rc = 1 ] && contains "$err" 'denied: notes.a/b: the tool'"'"'s name is not 1 to 128 of [A-Za-z0-9_.-]' \
  && pass "a tool name MCP does not advise is refused" || fail "notes.a/b: $rc $err"
# A refused name is cut on the audit line as in the refusal: a model cannot make the line
# as long as the name it sends.
long=$(printf 'notes.%0300d' 0 | tr 0 '!')
call "$long" '{}'
logged=$(grep -o '"tool":"notes\.!*"' "$work/audit.log" | tail -1)
[ $rc = 1 ] && [ -n "$logged" ] && [ ${#logged} -le $((64 + 9)) ] \
  && pass "a long refused server tool name is cut on the audit line" \
  || fail "long name: rc=$rc logged=${#logged} bytes: $(tail -c 400 "$work/audit.log")"
# Approving an MCP server's tool: the owner sees SERVER.TOOL and the model's arguments, not
# the owner's command; once_per_session then covers that tool only, not the server's others.
"$boxmaker" call asked.echo '{"text": "approve me"}' --socket "$work/b.sock" --session s1 \
  --call a1 > "$work/a1.out" 2>&1 &
a1=$!
entry= i=0
while ! contains "$entry" '"session":"s1"' && [ $i -lt 600 ]; do
  entry=$("$boxmaker" approvals --json --admin-socket "$work/admin.sock" 2>/dev/null)
  contains "$entry" '"session":"s1"' || { sleep 0.1; i=$((i + 1)); }
done
id=$(echo "$entry" | sed -n 's/.*"approval":"\([0-9a-f]*\)".*/\1/p' | head -1)
contains "$entry" '"tool":"asked.echo"' \
  && contains "$entry" '"summary":"MCP tool asked.echo: {\\x22text\\x22:\\x22approve me\\x22}"' \
  && pass "the owner is asked about asked.echo and its arguments" || fail "approval entry: $entry"
[ -n "$id" ] && "$boxmaker" approve "$id" --admin-socket "$work/admin.sock" > /dev/null
wait "$a1"
contains "$(cat "$work/a1.out")" '"tool":"mcp_call"' && pass "the approved call ran" \
  || fail "the approved call: $(cat "$work/a1.out")"
call asked.echo '{"text": "again"}'
out_again=$("$boxmaker" call asked.echo '{"text": "again"}' --socket "$work/b.sock" --session s1 --call a2 2>&1)
contains "$out_again" '"tool":"mcp_call"' && ! contains "$out_again" 'waiting for approval' \
  && pass "the same tool in the same session runs on the remembered approval" \
  || fail "asked.echo again: $out_again"
out_other=$("$boxmaker" call asked.pid '{}' --socket "$work/b.sock" --session s1 --call a3 2>&1)
contains "$out_other" 'did not answer within the approval timeout' \
  && pass "another tool of the same server is asked again" || fail "asked.pid: $out_other"
call notes.echo '[1]'
[ $rc != 0 ] && pass "arguments that are not an object are refused" || fail "notes.echo [1]: $rc $out"
call mcp_call '{"command": ["/bin/sh"], "method": "tools/list"}'
[ $rc = 1 ] && contains "$err" 'denied: unknown tool "mcp_call"' \
  && pass "no client names mcp_call itself" || fail "mcp_call: $rc $err"

# boxmaker mcp still reads the grants and offers the four own tools the other grants give,
# and neither mcp_call nor the server's tools (under fake.so the server's list fails, so its
# grant carries none).
out=$(printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' |
  "$boxmaker" mcp --socket "$work/b.sock" 2> "$work/mcp.err")
contains "$out" '"name":"read_file"' && ! contains "$out" 'could not be reached' \
  && ! contains "$out" 'mcp_call' && ! contains "$out" 'notes' \
  && pass "boxmaker mcp reads the grants and offers read_file only" \
  || fail "boxmaker mcp: $out $(cat "$work/mcp.err")"
kill "$pid"; wait "$pid" 2>/dev/null; pid=

# --check-config: each mistake named where it is written.
check () { # name, grant lines, expected problem
  printf 'socket: %s\nhome: %s\ngrants:\n%s\n' "$work/c.sock" "$work/home" "$2" > "$work/$1.yaml"
  got=$("$brokerd" --check-config "$work/$1.yaml" --runtimedir "$runtimedir" 2>&1)
  contains "$got" "$work/$1.yaml:$3" && pass "--check-config: $1" || fail "$1: $got"
}
check tools_too "  - tools: [shell]
    mcp_server: {name: a, command: [x]}
    paths: [$work/notes]" '5:5: a grant with "mcp_server" has no "tools": its tools are the server'"'"'s'
check no_command "  - mcp_server: {name: a}
    paths: [$work/notes]" '4:17: mcp_server has no "command": expected its program and arguments, such as [python3, /srv/mcp/server.py]'
check bad_name "  - mcp_server: {name: No.Dots, command: [x]}" '4:24: server name "No.Dots": expected 1 to 32 of [a-z0-9_-]'
check twice "  - mcp_server: {name: a, command: [x]}
  - mcp_server: {name: a, command: [y]}" '5:5: MCP server "a" of grant 2 is also grant 1'"'"'s: expected one grant per server'
check unknown_key "  - mcp_server: {name: a, command: [x], env: {A: b}}" '4:41: unknown key "env" in mcp_server: expected one of name, command, cwd'
check nested "  - tools: [shell]
    paths: [$work/data]
  - mcp_server: {name: a, command: [x]}
    paths: [$work/data/inner]" "7:13: path \"$work/data/inner\" of grant 2 lies inside \"$work/data\" of grant 1"

# The listing's bounds, with the servers run for real by toolkit (fake.so's mode exec): at
# most 256 tools a server, the first ones listed; nextCursor followed for at most 16 pages
# (server.py endless lists tool pageN on page N, so the tools kept count the pages asked).
server=$(cd "$(dirname "$0")" && pwd)/server.py
cat > "$work/bounds.yaml" <<YAML
socket: $work/bounds.sock
home: $work/home
runtime:
  module: fake
  options:
    mode: exec
    exec: [$toolkit, mcp_call]
grants:
  - mcp_server:
      name: many
      command: [python3, $server, many]
    paths: [$work/notes]
  - mcp_server:
      name: endless
      command: [python3, $server, endless]
    paths: [$work/asked]
YAML
"$brokerd" --config "$work/bounds.yaml" --runtimedir "$runtimedir" 2> "$work/bounds.log" &
pid=$!
wait_socket "$work/bounds.sock" $pid
i=0
until grep -q 'MCP server endless' "$work/bounds.log" || [ $i -gt 3000 ]; do
  sleep 0.1; i=$((i + 1))
done
python3 "$(dirname "$0")/../common/grants_answer.py" "$work/bounds.sock" > "$work/bounds.json"
grants=$(python3 - "$work/bounds.json" <<'PY'
import json, sys
for g in json.load(open(sys.argv[1]))["grants"]:
    names = [t["name"] for t in g["mcp_tools"]]
    print(g["mcp_server"], len(names), names[0] if names else "-", names[-1] if names else "-")
PY
)
grep -q 'MCP server many: 256 tool(s) listed' "$work/bounds.log" \
  && contains "$grants" 'many 256 many.t000 many.t255' \
  && pass "a server listing 300 tools keeps the first 256" \
  || fail "300 tools: $grants; $(cat "$work/bounds.log")"
grep -q 'MCP server endless: 16 tool(s) listed' "$work/bounds.log" \
  && contains "$grants" 'endless 16 endless.page0 endless.page15' \
  && pass "a server whose pages never end is asked for 16 pages" \
  || fail "endless pages: $grants; $(cat "$work/bounds.log")"
kill "$pid"; wait "$pid" 2>/dev/null; pid=

[ $failures = 0 ] || { cat "$work/brokerd.log"; exit 1; }
echo "ok: MCP servers in brokerd's config"
