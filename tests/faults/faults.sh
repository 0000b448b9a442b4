#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The fault matrix: brokerd with podman.so and the tools image (the podman_real fixture)
# against one fault at a time, each with its expected answer; afterwards, for every case,
# no container of this test, no egress folder, and every call on the audit log, whose chain
# holds (`boxmaker audit verify`).
#
#   faults.sh CASE BROKERD BOXMAKER RUNTIMEDIR IMAGE_REF_FILE
#   faults.sh bwrap-missing|rootfs-missing BROKERD BOXMAKER RUNTIMEDIR TOOLKIT
#
# CASE: podman-missing, image-missing, create-fails, proxy-killed, brokerd-killed,
# audit-full, thousand-clients (podman.so); bwrap-missing, rootfs-missing (bwrap.so).
# Exit 0 passed, 1 failed, 77 skipped (it says why).
set -u
case=$1 brokerd=$2 boxmaker=$3 runtimedir=$4 ref_file=$5
here=$(cd "$(dirname "$0")" && pwd)

case $case in
bwrap-*|rootfs-*)
  [ "$(id -u)" = 0 ] || { echo "SKIP faults $case: bwrap.so needs root (its cgroups)"; exit 77; }
  image= ;;
*)
  image=$(cat "$ref_file" 2>/dev/null || true)
  case $image in
    "") echo "SKIP faults $case: no image reference (the podman_real_setup test did not run)"
        [ "${BX_REQUIRE_PODMAN:-0}" = 1 ] && exit 1; exit 77 ;;
    unusable:*) echo "SKIP faults $case: podman is $image"; exit 77 ;;
  esac ;;
esac

work=$(mktemp -d /tmp/bx-faults.XXXXXX)
chmod 0755 "$work"
session=faults$$
pids= netns= mounted=
cleanup () {
  for p in $pids; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -z "$netns" ] || ip netns del "$netns" 2>/dev/null
  [ -z "$mounted" ] || umount "$mounted" 2>/dev/null
  # Containers of this test's session only, whatever the case left.
  podman ps -a --filter label=boxmaker --format '{{.Names}}' | grep -- "-$session-" |
    xargs -r podman rm -f >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
contains () { case $1 in *"$2"*) return 0 ;; esac; return 1; }

mkdir -p "$work/grant" "$work/home"
echo hello > "$work/grant/hello.txt"
audit=$work/audit.log

