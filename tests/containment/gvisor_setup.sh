#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The containment cases against gvisor.so: checks that this host can run it (root, runsc)
# and builds its read-only root.  Writes OPTIONS_FILE, the module's options for the cases
# (lib.sh's BX_CONTAINMENT_OPTIONS), or "unusable: WHY", which makes every case skip saying
# why.
#
#   gvisor_setup.sh BUILD_IMAGE TOOLKIT DIR OPTIONS_FILE
set -u
build_image=$1 toolkit=$2 dir=$3 options=$4

unusable () {
  echo "unusable: $*" > "$options"
  echo "gvisor.so cannot run here: $*"
  [ "${BX_REQUIRE_GVISOR:-0}" = 1 ] && exit 1
  exit 0
}
rm -f "$options"
[ "$(id -u)" = 0 ] || unusable "not root (runsc makes the sandboxes' cgroups and namespaces)"
command -v runsc > /dev/null || unusable "runsc is not installed (apt-get install runsc)"
rm -rf "$dir"
mkdir -p "$dir"
"$build_image" --quiet --rootfs "$dir/rootfs" --toolkit "$toolkit" > "$dir/build.log" 2>&1 \
  || { cat "$dir/build.log"; echo "cannot build the read-only root"; exit 1; }
cat > "$options" <<YAML
    rootfs: $dir/rootfs
    cgroup_path: /bx-containment-gvisor
YAML
echo "gvisor.so's options for the containment cases:"
cat "$options"
