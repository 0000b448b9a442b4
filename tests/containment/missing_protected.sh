#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Protected paths that do not exist when a call starts.  A hostile model in a granted folder
# that is not a repository makes one: a .git with HEAD, objects, refs and a config naming a
# core.fsmonitor command, a hook, and a .bashrc.  The owner's next `git status` there, or
# next shell, would run them on the host.  Same where .git exists but .git/hooks does not,
# and through write_file.  After each call the test, as the folder's owner, runs git and a
# shell there and checks that nothing ran and nothing was left; during a call it checks what
# the owner sees (empty, root-owned placeholders), and that a second call in the same folder
# ending first leaves the first call's protection in place.
. "$(dirname "$0")/lib.sh"
# A write to a read-only placeholder: EROFS; gVisor's kernel checks the placeholder's
# owner (root, outside its user namespace) first and answers EACCES.
refused_ro () { contains "$1" "read-only file system" || { [ "$module" = gvisor ] && contains "$1" "permission denied"; }; }
command -v git >/dev/null || skip "git is not installed"
command -v bash >/dev/null || skip "bash is not installed"

owner=$sandbox_uid
marks=$work/marks
mkdir -p "$marks" "$work/ownerhome"
chmod 0777 "$marks" "$work/ownerhome"
writable_folder "$work/plain"
writable_folder "$work/repo"
writable_folder "$work/wf"
writable_folder "$work/busy"
# A repository without hooks/ (git init made by the owner, hooks removed), writable by the
# sandbox's uid like the rest of the folder.
git init -q "$work/repo" && rm -rf "$work/repo/.git/hooks" && chown -R "$owner:$owner" "$work/repo" \
  || { echo "git init failed"; exit 1; }
start_brokerd b "" "" "  - tools: [shell]
    paths: [$work/plain, $work/repo, $work/busy]
  - tools: [write_file]
    paths: [$work/wf]"

# as_owner CMD...: runs CMD the way the owner works there later, in a clean environment.  As
# root (git told to trust the folder, which the sandbox's uid owns) rather than as that uid:
# containment cases running alongside count the processes of the sandbox's uid.
as_owner () {
  env -i PATH=/usr/bin:/bin HOME="$work/ownerhome" "$@"
}

