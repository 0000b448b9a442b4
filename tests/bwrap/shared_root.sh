#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test_bwrap_alone where / is a shared mount, as on every systemd host: the copies that make
# mount sources non-recursive must not propagate back into the namespace they came from.
# Runs the suite in a mount namespace of its own whose / is made rshared there, so the
# machine's own mounts are never touched.  Usage: shared_root.sh TEST_BWRAP_ALONE
set -u
test_bin=$1
skip () { echo "SKIP shared_root: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (it mounts)"
command -v unshare >/dev/null || skip "no unshare(1)"
unshare -m true 2>/dev/null || skip "cannot make a mount namespace here"
exec unshare -m sh -c 'mount --make-rshared / && grep -q " / / .*shared:" /proc/self/mountinfo \
  || { echo "FAIL: / is not shared in the test namespace"; exit 1; }
exec "$1"' shared_root "$test_bin"
