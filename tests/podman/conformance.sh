#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# podman.so against the conformance kit (boxmaker-runtime-check) on real podman, with a
# tools image built here under a name of its own and removed by id at the end.  Every check
# must pass (a skip must say why).
#
#   conformance.sh CHECK PODMAN_SO BUILD_IMAGE_SH TOOLKIT
set -u
check=$1 module=$2 build_image=$3 toolkit=$4

cannot () {
  echo "skip: real podman conformance cannot run: $*"
  if [ "${BX_REQUIRE_PODMAN:-0}" = 1 ]; then
    echo "BX_REQUIRE_PODMAN=1: failing" >&2
    exit 1
  fi
  exit 77
}
command -v podman >/dev/null 2>&1 || cannot "podman is not installed"
podman info >/dev/null 2>&1 || cannot "podman info fails"

tmp=$(mktemp -d)
id=
cleanup () {
  [ -n "$id" ] && podman rmi -f "$id" >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
if ! ref=$("$build_image" --quiet --toolkit "$toolkit" \
             --name "localhost/boxmaker-tools-conformance-$$" 2>"$tmp/build.log"); then
  cat "$tmp/build.log"
  echo "FAIL: the tools image could not be built"
  exit 1
fi
id=$(podman image inspect --format '{{.Id}}' "$ref")

# The options of the packaged example (packaging/examples/brokerd.yaml), as root needs them.
set -- --option "image=$ref" --option run_options=--ulimit \
  --option run_options=nofile=1024:1024 --option run_options=--ulimit \
  --option run_options=nproc=1024:1024 --option run_options=--pull=never
if [ "$(id -u)" = 0 ]; then
  set -- "$@" --option global_options=--runtime --option global_options=runc
fi

# A suite on a busy machine (load 7 on 2 cores, podman taking several seconds a container)
# checks the contract's times with room: BX_SLOW, 4 unless set (boxmaker-runtime-check(1)).
"$check" "$module" --slow "${BX_SLOW:-4}" "$@" >"$tmp/out" 2>"$tmp/log"
rc=$?
cat "$tmp/out"
last=$(tail -n 1 "$tmp/out")
case $last in
  "conformance: "*" passed, "*" failed") ;;
  *) cat "$tmp/log"; echo "FAIL: no summary line (exit $rc)"; exit 1 ;;
esac
if [ "$rc" != 0 ] || grep -q '^FAIL: ' "$tmp/out" || ! echo "$last" | grep -q ' 0 failed$'; then
  cat "$tmp/log"
  echo "FAIL: podman.so fails the conformance kit (exit $rc)"
  exit 1
fi
grep -q '^skip: read_file runs toolkit' "$tmp/out" && { echo "FAIL: podman.so taken for no sandbox"; exit 1; }
echo "ok: podman.so keeps the sandbox contract"
