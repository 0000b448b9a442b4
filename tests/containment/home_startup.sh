#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A writable grant of a home folder: what the owner's next git, ssh login or shell there
# reads or runs is protected by default, like the shell start-up files.  A hostile model
# writes a ~/.gitconfig and a ~/.config/git/config naming a pager, an ssh key in
# ~/.ssh/authorized_keys, and a `git` in ~/.local/bin (first on the PATH Debian's .profile
# builds); the owner's next `git branch` (HOME there) would run them.  Each write must fail,
# nothing may be left after the call, and an existing ~/.gitconfig must stay as it was.
. "$(dirname "$0")/lib.sh"
# A write to a read-only placeholder: EROFS; gVisor's kernel checks the placeholder's
# owner (root, outside its user namespace) first and answers EACCES.
refused_ro () { contains "$1" "read-only file system" || { [ "$module" = gvisor ] && contains "$1" "permission denied"; }; }
command -v git >/dev/null || skip "git is not installed"
command -v script >/dev/null || skip "script (util-linux) is not installed: git pages only on a terminal"

marks=$work/marks
mkdir -p "$marks"
chmod 0777 "$marks"
writable_folder "$work/home1"
writable_folder "$work/home2"
cat > "$work/home2/.gitconfig" <<EOF
[user]
	name = owner
EOF
chown "$sandbox_uid:$sandbox_uid" "$work/home2/.gitconfig"
start_brokerd b "" "" "  - tools: [shell, write_file]
    paths: [$work/home1, $work/home2]"

pager="[core]\\\\n\\\\tpager = \\\"touch $marks/PAGER; cat\\\"\\\\n"
plant="printf '$(echo "$pager" | sed 's/PAGER/gitconfig/')' >> .gitconfig; echo gitconfig=\$?; \
mkdir -p .config/git; printf '$(echo "$pager" | sed 's/PAGER/xdg/')' > .config/git/config; echo xdg=\$?; \
mkdir -p .ssh; echo 'ssh-ed25519 AAAA attacker' >> .ssh/authorized_keys; echo keys=\$?; \
echo 'touch $marks/sshrc' > .ssh/rc; echo sshrc=\$?; \
mkdir -p .local/bin; printf '#!/bin/sh\\\\ntouch $marks/localbin\\\\n' > .local/bin/git; echo localbin=\$?; chmod +x .local/bin/git; \
echo done"

# owner_git HOME: the owner's `git branch` in a terminal with that HOME, its PATH as
# Debian's .profile makes it; sets $ran to the marks left.
owner_git () {
  rm -f "$marks"/*
  mkdir -p "$work/repo"
  [ -d "$work/repo/.git" ] || git init -q "$work/repo"
  (cd "$work/repo" && env -i PATH="$1/.local/bin:/usr/bin:/bin" HOME="$1" TERM=dumb LESSHISTFILE=- \
    script -qec "git branch" /dev/null < /dev/null > /dev/null 2>&1)
  ran=$(ls "$marks")
}

for h in home1 home2; do
  call b shell "{\"command\":\"$plant\",\"cwd\":\"$work/$h\"}"
  [ $rc = 0 ] && contains "$out" done && contains "$out" "gitconfig=1" && contains "$out" "xdg=1" \
    && contains "$out" "keys=1" && contains "$out" "sshrc=1" && contains "$out" "localbin=1" \
    && pass "$h: the sandbox cannot write .gitconfig, .config/git/config, .ssh or .local/bin" \
    || fail "$h: planted: rc=$rc out=$out err=$err"
  owner_git "$work/$h"
  [ -z "$ran" ] && pass "$h: the owner's next git runs nothing the sandbox wrote" \
    || fail "$h: the owner's git ran: $ran"
done
left=$(cd "$work/home1" && ls -A)
[ -z "$left" ] && pass "home1: nothing is left after the call" || fail "home1: left: $left"
grep -q pager "$work/home2/.gitconfig" && fail "home2: .gitconfig was changed: $(cat "$work/home2/.gitconfig")" \
  || pass "home2: the existing .gitconfig is unchanged"

call b write_file "{\"path\":\"$work/home1/.ssh/authorized_keys\",\"content\":\"ssh-ed25519 AAAA attacker\\n\"}"
{ refused_ro "$out" || contains "$out" "not a directory"; } && [ ! -e "$work/home1/.ssh" ] \
  && pass "write_file to .ssh/authorized_keys: not written ($out)" \
  || fail "write_file .ssh/authorized_keys: rc=$rc out=$out err=$err"
call b write_file "{\"path\":\"$work/home1/.gitconfig\",\"content\":\"[core]\\n\\tpager = touch $marks/wf\\n\"}"
refused_ro "$out" && [ ! -e "$work/home1/.gitconfig" ] \
  && pass "write_file to .gitconfig: not written ($out)" \
  || fail "write_file .gitconfig: rc=$rc out=$out err=$err"
finish