# config NAME OPTION_LINES TOP_LINES [FETCH_HOST] [", EXTRA_RUN_OPTION"]: a config for the
# podman runtime.
config () {
  cat > "$work/$1.yaml" <<YAML
socket: $work/b.sock
home: $work/home
audit: ${audit}
$3
runtime:
  module: podman
  options:
    image: $image
    global_options: [--runtime, runc]
    run_options: [--ulimit, nofile=1024:1024, --ulimit, nproc=1024:1024, --pull=never${5:-}]
$2
grants:
  - tools: [read_file, shell]
    paths: [$work/grant]
  - tools: [http_fetch]
    hosts: [${4:-example.com}]
    class: public
YAML
}
broker_pid=
start () { # NAME
  "$brokerd" --config "$work/$1.yaml" --runtimedir "$runtimedir" >> "$work/brokerd.log" 2>&1 &
  broker_pid=$!
  pids="$pids $broker_pid"
  # Listening once a call is answered (a denied probe: nothing runs).
  i=0
  while [ $i -lt 600 ]; do
    "$boxmaker" call read_file '{"path":"/nonexistent"}' --socket "$work/b.sock" \
      --call "probe$i" --session "$session" >/dev/null 2>&1
    [ $? != 3 ] && break
    sleep 0.1
    i=$((i + 1))
  done
}
stop () {
  [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null && wait "$broker_pid" 2>/dev/null
  broker_pid=
}
n=0
call () { # TOOL JSON: sets $out, $err, $rc; the call id is c$n
  n=$((n + 1))
  "$boxmaker" call "$1" "$2" --socket "$work/b.sock" --session "$session" --call "c$n" \
    --timeout-ms "${CALL_TIMEOUT_MS:-60000}" > "$work/out" 2> "$work/err"
  rc=$?
  out=$(cat "$work/out") err=$(cat "$work/err")
}
# audited CALL: the audit log has the call's final line (or, for a call cut off by a
# brokerd that died, its "running" line).
audited () {
  grep -q "\"call\":\"$1\"" "$audit"
}
# Every case ends here: nothing of the session left (within WAIT seconds), every call
# answered on the audit log, the chain intact.
afterwards () { # [WAIT]
  wait_s=${1:-10}
  i=0
  while :; do
    left=$(podman ps -a --filter label=boxmaker --format '{{.Names}}' | grep -- "-$session-" || true)
    [ -z "$left" ] && break
    i=$((i + 1))
    [ $i -gt $((wait_s * 10)) ] && break
    sleep 0.1
  done
  [ -z "$left" ] && pass "no container left" || fail "containers left: $left"
  [ -z "$(ls -A "$work/home/run/egress" "$work/egress" 2>/dev/null | grep -v ':$' | grep .)" ] \
    && pass "no egress folder left" \
    || fail "egress folders left: $(ls "$work/home/run/egress" "$work/egress" 2>/dev/null)"
  k=1
  while [ $k -le $n ]; do
    audited "c$k" || fail "call c$k has no audit line"
    k=$((k + 1))
  done
  [ $n -eq 0 ] || pass "all $n calls are on the audit log"
  if [ -s "$audit" ]; then
    v=$("$boxmaker" audit verify "$audit" 2>&1) && pass "the audit chain holds" \
      || fail "audit verify: $v"
  fi
}

# bwrap_config ROOTFS [OPTION LINES]: a config for the bubblewrap runtime.
bwrap_config () {
  cat > "$work/c.yaml" <<YAML
socket: $work/b.sock
home: $work/home
audit: $audit
runtime:
  module: bwrap
  options:
    rootfs: $1
    egress_dir: $work/egress
$2
grants:
  - tools: [read_file, shell]
    paths: [$work/grant]
YAML
}

case $case in
bwrap-missing)
  # A root with toolkit in it is all bwrap.so checks at start besides bubblewrap itself.
  mkdir -p "$work/root/bin"
  cp "$ref_file" "$work/root/bin/toolkit"
  bwrap_config "$work/root" "    bwrap: $work/no/bwrap"
  start c
  call shell '{"command":"echo hi"}'
  [ $rc = 1 ] && contains "$err" "failed: " && pass "bubblewrap missing: failed: ${err#boxmaker: failed: }" \
    || fail "bubblewrap missing: rc=$rc err=$err"
  grep -q 'not found; every call will fail until it is installed' "$work/brokerd.log" \
    && pass "bubblewrap missing: brokerd warned at start" || fail "no warning at start"
  stop
  afterwards
  ;;
rootfs-missing)
  bwrap_config "$work/no-rootfs" ""
  "$brokerd" --config "$work/c.yaml" --runtimedir "$runtimedir" > "$work/brokerd.log" 2>&1
  rc=$?
  [ $rc = 1 ] && grep -q "option rootfs: $work/no-rootfs is not a folder" "$work/brokerd.log" \
    && [ ! -e "$work/b.sock" ] \
    && pass "rootfs missing: brokerd refuses to start, naming the option" \
    || fail "rootfs missing: rc=$rc $(cat "$work/brokerd.log")"
  afterwards
  ;;
podman-missing)
  config c "    podman: $work/no/podman" ""
  start c
  call shell '{"command":"echo hi"}'
  [ $rc = 1 ] && contains "$err" "failed: the tool runner could not start the container" \
    && pass "podman missing: failed with the fixed sentence" \
    || fail "podman missing: rc=$rc err=$err"
  grep -q 'not found; every call will fail until it is installed' "$work/brokerd.log" \
    && pass "podman missing: brokerd warned at start" || fail "no warning at start"
  stop
  afterwards
  ;;
