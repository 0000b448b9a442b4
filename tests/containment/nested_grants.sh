#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Hole 1: nested grants and a symbolic link swapped in.  A grant inside a folder a sandbox
# can write is refused when the config is read, naming both grants; and a grant folder
# that is (or passes through) a symbolic link when a call starts is refused, so a link
# planted by anyone never brings a host folder into a sandbox.
. "$(dirname "$0")/lib.sh"

d=$work/d
mkdir -p "$d/proj/docs" "$d/proj/out" "$work/victim"
writable_folder "$d/proj"; writable_folder "$d/proj/out"
echo "victim secret" > "$work/victim/secret.txt"

# The config of the demonstration: narrower grants first, the shell grant around them.
cat > "$work/nested.yaml" <<YAML
socket: $work/nested.sock
home: $work/home
runtime:
  module: refusing
grants:
  - tools: [read_file]
    paths: [$d/proj/docs]
  - tools: [write_file]
    paths: [$d/proj/out]
  - tools: [shell]
    paths: [$d/proj]
YAML
msg=$("$brokerd" --check-config "$work/nested.yaml" --runtimedir "$runtimedir" 2>&1)
rc=$?
if [ $rc != 0 ] && contains "$msg" "nested.yaml:7:13:" && contains "$msg" "nested.yaml:11:13" \
   && contains "$msg" "$d/proj/docs" && contains "$msg" "$d/proj/out"; then
  pass "--check-config refuses grants inside a writable grant, naming both"
else
  fail "nested grants accepted or not located (rc=$rc): $msg"
fi

# Two shell grants, the inner one first.
cat > "$work/nested2.yaml" <<YAML
socket: $work/nested2.sock
runtime:
  module: refusing
grants:
  - tools: [shell]
    paths: [$d/proj/out]
  - tools: [shell]
    paths: [$d/proj]
YAML
msg=$("$brokerd" --check-config "$work/nested2.yaml" --runtimedir "$runtimedir" 2>&1)
rc=$?
[ $rc != 0 ] && contains "$msg" "nested2.yaml:6:13:" && contains "$msg" "nested2.yaml:8:13" \
  && pass "two shell grants, the inner first: refused" \
  || fail "nested shell grants accepted (rc=$rc): $msg"

# Run time: grants that do not nest; then the host side swaps a grant folder for a link
# (anything on the host that can write its parent could).  Calls must not follow it.
mkdir -p "$d/ro/docs" "$d/rw"
writable_folder "$d/rw/out"
echo "granted" > "$d/ro/docs/ok.txt"
start_brokerd swap "" "" "  - tools: [read_file]
    paths: [$d/ro/docs]
  - tools: [write_file, shell]
    paths: [$d/rw/out]"
call swap read_file "{\"path\":\"$d/ro/docs/ok.txt\"}"
[ $rc = 0 ] && [ "$out" = granted ] && pass "read_file before the swap" \
  || fail "read_file before the swap: rc=$rc out=$out err=$err"

mv "$d/ro/docs" "$d/ro/docs.real"; ln -s "$work/victim" "$d/ro/docs"
call swap read_file "{\"path\":\"$d/ro/docs/secret.txt\"}"
! contains "$out" "victim secret" && [ $rc != 0 ] \
  && pass "read_file through a grant swapped for a link: refused ($err)" \
  || fail "read_file followed the link: rc=$rc out=$out err=$err"

mv "$d/rw/out" "$d/rw/out.real"; ln -s "$work/victim" "$d/rw/out"
call swap write_file "{\"path\":\"$d/rw/out/planted.txt\",\"content\":\"x\"}"
[ ! -e "$work/victim/planted.txt" ] && [ $rc != 0 ] \
  && pass "write_file through a grant swapped for a link: refused" \
  || fail "write_file followed the link: rc=$rc out=$out err=$err"
call swap shell "{\"command\":\"ls; cat secret.txt; touch planted2\",\"cwd\":\"$d/rw/out\"}"
! contains "$out" "victim secret" && [ ! -e "$work/victim/planted2" ] \
  && pass "shell in a grant swapped for a link: refused" \
  || fail "shell followed the link: rc=$rc out=$out err=$err"

if [ "$module" = podman ]; then
  grep -q "refusing to mount \"$d/ro/docs\": a symbolic link is on its way" "$work/swap.log" \
    && pass "brokerd's log says why" || fail "no log line for the refused mount"
fi

# A component above the grant swapped: the link is anywhere on the way.
rm "$d/rw/out"; mv "$d/rw/out.real" "$d/rw/out"
mv "$d/rw" "$d/rw.real"; ln -s "$work/victim" "$d/rw"
mkdir -p "$work/victim/out"; echo "deeper secret" > "$work/victim/out/s.txt"
call swap shell "{\"command\":\"cat s.txt\",\"cwd\":\"$d/rw/out\"}"
! contains "$out" "deeper secret" && pass "a link above the grant folder: refused" \
  || fail "a link above the grant folder was followed: rc=$rc out=$out err=$err"

# A grant that is itself a link when brokerd starts.
ln -s "$work/victim" "$d/link"
start_brokerd linked "" "" "  - tools: [read_file]
    paths: [$d/link]"
call linked read_file "{\"path\":\"$d/link/secret.txt\"}"
! contains "$out" "victim secret" && pass "a grant that is a link: refused" \
  || fail "a grant that is a link was followed: rc=$rc out=$out"
finish
