#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A model cannot make the audit log as long as what it sends: a call of an MCP server's tool
# whose name (SERVER.<junk>, or a server nobody configured) or arguments are megabytes long
# writes lines of bounded size, the name cut at 64 bytes and the arguments at 200, as
# docs/config.md says ("Audit log").  Needs no sandbox (fake.so answers), so it runs once,
# beside the podman.so cases.
if [ "${BX_CONTAINMENT_MODULE:-podman}" != podman ]; then
  echo "SKIP mcp_audit_flood: does not apply to ${BX_CONTAINMENT_MODULE}.so: no sandbox runs"
  echo "(fake.so answers); it runs once, with the podman.so cases"
  exit 77
fi
BX_CONTAINMENT_MODULE=fake
. "$(dirname "$0")/lib.sh"
if [ ! -e "$runtimedir/fake.so" ]; then
  echo "SKIP $case_name: fake.so is not built (a build without BX_TEST_HOOKS)"
  exit 77
fi

mkdir -p "$work/notes"
cat > "$work/b.yaml" <<YAML
socket: $work/b.sock
home: $work/home
audit: $work/audit.log
runtime:
  module: fake
  options:
    mode: echo
grants:
  - mcp_server:
      name: notes
      command: [python3, /srv/mcp/server.py]
    paths: [$work/notes]
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/b.log" &
pids="$pids $!"
wait_socket "$work/b.sock" $!
[ -S "$work/b.sock" ] || { echo "brokerd did not start:"; cat "$work/b.log"; exit 1; }

# send CALL KIND: one frame of KIND, built here (a name of megabytes is no command-line
# argument); prints the answer's type and its reason or detail.
send () {
  python3 - "$work/b.sock" "$session" "$1" "$2" <<'PY'
import json, socket, struct, sys
sock, session, call, kind = sys.argv[1:]
junk = "!\u202e\x1b" * (1 << 18)  # each of the two controls six bytes of the frame
tool, arguments = {
    "server_junk": ("notes." + "!" * (3 << 20), {}),
    "server_junk_controls": ("notes." + junk, {}),
    "unknown_server": ("nosuch." + "a" * (3 << 20), {}),
    "unknown_server_args": ("nosuch.echo", {"text": "a" * (3 << 20)}),
    "large_arguments": ("notes.echo", {"text": "a" * (3 << 19)}),
    "too_large_arguments": ("notes.echo", {"text": "a" * (3 << 20)}),
    "arguments_no_object": ("notes.echo", ["a" * (3 << 20)]),
}[kind]
body = json.dumps({"v": 1, "id": call, "final": True,
                   "msg": {"type": "tool_request", "call": call, "session": session,
                           "tool": tool, "arguments": arguments}},
                  separators=(",", ":")).encode()
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
    s.connect(sock)
    s.sendall(struct.pack(">I", len(body)) + body)
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
        more = s.recv(1 << 16)
        if not more:
            break
        data += more
msg = json.loads(data[4:])["msg"] if len(data) > 4 else {}
print(len(body), msg.get("type"), (msg.get("reason") or msg.get("detail") or "")[:300])
PY
}

# The longest line of the audit log, and the longest tool and arguments it logged.
longest () { awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$work/audit.log"; }
# field KEY: the longest value of string field KEY on any line, in bytes (JSON-escaped).
field () {
  grep -o "\"$1\":\"\\([^\"\\\\]\\|\\\\.\\)*\"" "$work/audit.log" \
    | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }'
}

i=0
for kind in server_junk server_junk_controls unknown_server unknown_server_args \
    large_arguments too_large_arguments arguments_no_object; do
  i=$((i + 1))
  before=$(wc -l < "$work/audit.log")
  answer=$(send "f$i" "$kind")
  lines=$(( $(wc -l < "$work/audit.log") - before ))
  echo "$kind: sent $(echo "$answer" | cut -d' ' -f1) bytes, answered $(echo "$answer" | cut -d' ' -f2-)"
  [ "$lines" -ge 1 ] && pass "$kind: the call has its audit line(s) ($lines)" \
    || fail "$kind: no audit line: $(tail -c 600 "$work/audit.log")"
done

# The bounds: a tool name is kept to 64 bytes (a JSON escape such as \u202e is six bytes of
# the line for one character, so at most 6 * 64), arguments to 200 bytes (likewise), and no
# line carries more than those and the line's fixed fields.
tool_max=$(field tool) args_max=$(field arguments) line_max=$(longest)
[ "$tool_max" -le $((6 * 64 + 9)) ] \
  && pass "no tool name on the audit line is over 64 bytes cut ($tool_max bytes with its key)" \
  || fail "a tool name of $tool_max bytes on the audit line"
[ "$args_max" -gt 0 ] && [ "$args_max" -le $((6 * 200 + 14)) ] \
  && pass "no arguments on the audit line are over 200 bytes cut ($args_max bytes with the key)" \
  || fail "arguments of $args_max bytes on the audit line"
[ "$line_max" -le 4096 ] && pass "the longest audit line is $line_max bytes" \
  || fail "an audit line of $line_max bytes: $(awk 'length($0) > 4096' "$work/audit.log" | cut -c 1-400)"
size=$(wc -c < "$work/audit.log")
echo "the audit log holds $(wc -l < "$work/audit.log") lines, $size bytes"
finish