image-missing)
  image=localhost/bx-faults-no-such-image@sha256:0000000000000000000000000000000000000000000000000000000000000000
  config c "" ""
  start c
  call shell '{"command":"echo hi"}'
  [ $rc = 1 ] && contains "$err" "failed: the tool runner could not start the container" \
    && pass "image missing: failed with the fixed sentence" \
    || fail "image missing: rc=$rc err=$err"
  grep -q 'image not known' "$work/brokerd.log" && pass "image missing: podman's reason logged" \
    || fail "podman's reason is not in the log"
  stop
  afterwards
  ;;
create-fails)
  config c "    memory: lots" ""
  "$brokerd" --config "$work/c.yaml" --runtimedir "$runtimedir" > "$work/brokerd.log" 2>&1
  rc=$?
  [ $rc = 1 ] && grep -q 'memory' "$work/brokerd.log" && [ ! -e "$work/b.sock" ] \
    && pass "a module failing in create: exit 1 naming the option, nothing listening" \
    || fail "create fails: rc=$rc $(cat "$work/brokerd.log")"
  afterwards
  ;;
brokerd-killed)
  config c "    shell_ms: 30000" ""
  start c
  (CALL_TIMEOUT_MS=60000 call shell '{"command":"sleep 4; echo late"}'; echo "$rc" > "$work/rc1") &
  n=$((n + 1))
  # Once the container runs, brokerd dies without a word.
  i=0
  until podman ps --filter label=boxmaker --format '{{.Names}}' | grep -q -- "-$session-c$n-"; do
    i=$((i + 1)); [ $i -lt 600 ] || break; sleep 0.1
  done
  kill -9 "$broker_pid"
  wait "$broker_pid" 2>/dev/null
  wait
  [ "$(cat "$work/rc1")" = 3 ] && pass "brokerd killed mid-call: the client hears unavailable" \
    || fail "killed mid-call: client status $(cat "$work/rc1")"
  start c
  call read_file "{\"path\":\"$work/grant/hello.txt\"}"
  [ $rc = 0 ] && [ "$out" = hello ] && pass "restarted brokerd serves" \
    || fail "after restart: rc=$rc out=$out err=$err"
  stop
  # The cut-off call's container ends with its command (brokerd's time limit died with it).
  afterwards 20
  ;;
audit-full)
  [ "$(id -u)" = 0 ] || { echo "SKIP faults audit-full: needs root to mount a tmpfs"; exit 77; }
  mkdir "$work/auditfs"
  mount -t tmpfs -o size=64k,mode=0700 bxfaults "$work/auditfs" \
    || { echo "SKIP faults audit-full: cannot mount a tmpfs"; exit 77; }
  mounted=$work/auditfs
  audit=$work/auditfs/audit.log
  config c "" ""
  start c
  call read_file "{\"path\":\"$work/grant/hello.txt\"}"
  [ $rc = 0 ] || fail "before the disk filled: rc=$rc err=$err"
  dd if=/dev/zero of="$work/auditfs/fill" bs=1k count=1000 2>/dev/null
  refused=
  for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    call shell "{\"command\":\"touch ran-$n\",\"cwd\":\"$work/grant\"}"
    if contains "$err" "the call did not run"; then refused=c$n; break; fi
  done
  [ -n "$refused" ] && [ $rc = 1 ] && [ ! -e "$work/grant/ran-$n" ] \
    && pass "audit disk full: the call is refused and did not run" \
    || fail "audit disk full: rc=$rc err=$err"
  rm -f "$work/auditfs/fill"
  stop
  # The refused call has no line, by design: everything else has one.
  n_before=$n
  k=1
  while [ $k -le $n ]; do
    [ "c$k" = "$refused" ] || audited "c$k" || fail "call c$k has no audit line"
    k=$((k + 1))
  done
  n=0
  afterwards
  n=$n_before
  ;;
