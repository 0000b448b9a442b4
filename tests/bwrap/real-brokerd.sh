#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bwrap.so end to end through brokerd and `boxmaker call`, with real bubblewrap and a
# read-only root that build-image.sh --rootfs builds for this test: each tool; a read
# outside the grant denied; read_file's grant read-only; exactly the runtime's environment;
# no network; the seccomp refusals (keyrings, ptrace, namespaces) and the uid, seen by a
# static probe run from a grant; a setuid file left in a grant belongs to nobody; a grant
# swapped for a symbolic link is not followed; every limit (memory, time, output, pids,
# file size) with its fixed sentence or error; four calls at once; http_fetch through the
# egress proxy to a granted HTTPS server in a network namespace of the test's own, and a
# shell with hosts through toolkit's forwarder; protected paths read-only over a grant, and
# placeholders where they are missing; host mounts below a grant or a protected path not in
# the sandbox; a grant's image refused; after kill -9 of brokerd nothing of it runs and the
# next brokerd sweeps its cgroups, but never a live brokerd's; no cgroups, no start.
#
#   real-brokerd.sh BROKERD BOXMAKER RUNTIMEDIR TOOLKIT BUILD_IMAGE PROBE
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 toolkit=$4 build_image=$5 probe=$6

skip () {
  echo "SKIP bwrap.so with real bubblewrap: $*"
  [ "${BX_REQUIRE_BWRAP:-0}" = 1 ] && exit 1
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (the cgroups of the limits, a root-owned rootfs)"
command -v bwrap >/dev/null || skip "bubblewrap is not installed"
. "$(dirname "$0")/cgroup-host.sh"
. "$(dirname "$0")/../common/wait_socket.sh"
. "$(dirname "$0")/../common/web_netns.sh"
. "$(dirname "$0")/../common/still_runs.sh"
cg_host bwrap-real
[ -n "$cg_kind" ] || skip "$cg_why"

work=$(mktemp -d /tmp/bx-bwrap-real.XXXXXX)
chmod 0755 "$work"
pids=
netns=
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -z "$netns" ] || { ip link del "bxh$$" 2>/dev/null; ip netns del "$netns" 2>/dev/null; }
  for m in $mounted; do umount "$m" 2>/dev/null; done
  rm -rf "$work"
  cg_cleanup
}
mounted=
trap cleanup EXIT
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
contains () { case $1 in *"$2"*) return 0 ;; esac; return 1; }

# A test certificate, and a root that trusts it and knows the test server's name.
octet=$(web_netns_octet 45.45)
host_ip=45.45.$octet.1 web_ip=45.45.$octet.2
mkdir -p "$work/web"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=web.bxtest.example \
  -addext subjectAltName=DNS:web.bxtest.example -keyout "$work/web/key.pem" \
  -out "$work/web/cert.pem" 2>"$work/openssl.log" || skip "openssl: $(cat "$work/openssl.log")"
"$build_image" --rootfs "$work/rootfs" --toolkit "$toolkit" \
  --extra-ca "$work/web/cert.pem" --add-host "web.bxtest.example:$web_ip" > "$work/build.log" 2>&1 \
  || { cat "$work/build.log"; fail "build-image.sh --rootfs"; exit 1; }
digest=$(sed -n 's/^ *rootfs_digest: \(sha256:[0-9a-f]*\)$/\1/p' "$work/build.log")

mkdir -p "$work/grant" "$work/ro" "$work/outside" "$work/home" "$work/net"
chmod 0777 "$work/grant" "$work/net"
echo "hello through brokerd" > "$work/grant/hello.txt"
echo "read only" > "$work/ro/file.txt"
echo "the secret" > "$work/outside/secret.txt"
cp "$probe" "$work/grant/probe"
chmod 0755 "$work/grant/probe"
session=bwrapreal-$$

start_brokerd () { # name, extra options (YAML lines), http_fetch host, network shell's extra
  cat > "$work/$1.yaml" <<YAML
socket: $work/$1.sock
home: $work/home
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
    slots: 4
    $cg_option
$2
grants:
  - tools: [read_file, write_file, shell]
    paths: [$work/grant]
    class: private
  - tools: [read_file]
    paths: [$work/ro]
    class: private
  - tools: [http_fetch]
    hosts: [${3:-example.com}, "*.invalid"]
    class: public
  - tools: [shell]
    paths: [$work/net]
    hosts: [${3:-example.com}]
${4:-}
YAML
  BX_HOST_SECRET=leaked "$brokerd" --config "$work/$1.yaml" --runtimedir "$runtimedir" \
    2> "$work/$1.log" &
  pid_of_brokerd=$!
  pids="$pids $pid_of_brokerd"
  wait_socket "$work/$1.sock" $!
  [ -S "$work/$1.sock" ] || { echo "brokerd $1 did not start:"; cat "$work/$1.log"; exit 1; }
}
# The digest build-image.sh printed pins the root; another one stops brokerd, naming it.
start_brokerd plain "    rootfs_digest: $digest"
plain_pid=$pid_of_brokerd
[ -n "$digest" ] && pass "brokerd starts with the root pinned by the digest build-image.sh printed" \
  || fail "build-image.sh printed no digest: $(cat "$work/build.log")"
