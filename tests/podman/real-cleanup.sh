#!/bin/sh
# After the real-podman tests: removes the test image and fails if any container with a
# boxmaker label is left (the tests check after each case too; this catches a crash).
set -u
out=$1
left=$(podman ps -a --filter label=boxmaker --format "{{.Names}}" 2>/dev/null | grep "^boxmaker-podmanreal-" || true)
for id in $(podman images --filter reference=localhost/boxmaker-tools-test --format '{{.ID}}' 2>/dev/null); do
  podman rmi -f "$id" >/dev/null 2>&1 || true
done
rm -f "$out"
if [ -n "$left" ]; then
  echo "containers left behind: $left" >&2
  exit 1
fi
