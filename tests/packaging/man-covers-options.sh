#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# man-covers-options.sh BROKERD BOXMAKER RUNTIMEDIR MANDIR [CHECK]: the man pages name every flag
# the programs take and every config key brokerd and podman.so accept, as the programs
# themselves list them (--help, and the "expected one of" of an unknown key), so a new
# flag or key cannot land without its documentation.
set -eu
brokerd=$1 boxmaker=$2 runtimedir=$3 mandir=$4 check=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# covers PAGE WHAT WORD...: each WORD appears in the rendered PAGE.
covers () {
  page=$1 what=$2
  shift 2
  text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man --nh --nj -l -P cat "$mandir/$page" 2>/dev/null)
  missing=
  for word in "$@"; do
    printf '%s\n' "$text" | grep -qF -- "$word" || missing="$missing $word"
  done
  if [ -n "$missing" ]; then
    echo "FAIL: $page does not name these $what:$missing"
    status=1
  else
    echo "PASS: $page names all $# $what"
  fi
}
flags () { "$1" --help | grep -o -- '--[a-z][a-z-]*' | sort -u; }
# The list after "expected one of" (config keys) or "knows:" (module options).
listed () { sed -n 's/.*\(expected one of\|this runtime knows:\) \([a-z_, ]*\).*/\2/p' | tr -d ',' | head -n 1; }

covers brokerd.8 "brokerd flags" $(flags "$brokerd")
covers boxmaker.1 "boxmaker flags" $(flags "$boxmaker")
covers boxmaker-mcp.1 "boxmaker mcp flags" $("$boxmaker" mcp --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
[ -n "$check" ] && covers boxmaker-runtime-check.1 "boxmaker-runtime-check flags" $(flags "$check")

printf 'zz: 1\n' > "$tmp/top.yaml"
printf 'grants:\n  - zz: 1\n' > "$tmp/grant.yaml"
printf 'runtime:\n  zz: 1\n' > "$tmp/runtime.yaml"
printf 'limits:\n  zz: 1\n' > "$tmp/limits.yaml"
for f in top grant runtime limits; do
  keys=$("$brokerd" --check-config "$tmp/$f.yaml" 2>&1 | listed || true)
  [ -n "$keys" ] || { echo "FAIL: brokerd did not list the $f keys"; status=1; continue; }
  covers brokerd.yaml.5 "$f keys" $keys
done

if [ -e "$runtimedir/podman.so" ]; then
  printf 'runtime:\n  module: podman\n  options:\n    zz: "1"\n' > "$tmp/podman.yaml"
  keys=$("$brokerd" --check-config "$tmp/podman.yaml" --runtimedir "$runtimedir" 2>&1 | listed || true)
  if [ -n "$keys" ]; then
    covers brokerd.yaml.5 "podman options" $keys
  else
    echo "FAIL: podman.so did not list its options"; status=1
  fi
else
  echo "SKIP: podman.so is not built: its options are not checked"
fi

if [ -e "$runtimedir/bwrap.so" ]; then
  printf 'runtime:\n  module: bwrap\n  options:\n    zz: "1"\n' > "$tmp/bwrap.yaml"
  keys=$("$brokerd" --check-config "$tmp/bwrap.yaml" --runtimedir "$runtimedir" 2>&1 | listed || true)
  if [ -n "$keys" ]; then
    covers brokerd.yaml.5 "bwrap options" $keys
  else
    echo "FAIL: bwrap.so did not list its options"; status=1
  fi
else
  echo "SKIP: bwrap.so is not built: its options are not checked"
fi
exit $status