# Another digest: the printed one with its first hex digit changed.
hex=${digest#sha256:}
case $hex in 0*) wrong="sha256:1${hex#?}" ;; *) wrong="sha256:0${hex#?}" ;; esac
sed "s|rootfs_digest: $digest|rootfs_digest: $wrong|; s|$work/plain.sock|$work/pin.sock|" \
  "$work/plain.yaml" > "$work/pin.yaml"
# A brokerd that wrongly accepts the digest would serve for ever: bounded.
timeout 60 "$brokerd" --config "$work/pin.yaml" --runtimedir "$runtimedir" > "$work/pin.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "option rootfs_digest: $work/rootfs holds $digest, not $wrong" "$work/pin.log" \
  && pass "another digest: brokerd refuses to start, naming the option" \
  || fail "wrong digest: rc=$rc $(cat "$work/pin.log")"
start_brokerd tight "    memory: 32m
    pids: 16
    shell_ms: 8000
    output_cap: 1000
    file_size: 1m"

# The tight brokerd's limits, as the host's cgroup files hold them ($cg_kind), in each slot.
tight_pid=$pid_of_brokerd
limits_ok=1 slots_seen=0
for slot in "$cg_slots/$tight_pid"-*/*/; do
  [ -d "$slot" ] || continue
  slots_seen=$((slots_seen + 1))
  seen="$(cg_limit "$slot" memory) $(cg_limit "$slot" swap) $(cg_limit "$slot" pids) $(cg_limit "$slot" cpu)"
  # Memory 32m (v1: memory and swap together; v2: no swap), pids 16 and the keeper, one CPU.
  case $cg_kind/$seen in
    "v2/33554432 0 17 100000 100000" | "v2/33554432 none 17 100000 100000") ;;
    "v1/33554432 33554432 17 100000 100000" | "v1/33554432 none 17 100000 100000") ;;
    *) limits_ok=0; echo "slot $slot: $seen" ;;
  esac
done
[ $limits_ok = 1 ] && [ $slots_seen = 4 ] \
  && pass "cgroup $cg_kind: each of the 4 slots holds memory 32m, swap none, pids 16+1, one CPU" \
  || fail "cgroup $cg_kind limits: $slots_seen slots under $cg_slots/$tight_pid-*"

n=0
# call SOCKET TOOL JSON [FLAG]: sets $out, $err, $rc
call () {
  n=$((n + 1))
  "$boxmaker" call "$2" "$3" ${4:+"$4"} --socket "$work/$1.sock" --session "$session" --call "c$n" \
    > "$work/out" 2> "$work/err"
  rc=$?
  out=$(cat "$work/out") err=$(cat "$work/err")
  [ -z "$(ls -A "$work/egress" 2>/dev/null)" ] || fail "egress folders left after call $n"
}
# The tasks in brokerd PID's slots that still run (still_runs), its keepers aside.
slot_tasks () {
  total=0
  for slot in "$cg_slots/$1"-*/*/; do
    [ -d "$slot" ] || continue
    for t in $(cat "$slot/cgroup.procs"); do
      [ "$(cat "/proc/$t/comm" 2> /dev/null)" != bwrap-keeper ] || continue
      still_runs "$t" && total=$((total + 1))
    done
  done
  echo $total
}

call plain read_file "{\"path\":\"$work/grant/hello.txt\"}"
[ $rc = 0 ] && [ "$out" = "hello through brokerd" ] && pass "read_file in the grant" \
  || fail "read_file in the grant: rc=$rc out=$out err=$err"

# toolkit's own refusal (exit 1) reaches a client that asks as a refusal, not as content.
call plain read_file "{\"path\":\"$work/grant/missing.txt\"}" --refusals
[ $rc = 1 ] && [ -z "$out" ] \
  && [ "$err" = "boxmaker: refused: read_file: $work/grant/missing.txt: no such file or directory" ] \
  && pass "read_file of a missing file: the tool's refusal, marked so" \
  || fail "read_file of a missing file with --refusals: rc=$rc out=$out err=$err"

