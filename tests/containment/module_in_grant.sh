#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What brokerd loads, runs or trusts never lies in a folder a sandbox can write.  A grant of
# the folder brokerd loads its module from by name (as a grant of a build folder would hold
# it) let a shell call replace the module, whose constructor the next brokerd runs as root.
# The config is refused instead, at --check-config, at start and at a reload, naming the
# grant's path (file, line, column) and what it would hold; the paths are compared as the
# kernel resolves them (a symbolic link to the folder, a folder holding it), not as text.
. "$(dirname "$0")/lib.sh"

# A runtimes folder of the case's own, owned by the sandbox's uid like a writable grant.
writable_folder "$work/build"
rt=$work/build/rt
writable_folder "$rt"
cp "$runtimedir/$module.so" "$rt/" || { echo "cannot copy $module.so"; exit 1; }
[ ! -e "$runtimedir/podman-seccomp.json" ] || cp "$runtimedir/podman-seccomp.json" "$rt/"
[ ! -e "$runtimedir/podman-ucounts" ] || cp "$runtimedir/podman-ucounts" "$rt/"
ln -s "$rt" "$work/rt-link"
runtimedir_real=$runtimedir
runtimedir=$rt

# config NAME GRANTS [TOP]: writes $work/NAME.yaml as start_brokerd would.
config () {
  cat > "$work/$1.yaml" <<YAML
socket: $work/$1.sock
socket_mode: 0666
home: $work/home
${3:-}
runtime:
  module: $module
  options:
$(module_options)
grants:
$2
YAML
}
# check NAME: --check-config of $work/NAME.yaml; sets $rc and $msg.
check () {
  msg=$("$brokerd" --check-config "$work/$1.yaml" --runtimedir "$rt" 2>&1)
  rc=$?
}
# The line and column of the first grant's path in a config (the grants' YAML comes last).
path_at () {
  line=$(grep -n "^    paths: \[" "$work/$1.yaml" | head -n 1 | cut -d: -f1)
  echo "$work/$1.yaml:$line:13:"
}

config shell_rt "  - tools: [shell]
    paths: [$rt]"
check shell_rt
if [ $rc = 0 ]; then
  # The hole itself: brokerd accepts the grant, and a shell call replaces the module.
  start_brokerd shell_rt "" "" "  - tools: [shell]
    paths: [$rt]"
  before=$(md5sum < "$rt/$module.so")
  call shell_rt shell "{\"command\":\"echo evil > $module.so.new && mv -f $module.so.new $module.so; echo mv=\$?\",\"cwd\":\"$rt\"}"
  after=$(md5sum < "$rt/$module.so")
  fail "a shell grant of the runtimes folder is accepted; a shell call $( [ "$before" != "$after" ] && echo replaced || echo "did not replace") the module ($out)"
  kill "$bpid"; wait "$bpid" 2>/dev/null
  rm -f "$rt/$module.so" && cp "$runtimedir_real/$module.so" "$rt/"
elif contains "$msg" "$(path_at shell_rt) path \"$rt\" of grant 1 holds the runtimes folder $rt"; then
  pass "--check-config refuses a shell grant of the runtimes folder, naming where and what"
else
  fail "refused, but not as expected (rc=$rc): $msg"
fi

# The same refusal stops brokerd at start, before it listens.
"$brokerd" --config "$work/shell_rt.yaml" --runtimedir "$rt" > "$work/start.out" 2>&1
rc=$?
[ $rc != 0 ] && [ ! -S "$work/shell_rt.sock" ] \
  && contains "$(cat "$work/start.out")" "holds the runtimes folder" \
  && pass "brokerd refuses to start with it" \
  || fail "brokerd started, or said something else (rc=$rc): $(cat "$work/start.out")"

# Through a symbolic link, from a folder holding it, and the module file itself.
for how in "link:$work/rt-link:holds the runtimes folder $rt" \
           "parent:$work/build:holds the runtimes folder $rt" \
           "write_file:$rt:holds the runtimes folder $rt"; do
  name=${how%%:*} rest=${how#*:}
  folder=${rest%%:*} want=${rest#*:}
  tools=shell
  [ "$name" = write_file ] && tools=write_file
  config "$name" "  - tools: [$tools]
    paths: [$folder]"
  check "$name"
  [ $rc != 0 ] && contains "$msg" "$(path_at "$name") path \"$folder\" of grant 1 $want" \
    && pass "refused: a $tools grant of $folder ($name)" \
    || fail "$name: $tools grant of $folder accepted or not named (rc=$rc): $msg"
done

# A folder a sandbox only reads may hold it (podman.so protects its seccomp profile there
# from every grant).
config read_rt "  - tools: [read_file]
    paths: [$rt]"
check read_rt
[ $rc = 0 ] || [ "$module" = podman ] && pass "a read_file grant of the runtimes folder is accepted" \
  || fail "read_file grant of the runtimes folder refused (rc=$rc): $msg"

# The config file itself, and the audit log reached through a link.
writable_folder "$work/conf"
config conf_self "  - tools: [shell]
    paths: [$work/conf]"
mv "$work/conf_self.yaml" "$work/conf/conf_self.yaml"
msg=$("$brokerd" --check-config "$work/conf/conf_self.yaml" --runtimedir "$rt" 2>&1)
rc=$?
[ $rc != 0 ] && contains "$msg" "path \"$work/conf\" of grant 1 holds the config file $work/conf/conf_self.yaml" \
  && pass "refused: a shell grant holding the config file" \
  || fail "a shell grant holding the config file (rc=$rc): $msg"
writable_folder "$work/logs"
ln -s "$work/logs" "$work/logs-link"
config audit_link "  - tools: [shell]
    paths: [$work/logs-link]" "audit: $work/logs/audit.log"
check audit_link
[ $rc != 0 ] && contains "$msg" "path \"$work/logs-link\" of grant 1 holds the audit log $work/logs/audit.log" \
  && pass "refused: a shell grant of a link to the audit log's folder" \
  || fail "audit log behind a link (rc=$rc): $msg"

# A reload that adds such a grant keeps the running config, and says why.
writable_folder "$work/ok"
start_brokerd reload "" "" "  - tools: [shell]
    paths: [$work/ok]"
config reload "  - tools: [shell]
    paths: [$work/ok]
  - tools: [shell]
    paths: [$work/rt-link]"
kill -HUP "$bpid"
# Wait for the refusal itself: "reload" alone also matches the socket's name in the
# listening line, written before the signal.
i=0
while ! grep -qF "holds the runtimes folder $rt" "$work/reload.log" && [ $i -lt 600 ]; do
  sleep 0.1
  i=$((i + 1))
done
contains "$(cat "$work/reload.log")" "holds the runtimes folder $rt" \
  && pass "a reload adding a grant of the runtimes folder is refused" \
  || fail "reload: $(cat "$work/reload.log")"
call reload shell "{\"command\":\"echo evil > $module.so\",\"cwd\":\"$rt\"}"
contains "$out$err" denied && cmp -s "$rt/$module.so" "$runtimedir_real/$module.so" \
  && pass "the running config still denies a call there" \
  || fail "after the reload: rc=$rc out=$out err=$err"
finish
