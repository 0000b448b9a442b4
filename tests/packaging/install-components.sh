#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# install-components.sh CMAKE BUILD_DIR: every file `cmake --install` puts down belongs to one of
# the components the Debian packages are made of (daemon, tools, podman, bwrap, dev), and none of them is
# a test-only piece.  A file installed without a COMPONENT would otherwise land in no
# package, or in the wrong one.
set -eu
cmake=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cmake" --install "$build" --prefix "$tmp/all" >/dev/null
for c in daemon tools podman bwrap gvisor dev client client-dev; do
  "$cmake" --install "$build" --prefix "$tmp/parts" --component "$c" >/dev/null
done
(cd "$tmp/all" && find . ! -type d | sort) > "$tmp/all.list"
(cd "$tmp/parts" && find . ! -type d | sort) > "$tmp/parts.list"
if ! cmp -s "$tmp/all.list" "$tmp/parts.list"; then
  echo "FAIL: installed outside the daemon, tools, podman, bwrap, gvisor, dev, client and client-dev components:"
  comm -23 "$tmp/all.list" "$tmp/parts.list"
  exit 1
fi
if grep -E '/fake[^/]*$|/tests?/' "$tmp/all.list"; then
  echo "FAIL: a test-only piece is installed (above)"
  exit 1
fi
echo "PASS: $(wc -l < "$tmp/all.list") installed files, each in a package component"