call plain read_file "{\"path\":\"$work/outside/secret.txt\"}"
[ $rc = 1 ] && contains "$err" "denied" && ! contains "$out" "secret" \
  && pass "read_file outside the grant is denied" || fail "read_file outside: rc=$rc out=$out err=$err"

call plain write_file "{\"path\":\"$work/grant/new.txt\",\"content\":\"written\"}"
[ $rc = 0 ] && [ "$(cat "$work/grant/new.txt" 2>/dev/null)" = written ] \
  && [ "$(stat -c %u "$work/grant/new.txt")" = 65534 ] \
  && pass "write_file in the grant (the file belongs to nobody)" || fail "write_file: rc=$rc out=$out err=$err"

call plain write_file "{\"path\":\"$work/ro/new.txt\",\"content\":\"written\"}"
[ ! -e "$work/ro/new.txt" ] && pass "no write_file where only read_file is granted" \
  || fail "write_file in a read-only grant: rc=$rc out=$out err=$err"

call plain shell "{\"command\":\"cat hello.txt; env | sort; touch /bin/x /etc/x 2>&1\",\"cwd\":\"$work/grant\"}"
env_lines=$(printf '%s\n' "$out" | grep -E '^[A-Z_]+=' | cut -d= -f1 | tr '\n' ' ')
[ $rc = 0 ] && contains "$out" "hello through brokerd" && contains "$out" "[exit 1]" \
  && [ "$env_lines" = "HOME PATH PWD SHLVL " ] && ! contains "$out" leaked \
  && contains "$out" "Read-only file system" \
  && pass "shell: exactly the runtime's environment, a read-only root" \
  || fail "shell: rc=$rc env=[$env_lines] out=$out err=$err"

call plain shell "{\"command\":\"./probe\",\"cwd\":\"$work/grant\"}"
want="keyctl=EPERM add_key=EPERM request_key=EPERM ptrace=EPERM unshare_user=EPERM unshare_mount=EPERM unshare_net=EPERM clone_newpid=EPERM connect=ENETUNREACH uid=65534 euid=65534"
got=$(printf '%s\n' "$out" | grep '=' | grep -v '^\[' | tr '\n' ' ')
[ "$got" = "$want " ] && pass "keyrings, ptrace, namespaces refused; no network; uid 65534" \
  || fail "probe: got [$got] want [$want ] err=$err"

call plain shell "{\"command\":\"cp /bin/busybox suid; chmod 4755 suid; ls -ln suid\",\"cwd\":\"$work/grant\"}"
[ -e "$work/grant/suid" ] && [ "$(stat -c %u "$work/grant/suid")" != 0 ] \
  && pass "a setuid file left in a grant belongs to uid $(stat -c %u "$work/grant/suid"), not root" \
  || fail "setuid: rc=$rc out=$out"

port=$((20000 + $$ % 20000))
busybox nc -l -p "$port" > "$work/received" 2>&1 &
listener=$!
pids="$pids $listener"
sleep 0.2
call plain shell "{\"command\":\"echo reached | nc -w 2 127.0.0.1 $port; echo nc=\$?\"}"
[ $rc = 0 ] && contains "$out" "nc=1" && [ ! -s "$work/received" ] \
  && pass "shell cannot reach a listener on the host's loopback" \
  || fail "loopback listener: rc=$rc out=$out received=$(cat "$work/received")"
kill $listener 2>/dev/null

# A grant swapped for a link between two calls: the link is not followed.
mkdir -p "$work/swap"
chmod 0777 "$work/swap"
cat > "$work/swap.yaml" <<YAML
socket: $work/swap.sock
home: $work/home
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
    slots: 2
grants:
  - tools: [read_file, shell]
    paths: [$work/swap]
    class: private
YAML
"$brokerd" --config "$work/swap.yaml" --runtimedir "$runtimedir" 2> "$work/swap.log" &
pids="$pids $!"
wait_socket "$work/swap.sock" $!
mv "$work/swap" "$work/swap.real"
ln -s "$work/outside" "$work/swap"
call swap read_file "{\"path\":\"$work/swap/secret.txt\"}"
! contains "$out" "the secret" && [ $rc != 0 ] \
  && pass "a grant swapped for a link is not followed ($(printf '%s' "$err" | head -c 80))" \
  || fail "symlink swap: rc=$rc out=$out err=$err"

# A grant under a folder the sandbox's uid cannot enter: bubblewrap, as that uid, cannot
# reach it, and says so before the sandbox exists.
mkdir -p "$work/closed/inner"
chmod 0700 "$work/closed"
cat > "$work/closed.yaml" <<YAML
socket: $work/closed.sock
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    slots: 1
    $cg_option
grants:
  - tools: [shell]
    paths: [$work/closed/inner]
    class: private
