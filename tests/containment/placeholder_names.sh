#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The file placeholders of one folder are names of one empty file of brokerd's (hard links),
# and each protected path inside a granted folder reaches the sandbox as a read-only
# submount of that folder's bind.  A hostile model in the folder tries to write that file
# through every name and route it has (a redirection, truncate, chmod, a descriptor reopened
# through /proc), to make a name of its own for it (ln, also through /proc) where the owner
# would find it after the call, and to put its own file at a placeholder's name.  During the
# call every name must stay empty, brokerd's and the folder's only; after it none is left.
. "$(dirname "$0")/lib.sh"
writable_folder "$work/f"
start_brokerd b "" "" "  - tools: [shell]
    paths: [$work/f]"

# Every attempt echoes NAME=STATUS; 0 is a success the sandbox must not have.
attempts="for n in .bashrc .profile HEAD .ssh; do \
echo x >> \$n; echo append-\$n=\$?; \
truncate -s 1 \$n; echo truncate-\$n=\$?; \
chmod 666 \$n; echo chmod-\$n=\$?; \
(exec 3< \$n; echo y > /proc/self/fd/3); echo proc-\$n=\$?; \
ln \$n planted-\$n; echo ln-\$n=\$?; \
(exec 3< \$n; ln /proc/self/fd/3 proc-planted-\$n); echo lnproc-\$n=\$?; \
rm -f \$n; echo rm-\$n=\$?; \
mv -f \$n moved-\$n; echo mv-\$n=\$?; \
done; ls -a; echo done"

# A long call holds the placeholders while the owner looks and the attempts run in a
# second call of the same folder, until the test lets it go (a file it removes).
"$boxmaker" call shell "{\"command\":\"while [ ! -e release ]; do sleep 0.1; done; rm -f release; echo long-done\",\"cwd\":\"$work/f\"}" \
  --socket "$work/b.sock" --session "$session-long" --call long > "$work/long.out" 2> "$work/long.err" &
long=$!
i=0
while [ ! -e "$work/f/.bashrc" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
call b shell "{\"command\":\"$attempts\",\"cwd\":\"$work/f\"}"
ok=1
for p in .bashrc .profile HEAD .ssh; do
  for what in append truncate chmod proc ln lnproc rm mv; do
    contains "$out" "$what-$p=0" && { ok=0; fail "the sandbox's $what on $p succeeded"; }
  done
done
[ $rc = 0 ] && contains "$out" done && [ $ok = 1 ] \
  && pass "no write, chmod, new name, removal or move of a placeholder succeeds in the sandbox" \
  || fail "attempts: rc=$rc out=$out err=$err"
# Refused by the mount, not only by the file's owner and mode: a placeholder is read-only
# in the sandbox whoever owns it (gVisor's kernel checks the owner first: EPERM there).
ro=$(printf '%s\n' "$out" | grep -c "chmod: .*: Read-only file system")
[ "$module" = gvisor ] || [ "$ro" = 4 ] \
  && pass "each placeholder is a read-only mount in the sandbox (chmod: read-only file system)" \
  || fail "placeholders refused by their owner only, $ro of 4 read-only: $out"
# What the owner sees meanwhile: each file placeholder empty, root's, 0444, and its inode
# named only by the folder's placeholders (no name the sandbox made, here or elsewhere).
bad=
names=$(find "$work/f" -maxdepth 1 -samefile "$work/f/.bashrc" | wc -l)
links=$(stat -c %h "$work/f/.bashrc")
for p in .bashrc .profile HEAD .ssh; do
  seen=$(stat -c '%U %a %s %i' "$work/f/$p")
  [ "$seen" = "root 444 0 $(stat -c %i "$work/f/.bashrc")" ] || bad="$bad $p:$seen"
done
[ -z "$bad" ] && [ "$names" = "$links" ] && [ -z "$(ls -A "$work/f" | grep planted)" ] \
  && [ -z "$(ls -A "$work/f" | grep moved)" ] \
  && pass "during the calls every placeholder is empty, root's and 0444, named only where brokerd put it ($names names)" \
  || fail "during the calls:$bad; $names names in the folder, $links links; $(ls -la "$work/f")"
kill -0 $long 2>/dev/null || fail "the long call ended before the checks: $(cat "$work/long.err")"
touch "$work/f/release"
wait $long
contains "$(cat "$work/long.out")" long-done || fail "long call: $(cat "$work/long.err")"
[ -z "$(ls -A "$work/f")" ] && pass "after the calls the folder is empty again" \
  || fail "left after the calls: $(ls -la "$work/f")"

# Once more with nothing else running: the attempts alone, then nothing is left.
call b shell "{\"command\":\"$attempts\",\"cwd\":\"$work/f\"}"
ok=1
for what in append truncate chmod proc ln lnproc rm mv; do
  contains "$out" "$what-.bashrc=0" && ok=0
done
[ $ok = 1 ] && contains "$out" done && [ -z "$(ls -A "$work/f")" ] \
  && pass "a call alone in the folder: refused the same, nothing left after it" \
  || fail "a call alone: rc=$rc out=$out err=$err; $(ls -la "$work/f")"
finish