proxy-killed)
  command -v ip >/dev/null || { echo "SKIP faults proxy-killed: no ip command"; exit 77; }
  netns=bxflt$$
  ip netns add "$netns" 2>/dev/null || { netns=; echo "SKIP faults proxy-killed: no netns"; exit 77; }
  octet=$(( $$ % 250 + 1 ))
  host_ip=45.46.$octet.1 web_ip=45.46.$octet.2
  ip link add "bxfh$$" type veth peer name "bxfn$$" &&
    ip link set "bxfn$$" netns "$netns" &&
    ip addr add "$host_ip/30" dev "bxfh$$" && ip link set "bxfh$$" up &&
    ip netns exec "$netns" ip addr add "$web_ip/30" dev "bxfn$$" &&
    ip netns exec "$netns" ip link set "bxfn$$" up || fail "cannot wire the namespace"
  # A server that accepts and then says nothing: the fetch hangs in its TLS handshake.
  ip netns exec "$netns" /usr/bin/python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('$web_ip', 443)); s.listen(8)
held = []
while True:
    c, _ = s.accept(); held.append(c)
" &
  pids="$pids $!"
  config c "    http_fetch_ms: 30000" "" stall.bxfaults.example ", --add-host=stall.bxfaults.example:$web_ip"
  start c
  (call http_fetch '{"url":"https://stall.bxfaults.example/"}'; echo "$rc $out $err" > "$work/r1") &
  n=$((n + 1))
  i=0
  until podman ps --filter label=boxmaker --format '{{.Names}}' | grep -q -- "-$session-c$n-.*-egress"; do
    i=$((i + 1)); [ $i -lt 600 ] || break; sleep 0.1
  done
  sleep 1
  proxy=$(podman ps --filter label=boxmaker --format '{{.Names}}' | grep -- "-$session-c$n-.*-egress")
  [ -n "$proxy" ] && podman kill "$proxy" >/dev/null 2>&1
  i=0; while [ ! -s "$work/r1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
  r=$(cat "$work/r1" 2>/dev/null)
  contains "$r" "curl: " && pass "egress proxy killed mid-fetch: curl's error comes back: $r" \
    || fail "proxy killed: $r"
  line=$(grep "\"call\":\"c$n\"" "$audit" | grep -v '"outcome":"running"' | tail -n 1)
  contains "$line" '"egress":[{"host":"stall.bxfaults.example","port":443,"reply":0' \
    && pass "the connection made before the kill is on the audit line" \
    || fail "no egress record: $line"
  stop
  afterwards
  ;;
thousand-clients)
  config c "" "max_connections: 8"
  start c
  /usr/bin/python3 "$here/many_clients.py" "$work/b.sock" 1000 "$session" \
    "{\"path\":\"$work/grant/hello.txt\"}" > "$work/many" 2>&1
  prc=$?
  cat "$work/many"
  # max_connections 8: 4 of one uid served, 4 waiting their turn, the rest past the queue's
  # bounds told busy at once.
  [ $prc = 0 ] && pass "1,000 clients at once: every one answered, a result or busy" \
    || fail "1,000 clients: $(tail -n 3 "$work/many")"
  results=$(sed -n 's/^results=//p' "$work/many")
  busy=$(sed -n 's/^busy=//p' "$work/many")
  stop
  # Each result's call has its final line; each busy refusal its line without a call.
  finals=$(grep -c "\"session\":\"$session\".*\"outcome\":\"result\"" "$audit")
  busy_lines=$(grep -c '"reason":"brokerd is busy"' "$audit")
  [ "$finals" -ge "$results" ] && [ "$busy_lines" = "$busy" ] \
    && pass "every answer is on the audit log ($finals results, $busy_lines busy)" \
    || fail "audit: $finals result lines for $results results, $busy_lines busy lines for $busy"
  afterwards
  ;;
*)
  echo "faults.sh: unknown case $case" >&2
  exit 2
  ;;
esac

if [ $failures -ne 0 ]; then
  echo "brokerd's log:"; cat "$work/brokerd.log"
  exit 1
fi
echo "faults $case: as expected"