YAML
"$brokerd" --config "$work/closed.yaml" --runtimedir "$runtimedir" 2> "$work/closed.log" &
pids="$pids $!"
wait_socket "$work/closed.sock" $!
call closed shell "{\"command\":\"ls\",\"cwd\":\"$work/closed/inner\"}"
[ $rc = 1 ] && contains "$err" "the tool runner could not start the container" \
  && grep -q "bwrap could not set up the sandbox: bwrap: Can't find source path" "$work/closed.log" \
  && pass "a grant the sandbox's uid cannot reach: the runner could not start" \
  || fail "closed grant: rc=$rc out=$out err=$err"

# Cancellation: a client that leaves cancels its call.  Four calls hold the four slots; a
# fifth waits for one, and its client is killed: brokerd records it cancelled, though no slot
# came free.  Then the four holders' clients are killed: their sandboxes go.  How soon is
# printed; the bound of a second is the conformance kit's and the benchmark's (a loaded
# machine may take longer to run this script's own loop).
holders=
for k in 1 2 3 4; do
  "$boxmaker" call shell '{"command":"sleep 60"}' --socket "$work/plain.sock" \
    --session "$session" --call "hold$k" > /dev/null 2>&1 &
  holders="$holders $!"
done
t0=$(date +%s)
until [ "$(slot_tasks "$plain_pid")" -ge 4 ] || [ $(( $(date +%s) - t0 )) -ge 60 ]; do sleep 0.05; done
"$boxmaker" call read_file "{\"path\":\"$work/grant/hello.txt\"}" --socket "$work/plain.sock" \
  --session "$session" --call queued > /dev/null 2>&1 &
queued=$!
sleep 1
t0=$(date +%s%N)
kill -KILL $queued
ended=
while [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 30000 ]; do
  if grep -q '"call":"queued".*"outcome":"cancelled"' "$work/plain.log"; then
    ended=$(( ($(date +%s%N) - t0) / 1000000 ))
    break
  fi
  sleep 0.01
done
wait $queued 2>/dev/null
[ -n "$ended" ] \
  && pass "a call cancelled while it waits for a slot: its audit line says cancelled ${ended} ms after" \
  || fail "cancelled while waiting for a slot: $(grep '"call":"queued"' "$work/plain.log")"
t0=$(date +%s%N)
kill -KILL $holders
gone=
while [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 30000 ]; do
  if [ "$(slot_tasks "$plain_pid")" = 0 ]; then
    gone=$(( ($(date +%s%N) - t0) / 1000000 ))
    break
  fi
  sleep 0.01
done
wait $holders 2>/dev/null
# Each call's final audit line follows its sandbox's end: wait for all four.
i=0
while [ "$(grep -c '"call":"hold[1-4]".*"outcome":"cancelled"' "$work/plain.log")" != 4 ] \
      && [ $i -lt 3000 ]; do
  sleep 0.01
  i=$((i + 1))
done
[ -n "$gone" ] \
  && [ "$(grep -c '"call":"hold[1-4]".*"outcome":"cancelled"' "$work/plain.log")" = 4 ] \
  && pass "four running calls cancelled: their sandboxes gone ${gone} ms after their clients" \
  || fail "cancelled while running: gone after ${gone:-more than 30000} ms; $(grep '"call":"hold' "$work/plain.log")"

# A grant inside the module's root is refused at start: the root is a protected path.
cat > "$work/inroot.yaml" <<YAML
socket: $work/inroot.sock
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
    slots: 1
    $cg_option
grants:
  - tools: [read_file]
    paths: [$work/rootfs/etc]
YAML
timeout 60 "$brokerd" --config "$work/inroot.yaml" --runtimedir "$runtimedir" > "$work/inroot.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "$work/rootfs" "$work/inroot.log" && [ ! -S "$work/inroot.sock" ] \
  && pass "a grant inside the rootfs: brokerd refuses to start, naming it" \
  || fail "grant inside the rootfs: rc=$rc $(cat "$work/inroot.log")"

# A string that doubles reaches the limit in a few steps, even on an emulated machine.
call tight shell '{"command":"awk \"BEGIN { s = 1; while (1) s = s s }\""}'
[ $rc = 1 ] && contains "$err" "the tool was stopped: it ran out of memory or was killed" \
  && pass "over the memory limit: stopped with the fixed sentence" || fail "memory: rc=$rc out=$out err=$err"

start=$(date +%s)
call tight shell '{"command":"sleep 60 & sleep 60"}'
took=$(( $(date +%s) - start ))
[ $rc = 1 ] && contains "$err" "the tool ran past its time limit" && [ $took -lt 20 ] \
  && [ "$(slot_tasks "$plain_pid")" = 0 ] \
  && pass "past the time limit: killed in ${took} s with the fixed sentence, nothing left" \
  || fail "time limit: rc=$rc took=$took out=$out err=$err"

