#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A granted folder made a bare git repository.  No `.git` is needed: HEAD, objects/, refs/
# and a config naming a pager (`core.pager = "touch MARK; cat"`) in the folder itself make
# it one, and the owner's next `git branch` there runs the pager as the owner.  The owner
# here is a uid of its own (not root, no account needed: git compares uids) who owns the
# folder and lets the sandbox write it (mode 0777 stands for the ACL docs/security.md once
# recommended).  Then what holds below the folder, as docs/security.md says: a repository
# whose folders the sandbox made belongs to the sandbox's uid and git refuses it ("dubious
# ownership"); a folder of the owner's that the sandbox can write is the owner's to guard
# with safe.bareRepository=explicit.
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || skip "git is not installed"
command -v script >/dev/null || skip "script (util-linux) is not installed: git pages only on a terminal"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"

# A uid nobody uses, for the owner.
owner=
for u in $(seq 61200 61999); do
  getent passwd "$u" > /dev/null || { owner=$u; break; }
done
[ -n "$owner" ] || skip "no free uid in 61200-61999 for the owner"
marks=$work/marks
mkdir -p "$marks" "$work/ownerhome"
chmod 0777 "$marks"
chown "$owner:$owner" "$work/ownerhome"

# The owner's folder, writable by the sandbox; a folder of the sandbox's uid beside it.
mkdir -p "$work/own"
chown "$owner:$owner" "$work/own" && chmod 0777 "$work/own"
writable_folder "$work/given"
start_brokerd b "" "" "  - tools: [shell]
    paths: [$work/own, $work/given]"

# as_owner CMD: CMD as the owner would type it in a terminal (git pages only there), in a
# clean environment; its output in $seen.
as_owner () {
  rm -f "$marks"/*
  seen=$(setpriv --reuid="$owner" --regid="$owner" --clear-groups \
    env -i PATH=/usr/bin:/bin HOME="$work/ownerhome" TERM=dumb script -qec "$1" /dev/null < /dev/null 2>&1)
  ran=$(ls "$marks")
}

# bare WHERE NAME: the shell command that makes WHERE a bare repository whose pager leaves
# the mark NAME; each step echoes its status.
bare () {
  echo "cd $1 && mkdir -p objects refs/heads; echo dirs=\$?; echo 'ref: refs/heads/main' > HEAD; echo head=\$?; printf '[core]\\\\n\\\\tbare = true\\\\n\\\\tpager = \\\"touch $marks/$2; cat\\\"\\\\n' > config; echo config=\$?; echo done"
}

# The grant's folder itself.
call b shell "{\"command\":\"$(bare "$work/own" root)\",\"cwd\":\"$work/own\"}"
contains "$out" done || fail "the bare repository call did not run: rc=$rc out=$out err=$err"
contains "$out" "head=1" && pass "the sandbox cannot write HEAD in the granted folder ($out)" \
  || fail "the sandbox wrote HEAD in the granted folder: $out"
as_owner "cd $work/own && git branch"
[ -z "$ran" ] && pass "the owner's git branch in the granted folder runs nothing (${seen%%
*})" \
  || fail "the owner's git branch in the granted folder ran the sandbox's pager: $ran ($seen)"
[ ! -e "$work/own/HEAD" ] && pass "after the call no HEAD is left in the folder" \
  || fail "left after the call: $(ls -la "$work/own/HEAD")"

# A folder the sandbox makes below, in either kind of grant: its own, which git refuses.
for top in own given; do
  call b shell "{\"command\":\"mkdir -p $work/$top/sub && $(bare "$work/$top/sub" "sub-$top")\",\"cwd\":\"$work/$top\"}"
  contains "$out" "head=0" || fail "the sandbox could not make $top/sub a repository: $out $err"
  as_owner "cd $work/$top/sub && git branch"
  [ -z "$ran" ] && contains "$seen" "dubious ownership" \
    && pass "a bare repository the sandbox made in $top/sub: git refuses it (dubious ownership)" \
    || fail "$top/sub: the owner's git ran ($ran) or did not refuse: $seen"
  # A .git file naming it, from another folder the sandbox made.
  call b shell "{\"command\":\"mkdir -p $work/$top/wt && echo 'gitdir: $work/$top/sub' > $work/$top/wt/.git; echo gitfile=\$?\",\"cwd\":\"$work/$top\"}"
  as_owner "cd $work/$top/wt && git branch"
  [ -z "$ran" ] && contains "$seen" "dubious ownership" \
    && pass "a .git file the sandbox made in $top/wt: git refuses it" \
    || fail "$top/wt: the owner's git ran ($ran) or did not refuse: $seen"
done

# A folder of the owner's that the sandbox can write (what a default ACL gives every folder
# the owner makes later): boxmaker cannot guard every such folder; the owner's
# safe.bareRepository=explicit makes git refuse to discover a bare repository there.
mkdir -p "$work/own/mine"
chown "$owner:$owner" "$work/own/mine" && chmod 0777 "$work/own/mine"
call b shell "{\"command\":\"$(bare "$work/own/mine" mine)\",\"cwd\":\"$work/own\"}"
contains "$out" "head=0" || fail "the sandbox could not write the owner's folder: $out $err"
as_owner "cd $work/own/mine && git branch"
[ -n "$ran" ] && pass "a folder of the owner's the sandbox writes is the owner's to guard (git ran the pager)" \
  || fail "expected git to trust the owner's own folder: $seen"
as_owner "cd $work/own/mine && git -c safe.bareRepository=explicit branch"
[ -z "$ran" ] && contains "$seen" "safe.bareRepository" \
  && pass "with safe.bareRepository=explicit the owner's git refuses it" \
  || fail "safe.bareRepository=explicit: ran=$ran $seen"
finish
