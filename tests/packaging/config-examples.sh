#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# config-examples.sh BROKERD RUNTIMEDIR CONFFILE [with-podman]: the shipped config passes
# brokerd --check-config as it is (refusing runtime, no grants), and so does the config a
# person gets by uncommenting its examples (the podman runtime and the grants), when
# podman.so is built.
set -eu
brokerd=$1 runtimedir=$2 conffile=$3 podman=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$brokerd" --check-config "$conffile" --runtimedir "$runtimedir" 2>&1) || {
  echo "FAIL: the shipped config:"; echo "$out"; exit 1; }
printf '%s\n' "$out" | grep -q "^runtime: refusing " || {
  echo "FAIL: the shipped config does not start with the refusing runtime:"; echo "$out"; exit 1; }
printf '%s\n' "$out" | grep -q "^no grants" || {
  echo "FAIL: the shipped config grants something:"; echo "$out"; exit 1; }
echo "PASS: the shipped config: refusing runtime, no grants"

[ "$podman" = with-podman ] || { echo "SKIP: podman.so is not built: the podman example is not checked"; exit 0; }

# Uncommenting, as the comments tell a person to: a commented "runtime:" or "grants:" line
# starts an example, which runs while lines stay commented YAML ("#   ..."); the examples
# replace the shipped runtime and grants.
awk '
  /^# (runtime|grants):$/ { example = 1; sub (/^# /, ""); print; next }
  example && /^#   / { sub (/^# /, ""); print; next }
  { example = 0 }
  /^runtime:$/ { skip = 1; next }
  skip && /^  / { next }
  { skip = 0 }
  /^grants: \[\]$/ { next }
  { print }
' "$conffile" > "$tmp/brokerd.yaml"
out=$("$brokerd" --check-config "$tmp/brokerd.yaml" --runtimedir "$runtimedir" 2>&1) || {
  echo "FAIL: the config with its examples uncommented:"; cat "$tmp/brokerd.yaml"; echo "$out"; exit 1; }
printf '%s\n' "$out" | grep -q "^runtime: podman " || {
  echo "FAIL: the podman example does not select podman:"; echo "$out"; exit 1; }
grants=$(printf '%s\n' "$out" | grep -c "^grant ")
[ "$grants" -ge 2 ] || { echo "FAIL: the grant examples give $grants grant(s):"; echo "$out"; exit 1; }
echo "PASS: the config with its examples uncommented: podman runtime, $grants grants"
