#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A folder on the way to a protected path (.git for .git/hooks) is a mount source inside a
# folder a sandbox can write.  Two grants of one folder, the second protecting more than the
# first (readonly: [] here), let a sandbox of the first exchange .git for a symbolic link to
# a host folder outside every grant, over and over, while calls of the second start: the
# walk and the module's own check may see the folder, the mount made after them must not
# become the link's target in the second grant's sandbox.  brokerd refuses such a config
# (one folder written by two grants protecting other paths); were it accepted, the race runs.
. "$(dirname "$0")/lib.sh"

shared=$work/shared
other=$work/other
secret=$work/secret
writable_folder "$shared"
writable_folder "$other"
mkdir -p "$secret" && chmod 0777 "$secret"
token=secret-$$-$(date +%s)
echo "$token" > "$secret/token" && chmod 0644 "$secret/token"
build_probe "$shared/probe"
grants="  - tools: [shell]
    paths: [$shared]
    readonly: []
  - tools: [shell]
    paths: [$other, $shared]"

cat > "$work/check.yaml" <<YAML
socket: $work/check.sock
runtime:
  module: refusing
grants:
$grants
YAML
msg=$("$brokerd" --check-config "$work/check.yaml" --runtimedir "$runtimedir" 2>&1)
if [ $? != 0 ] && contains "$msg" "check.yaml:9:" && contains "$msg" "path \"$shared\" of grant 2 is also written by grant 1 ($work/check.yaml:6:13)"; then
  pass "--check-config refuses one folder written by two grants protecting other paths"
  finish
fi
fail "one folder written by two grants protecting other paths accepted: $msg"

start_brokerd b "" "    shell_ms: 60000" "$grants"

# The first grant's sandbox exchanges .git and a link to the secret folder for 40 s.
"$boxmaker" call shell "{\"command\":\"./probe swap .git $secret 40\",\"cwd\":\"$shared\"}" \
  --socket "$work/b.sock" --session "$session" --call racer > "$work/racer.out" 2>&1 &
racer=$!
pids="$pids $racer"
sleep 3

# Calls of the second grant look at what is mounted at .git (or where the racer moved it).
seen= ran=0 refused=0
end=$(($(date +%s) + 30))
while [ "$(date +%s)" -lt $end ] && [ -z "$seen" ]; do
  call b shell "{\"command\":\"cat $shared/.git/token $shared/.git.link/token 2>/dev/null; \
touch $shared/.git/written $shared/.git.link/written 2>/dev/null; echo end\",\"cwd\":\"$other\"}"
  if contains "$out" end; then ran=$((ran + 1)); else refused=$((refused + 1)); fi
  contains "$out" "$token" && seen=read
  [ -e "$secret/written" ] && seen="${seen:+$seen and }wrote"
done
wait $racer
racer_out=$(cat "$work/racer.out")
contains "$racer_out" swaps= || fail "the racer did not run: $racer_out"
[ -z "$seen" ] && pass "$ran calls ran ($refused refused) while .git was swapped: none saw the host folder" \
  || fail "a sandbox of the second grant $seen in the host folder $secret, mounted at $shared/.git through the link swapped in ($ran calls ran, $refused refused; $racer_out)"
[ $ran -gt 0 ] || fail "no call of the second grant ran: $out $err"
finish
