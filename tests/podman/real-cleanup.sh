#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# After the real-podman tests: removes the test image and fails if any container with a
# boxmaker label is left (the tests check after each case too; this catches a crash).
set -u
out=$1
# The name real-setup.sh gave the image.  Only containers of this tree's image count: other
# trees may be running the same tests on this podman.
name=localhost/boxmaker-tools-test-$(dirname "$out" | cksum | cut -d ' ' -f 1)
left=$(podman ps -a --filter label=boxmaker --format '{{.Names}} {{.Image}}' 2>/dev/null \
       | awk -v image="$name" 'index($2, image "@") == 1 || index($2, image ":") == 1 { print $1 }')
# By name and tag, not by id: an image another tree also tagged only loses this tag.
for tagged in $(podman images --filter reference="$name" --format '{{.Repository}}:{{.Tag}}' 2>/dev/null); do
  podman rmi "$tagged" >/dev/null 2>&1 || true
done
rm -f "$out"
if [ -n "$left" ]; then
  echo "containers left behind: $left" >&2
  exit 1
fi