# owner_checks FOLDER WHAT: the owner's git status and interactive shell in FOLDER run
# nothing the sandbox wrote.
owner_checks () {
  rm -f "$marks"/*
  (cd "$1" && as_owner git -c safe.directory='*' status > /dev/null 2>&1)
  (cd "$1" && as_owner git -c safe.directory='*' -c user.name=owner -c user.email=owner@example.org commit -q \
     --allow-empty -m owner > /dev/null 2>&1)
  (cd "$1" && as_owner env HOME="$1" bash -i -c true < /dev/null > /dev/null 2>&1)
  (cd "$1" && as_owner env HOME="$1" bash -l -c true < /dev/null > /dev/null 2>&1)
  left=$(ls "$marks")
  [ -z "$left" ] && pass "$2: the owner's git status and shells there run nothing" \
    || fail "$2: the owner's git or shell ran what the sandbox wrote: $left"
}

# Hooks git runs at the owner's commit, echoing the status of the first.
hooks="for h in pre-commit post-commit post-checkout; do \
printf '#!/bin/sh\\\\ntouch $marks/hook\\\\n' > .git/hooks/\$h; echo hook=\$?; chmod +x .git/hooks/\$h; done;"
# The skeleton a hostile model writes; each step echoes its status.
skeleton="mkdir -p .git/objects .git/refs/heads; echo mkdir=\$?; \
echo 'ref: refs/heads/main' > .git/HEAD; echo head=\$?; \
printf '[core]\\\\n\\\\trepositoryformatversion = 0\\\\n\\\\tfsmonitor = \\\"touch $marks/fsmonitor; false\\\"\\\\n' > .git/config; echo config=\$?; \
mkdir -p .git/hooks; $hooks \
echo 'touch $marks/bashrc' > .bashrc; echo bashrc=\$?; \
echo 'touch $marks/profile' > .profile; echo profile=\$?; echo done"

call b shell "{\"command\":\"$skeleton\",\"cwd\":\"$work/plain\"}"
[ $rc = 0 ] && contains "$out" done && contains "$out" "config=1" && contains "$out" "hook=1" \
  && contains "$out" "bashrc=1" && contains "$out" "profile=1" \
  && pass "a folder without .git: the sandbox cannot make .git, a hook or a .bashrc" \
  || fail "skeleton in a folder without .git: rc=$rc out=$out err=$err"
[ -z "$(ls -A "$work/plain")" ] && pass "after the call the folder is as it was (empty)" \
  || fail "left in the folder after the call: $(ls -la "$work/plain")"
owner_checks "$work/plain" "a folder without .git"
call b shell "{\"command\":\"rmdir .git; echo rmdir=\$?; mv .git gone; echo mv=\$?; rm -f .bashrc; echo rm=\$?\",\"cwd\":\"$work/plain\"}"
contains "$out" "rmdir=1" && contains "$out" "mv=1" && contains "$out" "rm=1" \
  && pass "the sandbox can neither remove nor move what stands in for .git and .bashrc" \
  || fail "moving the placeholders: rc=$rc out=$out err=$err"

# .git exists, hooks/ does not.
call b shell "{\"command\":\"mkdir -p .git/hooks; $hooks printf '[core]\\\\n\\\\tfsmonitor = \\\"touch $marks/fsmonitor; false\\\"\\\\n' >> .git/config; echo config=\$?; echo x > .git/description; echo other=\$?; echo done\",\"cwd\":\"$work/repo\"}"
[ $rc = 0 ] && contains "$out" "hook=1" && contains "$out" "config=1" && contains "$out" "other=0" \
  && pass "a repository without hooks/: no hook made, config read-only, the rest writable" \
  || fail "repository without hooks: rc=$rc out=$out err=$err"
[ ! -e "$work/repo/.git/hooks" ] && pass "after the call no .git/hooks is left" \
  || fail "left after the call: $(ls -la "$work/repo/.git/hooks")"
owner_checks "$work/repo" "a repository without hooks/"

# write_file where .git is missing.
call b write_file "{\"path\":\"$work/wf/.git/config\",\"content\":\"[core]\\n\\tfsmonitor = \\\"touch $marks/fsmonitor; false\\\"\\n\"}"
refused_ro "$out" && [ ! -e "$work/wf/.git" ] \
  && pass "write_file to .git/config without .git: not written, nothing left ($out)" \
  || fail "write_file .git/config: rc=$rc out=$out err=$err; $(ls -laR "$work/wf")"
call b write_file "{\"path\":\"$work/wf/.bashrc\",\"content\":\"touch $marks/bashrc\\n\"}"
refused_ro "$out" && [ ! -e "$work/wf/.bashrc" ] \
  && pass "write_file to a missing .bashrc: not written, nothing left ($out)" \
  || fail "write_file .bashrc: rc=$rc out=$out err=$err; $(ls -la "$work/wf")"
owner_checks "$work/wf" "after write_file"

# Two calls in one folder: the long one starts first, a short one starts and ends; the long
# one is still protected afterwards.  Meanwhile the owner sees empty root-owned placeholders.
# The long call waits for a file "go" the test makes once the short one is over (25 s at
# most), not for a time a loaded machine may outlast, and removes it.
"$boxmaker" call shell "{\"command\":\"i=0; while [ ! -e go ] && [ \$i -lt 250 ]; do sleep 0.1; i=\$((i + 1)); done; rm -f go; mkdir -p .git/hooks; echo hooks=\$?; echo x > .bashrc; echo bashrc=\$?; echo long-done\",\"cwd\":\"$work/busy\"}" \
  --socket "$work/b.sock" --session "$session-long" --call long > "$work/long.out" 2> "$work/long.err" &
long=$!
i=0
while [ ! -d "$work/busy/.git" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
seen=$(stat -c '%U %a %F' "$work/busy/.git" "$work/busy/.bashrc" 2>&1 | tr '\n' ';')
[ "$seen" = "root 555 directory;root 444 regular empty file;" ] \
  && [ -z "$(ls -A "$work/busy/.git")" ] \
  && pass "during a call the owner sees an empty root-owned .git (0555) and .bashrc (0444)" \
  || fail "during a call: $seen"
call b shell "{\"command\":\"echo short\",\"cwd\":\"$work/busy\"}"
contains "$out" short || fail "the short call: rc=$rc out=$out err=$err"
kill -0 $long 2>/dev/null || fail "the long call ended before the short one (test assumption)"
[ -d "$work/busy/.git" ] && pass "a shorter call in the same folder leaves the placeholders" \
  || fail "the shorter call removed the running call's placeholders"
touch "$work/busy/go"
wait $long
out=$(cat "$work/long.out")
contains "$out" "hooks=1" && contains "$out" "bashrc=1" && contains "$out" long-done \
  && pass "the long call stays protected after the short one ends" \
  || fail "long call: out=$out err=$(cat "$work/long.err")"
[ -z "$(ls -A "$work/busy")" ] && pass "after both calls the folder is empty again" \
  || fail "left after both calls: $(ls -la "$work/busy")"
owner_checks "$work/busy" "after two calls"

# Whatever ends a call, its placeholders go: the time limit, the client hanging up (the
# call is cancelled), brokerd killed (the next brokerd sharing its home removes them).
writable_folder "$work/ends"
ends="  - tools: [shell]
    paths: [$work/ends]"
start_brokerd t "" "    shell_ms: 2000" "$ends"
t_pid=$bpid
call t shell "{\"command\":\"sleep 30\",\"cwd\":\"$work/ends\"}"
[ $rc != 0 ] && [ -z "$(ls -A "$work/ends")" ] \
  && pass "past the time limit: placeholders gone ($(printf '%s' "$err" | head -n 1))" \
  || fail "time limit: rc=$rc err=$err; $(ls -la "$work/ends")"
# wait_for_git: until the running call's placeholder .git is there.
wait_for_git () {
  i=0
  while [ ! -d "$work/ends/.git" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  [ -d "$work/ends/.git" ]
}
"$boxmaker" call shell "{\"command\":\"sleep 30\",\"cwd\":\"$work/ends\"}" \
  --socket "$work/t.sock" --session "$session" --call hangup > /dev/null 2>&1 &
client=$!
wait_for_git || fail "the hangup call made no placeholder"
kill "$client"
i=0
while [ -n "$(ls -A "$work/ends")" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -z "$(ls -A "$work/ends")" ] && pass "the client hung up: placeholders gone after $((i * 100)) ms" \
  || fail "cancelled call left: $(ls -la "$work/ends")"
# Killed once its sandbox runs (the command has started), and started again once that
# sandbox is gone.
start_brokerd k "" "    shell_ms: 60000" "$ends"
"$boxmaker" call shell "{\"command\":\"touch started; sleep 30\",\"cwd\":\"$work/ends\"}" \
  --socket "$work/k.sock" --session "$session" --call killed > /dev/null 2>&1 &
i=0
while [ ! -e "$work/ends/started" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -e "$work/ends/started" ] || fail "the killed brokerd's call did not start"
killed=$bpid
kill -9 "$bpid"
wait_gone 20 || fail "the killed brokerd's sandbox still runs"
rm -f "$work/ends/started"
[ -d "$work/ends/.git" ] && [ -z "$(ls -A "$work/ends/.git")" ] \
  && pass "brokerd killed during a call: its empty placeholders stay" \
  || fail "after kill -9: $(ls -la "$work/ends")"
start_brokerd k2 "" "" "$ends"
[ -z "$(ls -A "$work/ends")" ] && grep -q "removed placeholder $work/ends/.git left by an earlier brokerd" "$work/k2.log" \
  && pass "the next brokerd sharing the home removed them at start, and logged it" \
  || fail "not swept at start: $(ls -la "$work/ends"); $(cat "$work/k2.log")"
# A brokerd's record of its placeholders (home/placeholders/PID-TOKEN) lives while it runs;
# the killed one's went with the sweep, and one that stops takes its own away.
[ -z "$(ls "$work/home/placeholders" 2>/dev/null | grep "^$killed-")" ] \
  && pass "the killed brokerd's record of placeholders is gone from the home" \
  || fail "left in the home: $(ls -laR "$work/home/placeholders")"
[ -n "$(ls "$work/home/placeholders" 2>/dev/null | grep "^$t_pid-")" ] || fail "brokerd t keeps no record"
kill -TERM "$t_pid"
i=0
while kill -0 "$t_pid" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -z "$(ls "$work/home/placeholders" 2>/dev/null | grep "^$t_pid-")" ] \
  && pass "a brokerd that stops takes its record of placeholders away" \
  || fail "left by a stopped brokerd: $(ls -laR "$work/home/placeholders")"
finish
