#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# More ways out, tried as a hostile model would: `..` through a link the sandbox made,
# a link to a host file read through read_file, /proc and /sys, a FIFO where a file was,
# hard links.  After each: the host's files outside the grant untouched and unread.
. "$(dirname "$0")/lib.sh"

writable_folder "$work/w"
mkdir -p "$work/outside"
echo "outside secret" > "$work/outside/secret.txt"
start_brokerd b "" "    read_file_ms: 3000" "  - tools: [shell, read_file, write_file]
    paths: [$work/w]"

# Links the sandbox plants for later calls.
call b shell "{\"command\":\"ln -s / root; ln -s $work/outside out; ln -s $work/outside/secret.txt s; mkfifo fifo; echo planted\",\"cwd\":\"$work/w\"}"
contains "$out" planted || fail "planting: rc=$rc out=$out err=$err"

call b shell "{\"command\":\"pwd; ls; cat ../outside/secret.txt secret.txt; cat $work/outside/secret.txt\",\"cwd\":\"$work/w/out\"}"
! contains "$out" "outside secret" && pass "cwd through a planted link sees no host folder" \
  || fail "cwd through a planted link: $out"
call b shell "{\"command\":\"cat ../../outside/secret.txt; ls $work\",\"cwd\":\"$work/w/root/..\"}"
! contains "$out" "outside secret" && ! contains "$out" "outside" \
  && pass "'..' after a link to / stays in the sandbox" || fail "'..' after a link: $out"
call b read_file "{\"path\":\"$work/w/s\"}"
! contains "$out" "outside secret" && pass "read_file of a planted link to a host file: not the host's ($rc)" \
  || fail "read_file followed a planted link to the host: $out"
call b read_file "{\"path\":\"$work/w/out/secret.txt\"}"
! contains "$out" "outside secret" && pass "read_file through a planted folder link: not the host's" \
  || fail "read_file through a planted folder link: $out"
call b write_file "{\"path\":\"$work/w/out/planted.txt\",\"content\":\"x\"}"
[ ! -e "$work/outside/planted.txt" ] && pass "write_file through a planted link: host untouched" \
  || fail "write_file through a planted link wrote on the host"

start=$(date +%s)
call b read_file "{\"path\":\"$work/w/fifo\"}"
took=$(( $(date +%s) - start ))
[ $took -lt 10 ] && pass "read_file of a FIFO ends in $took s (rc=$rc: $err)" \
  || fail "read_file of a FIFO took $took s"

call b shell "{\"command\":\"ln /etc/passwd p; echo ln=\$?; echo 1 > /proc/sys/vm/drop_caches; echo sys=\$?; echo x > /proc/sysrq-trigger; echo sysrq=\$?; echo 1 > /sys/kernel/mm/ksm/run; echo ksm=\$?; cat /proc/1/mountinfo; echo done\",\"cwd\":\"$work/w\"}"
! contains "$out" "$work/outside" && ! contains "$out" "/var/lib/containers/storage/volumes" \
  && contains "$out" "ln=1" && contains "$out" "sys=1" && contains "$out" "sysrq=1" \
  && contains "$out" "ksm=1" && contains "$out" done \
  && pass "hard links from the image, /proc and /sys writes refused; no host mount shown" \
  || fail "/proc: $out"
[ -z "$(find "$work/w" -samefile "$work/outside/secret.txt" 2>/dev/null)" ] \
  && pass "no hard link to a host file appears in the grant" || fail "a hard link to a host file"
[ "$(cat "$work/outside/secret.txt")" = "outside secret" ] && [ "$(ls "$work/outside" | wc -l)" = 1 ] \
  && pass "the folder outside the grant is untouched" || fail "outside changed: $(ls -la "$work/outside")"
# A mount below a grant folder on the host (here a tmpfs the test makes) stays out: mounts
# are not recursive.
mkdir -p "$work/w/sub"
if mount -t tmpfs -o size=1m bxct "$work/w/sub" 2> "$work/mount.log"; then
  mounted_cleanup () { umount "$work/w/sub" 2>/dev/null; cleanup; }
  trap mounted_cleanup EXIT
  echo "under a host mount" > "$work/w/sub/x"
  call b shell "{\"command\":\"cat sub/x; ls sub; echo in > sub/y\",\"cwd\":\"$work/w\"}"
  ! contains "$out" "under a host mount" && pass "a host mount below the grant is not in the sandbox" \
    || fail "a host mount below the grant came along: $out"
  [ ! -e "$work/w/sub/y" ] && pass "the sandbox cannot write into a host mount below the grant" \
    || fail "the sandbox wrote into a host mount below the grant"
  call b read_file "{\"path\":\"$work/w/sub/x\"}"
  ! contains "$out" "under a host mount" && pass "read_file (a read-only mount) does not see it either" \
    || fail "read_file read a host mount below the grant: $out"
  umount "$work/w/sub"
else
  skip "cannot mount a tmpfs: $(cat "$work/mount.log")"
fi
finish