call tight shell '{"command":"yes abcdefghi | head -c 10000000"}'
[ $rc = 0 ] && [ "$(wc -c < "$work/out")" = 1000 ] && contains "$err" "truncated=true" \
  && pass "output over the cap is truncated ($(wc -c < "$work/out") bytes shown)" \
  || fail "cap: rc=$rc len=${#out} err=$err"

call tight shell '{"command":"for i in $(seq 40); do sleep 1 & done; echo spawned"}'
contains "$out" "fork" && pass "over the pids limit: $(printf '%s' "$out" | head -n 1)" \
  || fail "pids: rc=$rc out=$out err=$err"

call tight shell "{\"command\":\"dd if=/dev/zero of=big bs=1M count=3\",\"cwd\":\"$work/grant\"}"
contains "$out" "File too large" && [ "$(stat -c %s "$work/grant/big")" -le 1048576 ] \
  && pass "over the file size limit: File too large" || fail "file size: rc=$rc out=$out err=$err"

# Four calls at once, each its own sandbox.
for k in 1 2 3 4; do
  "$boxmaker" call shell "{\"command\":\"echo call $k; cat hello.txt\",\"cwd\":\"$work/grant\"}" \
    --socket "$work/plain.sock" --session "$session" --call "par$k" > "$work/par$k" 2>&1 &
  eval "par_$k=\$!"
done
all=1
for k in 1 2 3 4; do
  eval "wait \$par_$k" || all=0
  grep -q "^call $k\$" "$work/par$k" && grep -q "hello through brokerd" "$work/par$k" || all=0
done
[ $all = 1 ] && pass "four calls at once" || fail "four calls at once: $(cat "$work"/par*)"

# Keepers killed by hand are started again by the next call of their slot.
keepers=$(pgrep -P "$plain_pid" -x bwrap-keeper | tr '\n' ' ')
[ -n "$keepers" ] && kill -9 $keepers
sleep 0.2
call plain read_file "{\"path\":\"$work/grant/hello.txt\"}"
[ -n "$keepers" ] && [ $rc = 0 ] && [ "$out" = "hello through brokerd" ] \
  && [ -n "$(pgrep -P "$plain_pid" -x bwrap-keeper)" ] \
  && pass "keepers killed by hand ($keepers): the next call starts its slot's again" \
  || fail "keepers killed: keepers=[$keepers] rc=$rc out=$out err=$err"

call plain http_fetch '{"url":"https://other.example.org/"}'
[ $rc = 1 ] && contains "$err" "denied" && pass "http_fetch outside the grant is denied" \
  || fail "http_fetch outside the grant: rc=$rc out=$out err=$err"

call plain http_fetch '{"url":"https://no-such-host.invalid/"}'
contains "$out" "http_fetch: https://no-such-host.invalid/: could not resolve no-such-host.invalid" \
  && pass "http_fetch to an allowed name that does not resolve: $out" \
  || fail "http_fetch unresolvable: rc=$rc out=$out err=$err"

# A granted HTTPS server at an address only this host routes, in a namespace of the test's.
if ! command -v ip >/dev/null; then
  fail "no ip command (iproute2) for the HTTPS server's namespace"
elif ! ip netns add "bxbw$$" 2>"$work/netns.log"; then
  fail "cannot make a network namespace: $(cat "$work/netns.log")"
