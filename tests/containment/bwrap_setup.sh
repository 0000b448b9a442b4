#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The containment cases against bwrap.so: checks that this host can run it (root, bubblewrap,
# writable cgroups (v1, or a subtree of cgroup v2), user namespaces for the sandbox's uid) and builds
# its read-only root.  Writes OPTIONS_FILE, the module's options for the cases (lib.sh's
# BX_CONTAINMENT_OPTIONS), or "unusable: WHY", which makes every case skip saying why.
#
#   bwrap_setup.sh BUILD_IMAGE TOOLKIT DIR OPTIONS_FILE
set -u
build_image=$1 toolkit=$2 dir=$3 options=$4

unusable () {
  echo "unusable: $*" > "$options"
  echo "bwrap.so cannot run here: $*"
  [ "${BX_REQUIRE_BWRAP:-0}" = 1 ] && exit 1
  exit 0
}
rm -f "$options"
[ "$(id -u)" = 0 ] || unusable "not root (the limits' cgroups, a root-owned rootfs)"
bwrap=$(command -v bwrap) || unusable "bubblewrap is not installed"
# cgroup v2: a subtree for the cases' brokerds (this shell's own cgroup holds other
# processes, so a brokerd could not hand its controllers to slots), the same for every run
# from DIR, removed and made again here.
cgroup=
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
  for c in memory pids cpu; do
    grep -qw "$c" /sys/fs/cgroup/cgroup.subtree_control \
      || unusable "cgroup v2 without the $c controller enabled at its root"
  done
  cgroup=/sys/fs/cgroup/bx-containment-$(printf '%s' "$dir" | cksum | cut -d' ' -f1)
  [ ! -d "$cgroup" ] || find "$cgroup" -depth -type d -exec rmdir {} \; 2>/dev/null
  mkdir -p "$cgroup" || unusable "cannot make the cgroup $cgroup"
else
  [ -w /sys/fs/cgroup/memory/cgroup.procs ] || unusable "no writable cgroup v1 memory hierarchy, no cgroup v2"
fi
# The sandbox's uid (nobody) makes the user namespace, as bwrap.so's sandboxes do.
msg=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$bwrap" --unshare-user \
        --ro-bind / / true 2>&1) || unusable "no user namespaces for uid 65534: $msg"

rm -rf "$dir"
mkdir -p "$dir"
"$build_image" --quiet --rootfs "$dir/rootfs" --toolkit "$toolkit" > "$dir/build.log" 2>&1 \
  || { cat "$dir/build.log"; echo "cannot build the read-only root"; exit 1; }
cat > "$options" <<YAML
    rootfs: $dir/rootfs
    egress_dir: $dir/egress
${cgroup:+    cgroup_root: $cgroup}
YAML
echo "bwrap.so's options for the containment cases:"
cat "$options"
