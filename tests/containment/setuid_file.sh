#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A setuid or setgid file outlives its call (issue 23, 1).  With write_file and shell on one
# folder, a sandbox wrote a program and made it setuid and setgid: on the host it stayed
# -rwsr-sr-x, owned by the sandbox's uid, and any local user running it became that uid.
# No way of leaving such a file may work: the chmod family, the mode of a creating call
# (open, creat, mknod, mkdir, openat2), copying tools (cp -p, cp -a, tar x), and file
# capabilities (security.capability) neither.
. "$(dirname "$0")/lib.sh"
not_for gvisor "its refusals hold in gVisor's kernel, but runsc 20221219's OCI seccomp filter answers EPERM whatever errnoRet says, and this case checks each errno of the table (tests/gvisor/conformance.sh checks the setuid refusals)"

writable_folder "$work/w"
build_seccomp_probe "$work/w/seccomp_probe"
# A setuid file to copy (not executable) and an archive holding setuid and setgid members.
printf 'x\n' > "$work/w/src4755"
chown "$sandbox_uid:$sandbox_uid" "$work/w/src4755"
chmod 4644 "$work/w/src4755"
mkdir "$work/t"
printf '#!/bin/sh\nid -u\n' > "$work/t/tarred"
tar -C "$work/t" --mode=6755 -cf "$work/w/setid.tar" tarred

start_brokerd b "" "" "  - tools: [shell, write_file, read_file]
    paths: [$work/w]"
call b write_file "{\"path\":\"$work/w/script\",\"content\":\"#!/bin/sh\\nid -u\\n\"}"
[ $rc = 0 ] || fail "write_file did not run: rc=$rc out=$out err=$err"
call b shell "{\"command\":\"chmod 6755 script; chmod u+s,g+s script; cp /bin/busybox bb && chmod 4755 bb; cp -p src4755 copied; cp -a src4755 archived; tar xf setid.tar; ./seccomp_probe setid; ls -ln\",\"cwd\":\"$work/w\"}"
echo "inside:"
printf '%s\n' "$out"
[ -n "$out" ] || fail "the shell call did not run: rc=$rc err=$err"

bad=$(find "$work/w" -perm /6000 ! -name src4755 2>/dev/null)
[ -z "$bad" ] && pass "no setuid or setgid file left on the host" \
  || fail "setuid or setgid files on the host: $(ls -ld $bad)"
# The files made with ordinary modes first are there (or the case would prove nothing); the
# copies keeping a setuid source's mode are refused whole (busybox makes the copy with it).
for f in script bb; do
  [ -e "$work/w/$f" ] || fail "$f was not made at all (the case would prove nothing)"
done
for line in "cp: can't create 'copied'" "cp: can't create 'archived'" "tar: can't open 'tarred'"; do
  contains "$out" "$line: Operation not permitted" && pass "refused: $line" \
    || fail "not refused: $line"
done
for f in "$work"/w/*; do
  if "$work/w/seccomp_probe" has-caps "$f"; then fail "$f has file capabilities"; fi
done
v=$(printf '%s\n' "$out" | sed -n 's/^setxattr(security.capability)=//p')
case $v in
  EOPNOTSUPP) pass "security.capability refused as unsupported" ;;
  *) fail "setxattr(security.capability): '$v', EOPNOTSUPP expected" ;;
esac
for attempt in "open(O_CREAT, 4755)" "creat(4755)" "mknod(S_IFREG|4755)" "chmod(4755)" \
                "fchmod(6755)" "fchmodat(2755)" "fchmodat2(4755)" "openat2(4755)"; do
  v=$(printf '%s\n' "$out" | sed -n "s/^$attempt=//p")
  case $v in
    EPERM|ENOSYS) pass "$attempt refused ($v)" ;;
    *) fail "$attempt: '$v', EPERM or ENOSYS expected" ;;
  esac
done
# The sandbox still writes and runs its own files, with ordinary modes.
call b shell "{\"command\":\"chmod 0755 script && ./script && cp /bin/busybox plain && chmod 0750 plain && ls -ln plain\",\"cwd\":\"$work/w\"}"
case $out in
  *-rwxr-x---*) pass "ordinary modes still set" ;;
  *) fail "ordinary modes: rc=$rc out=$out err=$err" ;;
esac
finish