else
  netns=bxbw$$
  web_netns_wire "$netns" "bxh$$" "bxn$$" "$host_ip" "$web_ip" || fail "cannot wire the namespace"
  mkdir -p "$work/www"
  echo "hello from the namespace" > "$work/www/index.txt"
  web_netns_serve "$netns" "$work/www" "$web_ip:443" "$work/web/cert.pem" "$work/web/key.pem" \
    "$work/server.log"
  pids="$pids $!"
  i=0
  # The server as the host reaches it: the HTTP status, or 000.
  server_answers () {
    curl -s -o /dev/null -w '%{http_code}' --max-time 2 --cacert "$work/web/cert.pem" \
      --resolve "web.bxtest.example:443:$web_ip" https://web.bxtest.example/index.txt
  }
  until [ "$(server_answers)" = 200 ]; do
    i=$((i + 1))
    [ $i -lt 600 ] || { fail "the test's HTTPS server did not answer: $(cat "$work/server.log")"; break; }
    sleep 0.1
  done
  start_brokerd web "" web.bxtest.example
  call web http_fetch '{"url":"https://web.bxtest.example/index.txt"}'
  [ $rc = 0 ] && contains "$out" "hello from the namespace" && contains "$out" "[http 200]" \
    && pass "http_fetch reaches a granted server through the proxy and slirp4netns" \
    || fail "http_fetch to a granted server: rc=$rc out=$out err=$err (the server answers the host: $(server_answers); its log: $(tail -c 300 "$work/server.log"))"
  line=$(grep "\"call\":\"c$n\"" "$work/web.log" | grep -v '"outcome":"running"' | tail -n 1)
  contains "$line" "\"egress\":[{\"host\":\"web.bxtest.example\",\"port\":443,\"reply\":0,\"address\":\"$web_ip\"}]" \
    && pass "the proxy's record of the connection is on the call's audit line" \
    || fail "no egress record on the audit line: $line"

  # A shell with hosts: curl in the root, through toolkit's forwarder and the proxy.
  call web shell "{\"command\":\"curl -sS https://web.bxtest.example/index.txt; curl -sS -v https://other.example/ 2>&1 | grep '^< HTTP'\",\"cwd\":\"$work/net\"}"
  [ $rc = 0 ] && contains "$out" "hello from the namespace" \
    && contains "$out" "< HTTP/1.1 403 boxmaker egress: other.example:443 is not a granted host and port" \
    && pass "a shell with hosts fetches from its granted host; another host gets 403 with the reason" \
    || fail "shell with hosts: rc=$rc out=$out err=$err"
fi

# Protected paths: .git/hooks and .git/config read-only even where the sandbox's uid could
# write them, and .git not movable.
mkdir -p "$work/grant/.git/hooks"
echo "[core]" > "$work/grant/.git/config"
chmod 0777 "$work/grant/.git" "$work/grant/.git/hooks"
chmod 0666 "$work/grant/.git/config"
call plain shell "{\"command\":\"echo x > .git/hooks/post-checkout; echo hook=\$?; echo x >> .git/config; echo config=\$?; mv .git .git-old; echo mv=\$?; echo ok > .git/HEAD; echo head=\$?\",\"cwd\":\"$work/grant\"}"
[ $rc = 0 ] && contains "$out" "hook=1" && contains "$out" "config=1" && contains "$out" "mv=1" \
  && contains "$out" "head=0" && [ ! -e "$work/grant/.git/hooks/post-checkout" ] \
  && [ "$(cat "$work/grant/.git/config")" = "[core]" ] && [ ! -e "$work/grant/.git-old" ] \
  && pass "protected paths: .git/hooks and .git/config read-only, .git not movable" \
  || fail "protected paths: rc=$rc out=$out err=$err"
rm -rf "$work/grant/.git"

# Host mounts below a writable grant, a read-only grant and a protected path (tmpfs the test
# makes): none is in the sandbox, none is written.
mkdir -p "$work/grant/sub" "$work/ro/sub" "$work/grant/.git/hooks/sub"
for m in "$work/grant/sub" "$work/ro/sub" "$work/grant/.git/hooks/sub"; do
  mount -t tmpfs -o size=64k bx-below "$m" || { fail "cannot mount a tmpfs at $m"; break; }
  mounted="$m $mounted"
  echo "below a grant" > "$m/x"
  chmod 0777 "$m"
done
call plain shell "{\"command\":\"cat sub/x .git/hooks/sub/x; ls sub .git/hooks/sub; echo in > sub/y; echo in > .git/hooks/sub/y\",\"cwd\":\"$work/grant\"}"
shell_out=$out
call plain read_file "{\"path\":\"$work/ro/sub/x\"}"
! contains "$shell_out$out" "below a grant" && [ ! -e "$work/grant/sub/y" ] \
  && [ ! -e "$work/grant/.git/hooks/sub/y" ] \
  && pass "host mounts below a grant or a protected path: not in the sandbox, not written" \
  || fail "a host mount below a grant came along: shell: $shell_out; read_file: $out"
for m in $mounted; do umount "$m"; done
mounted=
rm -rf "$work/grant/.git" "$work/grant/sub" "$work/ro/sub"

# Protected paths that do not exist: brokerd's empty read-only placeholders stand in for
# them during the call (one .git for .git/hooks and .git/config), gone afterwards.
call plain shell "{\"command\":\"mkdir -p .git/hooks; echo git=\$?; echo x > .bashrc; echo bashrc=\$?; rmdir .git; echo rmdir=\$?; ls -A .git | wc -l; stat -c '%a %F %s' .git .bashrc\",\"cwd\":\"$work/grant\"}"
[ $rc = 0 ] && contains "$out" "git=1" && contains "$out" "bashrc=1" && contains "$out" "rmdir=1" \
  && contains "$out" "555 directory" && contains "$out" "444 regular empty file 0" \
  && [ ! -e "$work/grant/.git" ] && [ ! -e "$work/grant/.bashrc" ] \
  && pass "missing .git and .bashrc: empty read-only placeholders in the call, gone after it" \
  || fail "missing protected paths: rc=$rc out=$out err=$err; $(ls -la "$work/grant")"
