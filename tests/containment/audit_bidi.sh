#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A model cannot make the audit log read other than what ran: a bidirectional control
# (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C) or a C1 control (U+009B, CSI) it
# writes into a path, an MCP tool's name or arguments reaches the log as a JSON escape
# (\u202E), never as the character, which a terminal would obey, turning "a<U+202E>txt.exe"
# into "aexe.txt".  Needs no sandbox (fake.so answers), so it runs once, beside the podman.so
# cases.
if [ "${BX_CONTAINMENT_MODULE:-podman}" != podman ]; then
  echo "SKIP audit_bidi: does not apply to ${BX_CONTAINMENT_MODULE}.so: no sandbox runs"
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
  - tools: [read_file]
    paths: [$work/notes]
  - mcp_server:
      name: srv
      command: [python3, /srv/mcp/server.py]
    paths: [$work/notes]
YAML
"$brokerd" --config "$work/b.yaml" --runtimedir "$runtimedir" 2> "$work/b.log" &
pids="$pids $!"
wait_socket "$work/b.sock" $!
[ -S "$work/b.sock" ] || { echo "brokerd did not start:"; cat "$work/b.log"; exit 1; }

# send CALL SESSION TOOL ARGUMENTS (JSON, \u escapes allowed): one frame, as a model's client
# would send it; prints the answer's type.
send () {
  python3 - "$work/b.sock" "$@" <<'PY'
import json, socket, struct, sys
sock, call, session, tool, arguments = sys.argv[1:]
body = json.dumps({"v": 1, "id": call, "final": True,
                   "msg": {"type": "tool_request", "call": call,
                           "session": json.loads('"' + session + '"'),
                           "tool": json.loads('"' + tool + '"'),
                           "arguments": json.loads(arguments)}},
                  separators=(",", ":"), ensure_ascii=False).encode()
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
    s.connect(sock)
    s.sendall(struct.pack(">I", len(body)) + body)
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
        more = s.recv(1 << 16)
        if not more:
            break
        data += more
print(json.loads(data[4:])["msg"].get("type") if len(data) > 4 else "no answer")
PY
}

send b1 s read_file "{\"path\": \"$work/notes/a\\u202etxt.exe\"}" > /dev/null
send b2 s read_file "{\"path\": \"$work/notes/\\u200fb\\u061c\\u202a\\u2069\\u2066\"}" > /dev/null
send b3 s "srv.e\\u202echo" '{}' > /dev/null
send b4 s srv.echo '{"text": "ok\u202e\u2067fdp.exe\u009b2J\u0085"}' > /dev/null
send b5 s "nosuch.\\u202e" '{}' > /dev/null
lines=$(wc -l < "$work/audit.log")
[ "$lines" -ge 5 ] && pass "the five calls have their audit lines ($lines)" \
  || fail "only $lines audit lines: $(cat "$work/audit.log")"

# No raw bidirectional control anywhere in the log (their UTF-8 bytes), each an escape.
raw=$(python3 - "$work/audit.log" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
print(len(re.findall("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u0080-\u009f]", text)))
PY
)
[ "$raw" = 0 ] && pass "no bidirectional control is written to the audit log as itself" \
  || fail "$raw bidirectional control(s) in the audit log as themselves: $(cat "$work/audit.log")"
for c in 202E 2066 200F 061C 202A 2069 2067 009B 0085; do
  grep -q "\\\\u$c" "$work/audit.log" && pass "U+$c is on the audit line as \\u$c" \
    || fail "U+$c is not on any audit line as \\u$c: $(cat "$work/audit.log")"
done
# The lines stay JSON that reads back to what the model sent.
python3 - "$work/audit.log" "$work" <<'PY' && pass "each line reads back to the model's path" \
  || fail "the audit lines do not read back: $(cat "$work/audit.log")"
import json, sys
paths = [json.loads(l).get("args", {}).get("path") for l in open(sys.argv[1])]
assert sys.argv[2] + "/notes/a\u202etxt.exe" in paths, paths
PY
finish