mkdir "$work/grant/.git"
chmod 0777 "$work/grant/.git"
call plain shell "{\"command\":\"mkdir -p .git/hooks; echo hooks=\$?; echo x > .git/hooks/pre-commit; echo hook=\$?; echo x > .git/HEAD; echo head=\$?\",\"cwd\":\"$work/grant\"}"
[ $rc = 0 ] && contains "$out" "hook=1" && contains "$out" "head=0" \
  && [ ! -e "$work/grant/.git/hooks" ] && [ -z "$(ls -A "$work/grant/.git/" | grep -vx HEAD)" ] \
  && pass "a .git without hooks/: no hook made; .git/hooks and .git/config gone after the call" \
  || fail "missing hooks/: rc=$rc out=$out err=$err; $(ls -la "$work/grant/.git")"
rm -rf "$work/grant/.git"
call plain write_file "{\"path\":\"$work/grant/.bashrc\",\"content\":\"echo owned\\n\"}"
! contains "$out" wrote && [ ! -e "$work/grant/.bashrc" ] \
  && pass "write_file to a missing .bashrc: not written ($out), nothing left" \
  || fail "write_file .bashrc: rc=$rc out=$out err=$err"

# A grant naming an image: this runtime runs a grant's rootfs, not an image, so brokerd
# does not start with it (grant-rootfs.sh has the rest of a grant's own root).
sed "s|$work/plain.sock|$work/imaged.sock|" "$work/plain.yaml" > "$work/imaged.yaml"
echo "    image: localhost/any@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" >> "$work/imaged.yaml"
timeout 60 "$brokerd" --config "$work/imaged.yaml" --runtimedir "$runtimedir" > "$work/imaged.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "image localhost/any@sha256:[0-9a-f]*: bwrap.so runs no image" "$work/imaged.log" \
  && pass "a grant's image under bwrap.so: brokerd does not start, and says which module takes it" \
  || fail "image under bwrap.so: rc=$rc $(cat "$work/imaged.log")"

# No slirp4netns where the config says: the runtime's sentence, and nothing left.
start_brokerd noslirp "    slirp4netns: $work/no-slirp4netns"
call noslirp http_fetch '{"url":"https://no-such-host.invalid/"}'
[ $rc = 1 ] && contains "$err" "the tool runner could not start the container" \
  && grep -q "slirp4netns ($work/no-slirp4netns) did not come up" "$work/noslirp.log" \
  && pass "no slirp4netns: could not start the container; the log says why" \
  || fail "no slirp4netns: rc=$rc out=$out err=$err"

# A proxy's sandbox that ends before it listens gets one more start, and the log says why;
# one that ends twice fails the call.  A bubblewrap in front of the real one breaks the
# proxy's argument list on its first start only, or on every start.  toolkit then exits 2,
# or 1 when a sanitizer build's leak check fails at its exit in the sandbox.
mkdir "$work/dying" && chmod 1777 "$work/dying"
for when in once always; do
  cat > "$work/bwrap-$when" <<SCRIPT
#!/bin/sh
if [ $when = always ] || mkdir "$work/dying/$when" 2>/dev/null; then
  for a do shift; [ "\$a" = --socket ] && a=--no-such-option; set -- "\$@" "\$a"; done
fi
exec $(command -v bwrap) "\$@"
SCRIPT
  chmod 0755 "$work/bwrap-$when"
  start_brokerd "dying$when" "    bwrap: $work/bwrap-$when"
  call "dying$when" http_fetch '{"url":"https://no-such-host.invalid/"}'
  if [ $when = once ]; then rc_once=$rc out_once=$out err_once=$err
  else rc_always=$rc err_always=$err; fi
done
[ "$rc_once" = 0 ] && contains "$out_once" "could not resolve no-such-host.invalid" \
  && grep -q "egress: the proxy exited with status [0-9]* before its socket (its stderr: toolkit: unknown tool.*); starting it once more" "$work/dyingonce.log" \
  && pass "a proxy that ends before it listens: started once more, the call runs" \
  || fail "proxy ended once: rc=$rc_once out=$out_once err=$err_once $(grep egress: "$work/dyingonce.log")"
[ "$rc_always" = 1 ] && contains "$err_always" "the tool runner could not start the container" \
  && [ "$(grep -c "egress: the proxy exited with status [0-9]* before its socket" "$work/dyingalways.log")" = 2 ] \
  && pass "a proxy that ends before it listens twice: could not start; the log says why" \
  || fail "proxy ended twice: rc=$rc_always err=$err_always $(grep egress: "$work/dyingalways.log")"

# kill -9 of brokerd in the middle of a call: the sandbox goes with it; the next brokerd
# sweeps the dead one's cgroups and leaves the live ones' alone.
start_brokerd doomed ""
doomed_pid=$pid_of_brokerd
# The marker follows the sleep, so that the sandbox's shell stays to run it (a shell execs a
# last command in its place): the sandbox's processes are those with the marker but the
# client.
"$boxmaker" call shell "{\"command\":\"sleep 300; echo bx-doomed-$$\"}" --socket "$work/doomed.sock" \
  > /dev/null 2>&1 &
doomed_client=$!
t=$(( $(date +%s) + 60 ))
until [ -n "$(pgrep -f "bx-doomed-$$" | grep -vx "$doomed_client")" ] || [ "$(date +%s)" -ge $t ]; do
  sleep 0.1
done
[ -n "$(pgrep -f "bx-doomed-$$" | grep -vx "$doomed_client")" ] || fail "the doomed call did not start"
kill -9 "$doomed_pid"
wait "$doomed_client" 2>/dev/null
t=$(( $(date +%s) + 30 ))
until [ -z "$(pgrep -f "bx-doomed-$$")" ] || [ "$(date +%s)" -ge $t ]; do sleep 0.1; done
left=$(pgrep -f "bx-doomed-$$" || true)
[ -z "$left" ] && pass "kill -9 of brokerd: its sandbox is gone" || fail "left after kill -9: $left"
# Any brokerd that starts on this host sweeps them: one of another test running at the
# same time may have done it first.
if ls -d "$cg_slots/$doomed_pid"-* >/dev/null 2>&1; then
  start_brokerd sweeper ""
  ls -d "$cg_slots/$doomed_pid"-* >/dev/null 2>&1 \
    && fail "the dead brokerd's cgroups were not swept" \
    || pass "the next brokerd swept the dead one's cgroups"
else
  echo "note: another brokerd on this host swept the dead one's cgroups before this test's"
  start_brokerd sweeper ""
fi
ls -d "$cg_slots/$plain_pid"-* >/dev/null 2>&1 \
  && kill -0 "$plain_pid" && pass "a live brokerd's cgroups were left alone" \
  || fail "a live brokerd's cgroups were swept"
call plain read_file "{\"path\":\"$work/grant/hello.txt\"}"
[ $rc = 0 ] || fail "the live brokerd no longer works after the sweep: $err"

# No cgroups to write: brokerd refuses to start, and says why.
sed "/cgroup_root:/d; s|slots: 4|cgroup_root: $work/nocgroup|; s|$work/plain.sock|$work/nocg.sock|" \
  "$work/plain.yaml" > "$work/nocg.yaml"
"$brokerd" --config "$work/nocg.yaml" --runtimedir "$runtimedir" > "$work/nocg.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "runs nothing without its memory, pids and CPU limits" "$work/nocg.log" \
  && pass "no cgroups: brokerd refuses to start ($(head -c 120 "$work/nocg.log"))" \
  || fail "no cgroups: rc=$rc $(cat "$work/nocg.log")"

# brokerd not root: it cannot make the cgroups, and refuses to start rather than run
# without limits.
cp "$work/nocg.yaml" "$work/notroot.yaml"
sed -i "s|cgroup_root: $work/nocgroup|slots: 1|; s|$work/nocg.sock|$work/notroot.sock|" "$work/notroot.yaml"
chmod 0644 "$work/notroot.yaml"
setpriv --reuid 65534 --regid 65534 --clear-groups "$brokerd" --check-config "$work/notroot.yaml" \
  --runtimedir "$runtimedir" > "$work/notroot.log" 2>&1
rc=$?
# On v1 it cannot make its folder; on v2 it cannot leave its cgroup for a leaf of its own,
# or that cgroup (the test's) does not offer the controllers.
[ $rc != 0 ] && grep -Eq "cannot make cgroups under /sys/fs/cgroup/memory: Permission denied|cannot move brokerd into a leaf of its own cgroup, .*: Permission denied|controllers memory, pids and cpu are not all available" "$work/notroot.log" \
  && grep -q "runs nothing without its memory, pids and CPU limits" "$work/notroot.log" \
  && pass "brokerd not root: refuses to start, saying why" \
  || fail "not root: rc=$rc $(cat "$work/notroot.log")"

if [ $failures -ne 0 ]; then
  echo "brokerd logs:"; cat "$work"/*.log
  exit 1
fi
echo "all $n calls as expected"
