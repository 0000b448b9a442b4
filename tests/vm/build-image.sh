#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/vm/build-image.sh [--out DIR] [--mirror URL] [--force]
#
# Builds the VM lane's Debian 12 (bookworm) image with debootstrap: systemd as PID 1, the
# stock kernel (linux-image-amd64) and its initramfs, and every package in tests/vm/packages.
# DIR (default build/vm) receives:
#   debian12.qcow2   the root file system (ext4 on the whole disk, no partition table)
#   vmlinuz, initrd  the image's own kernel and initramfs, which run.sh boots directly
#   stamp            the hash of this script and the package list the image was built from
# The image is built again only when the stamp differs (or with --force).  The mirror is the
# one this machine's apt uses unless --mirror names another.  Needs root, debootstrap,
# qemu-img and e2fsprogs; takes minutes (debootstrap unpacks and configures every package).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=build/vm
mirror=""
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --mirror) mirror=$2; shift 2 ;;
    --force) force=1; shift ;;
    *) echo "usage: $0 [--out DIR] [--mirror URL] [--force]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "build-image: needs root (debootstrap, chroot)" >&2; exit 1; }
for t in debootstrap qemu-img mkfs.ext4; do
  command -v "$t" >/dev/null || PATH=$PATH:/usr/sbin:/sbin
  command -v "$t" >/dev/null || { echo "build-image: $t is missing (tests/install-deps.sh)" >&2; exit 1; }
done

mkdir -p "$out"
out=$(cd "$out" && pwd)
packages=$(sed 's/#.*//' "$here/packages" | tr -s ' \n' '\n' | sed '/^$/d' | sort -u)
stamp=$( (cat "$0"; printf '%s\n' "$packages") | sha256sum | cut -d' ' -f1)
if [ $force -eq 0 ] && [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ] &&
   [ -f "$out/debian12.qcow2" ] && [ -f "$out/vmlinuz" ] && [ -f "$out/initrd" ]; then
  echo "build-image: $out/debian12.qcow2 is up to date"
  exit 0
fi

# The first deb822 or one-line source of the Debian archive that apt uses here.
if [ -z "$mirror" ]; then
  mirror=$( (cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
               /etc/apt/sources.list.d/*.sources 2>/dev/null || true) | awk '
    /^Types:/ { deb = ($0 ~ /(^| )deb( |$)/) }
    /^URIs:/ && deb && $2 ~ /debian\/?$/ { print $2; exit }
    /^deb / { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/ && $i ~ /debian\/?$/) { print $i; exit } }')
  mirror=${mirror:-http://deb.debian.org/debian}
fi
echo "build-image: Debian 12 from $mirror into $out"

start=$(date +%s)
work=$(mktemp -d "$out/build.XXXXXX")
root=$work/root
mounted=()
cleanup() {
  local m
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$out/cache" "$root"
# The kernel comes last, alone, so that its initramfs is made once, with the modules below:
# installed by debootstrap, every later package's trigger would make it again (minutes each
# under emulation-grade load).  --cache-dir keeps the downloaded packages for the next build.
debootstrap --variant=minbase --cache-dir="$out/cache" \
  --include="$(printf '%s\n' "$packages" | grep -vx linux-image-amd64 | paste -sd,)" \
  bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  echo "build-image: debootstrap failed; the end of its log:" >&2
  tail -n 30 "$work/debootstrap.log" >&2
  tail -n 30 "$root/debootstrap/debootstrap.log" >&2 2>/dev/null || true
  exit 1
}
echo "build-image: debootstrap done in $(( $(date +%s) - start )) s"

in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive "$@"
}
for m in proc sys dev; do
  mount --rbind "/$m" "$root/$m"
  mount --make-rslave "$root/$m"
  mounted+=("$root/$m")
done

# The root is the whole virtio disk; the control and shared folders come by 9p.
cat >"$root/etc/fstab" <<'FSTAB'
/dev/vda / ext4 defaults,errors=remount-ro 0 1
FSTAB
echo bx-vm >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 bx-vm\n::1 localhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
SOURCES
printf 'APT::Install-Recommends "false";\n' >"$root/etc/apt/apt.conf.d/90bx-vm-no-recommends"
# The 9p modules also in the initramfs, so a share can be mounted before the root's modules.
printf '9p\n9pnet\n9pnet_virtio\nvirtio_blk\nvirtio_pci\next4\n' >>"$root/etc/initramfs-tools/modules"
mkdir -p "$root/var/cache/bx-vm" "$out/cache/partial"
mount --bind "$out/cache" "$root/var/cache/bx-vm"
mounted+=("$root/var/cache/bx-vm")
in_root apt-get install -y -q --no-install-recommends -o Dir::Cache::Archives=/var/cache/bx-vm \
  linux-image-amd64 >"$work/kernel.log" 2>&1 || {
  tail -n 30 "$work/kernel.log" >&2
  exit 1
}
echo "build-image: kernel and initramfs done in $(( $(date +%s) - start )) s"

# The runner mounts the control folder and runs the guest-run that run.sh put there (so
# the image does not change with it): it reads the command, runs it, writes its output and
# status back, powers off.  Nothing happens when the VM boots without a control folder.
cat >"$root/usr/local/sbin/bx-vm-run" <<'RUNNER'
#!/bin/sh
ctl=/run/bx-vm/ctl
mkdir -p "$ctl"
modprobe 9pnet_virtio 2>/dev/null
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none bxctl "$ctl"; then
  echo "bx-vm-run: no control folder (9p tag bxctl); nothing to run"
  exit 0
fi
exec /bin/bash "$ctl/guest-run" "$ctl"
RUNNER
chmod 0755 "$root/usr/local/sbin/bx-vm-run"
cat >"$root/etc/systemd/system/bx-vm-run.service" <<'UNIT'
[Unit]
Description=Run the command the VM lane's host passed in, then power off
After=multi-user.target
ConditionKernelCommandLine=bx.run=1

[Service]
Type=exec
ExecStart=/usr/local/sbin/bx-vm-run
StandardOutput=journal+console
StandardError=journal+console
FailureAction=poweroff-force

[Install]
WantedBy=multi-user.target
UNIT
in_root systemctl enable bx-vm-run.service >/dev/null 2>&1
# What only slows the boot or wakes up on a timer: nothing in the lane needs it.
for u in apt-daily.timer apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer \
         e2scrub_reap.service podman-auto-update.timer podman-restart.service; do
  in_root systemctl disable "$u" >/dev/null 2>&1 || true
done
in_root systemctl set-default multi-user.target >/dev/null 2>&1
in_root passwd -l root >/dev/null
# A machine id of its own: an empty one would make every boot a first boot, where
# systemd-firstboot prompts on the console and the presets enable every unit again.
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$root/etc/machine-id"
echo >>"$root/etc/machine-id"
in_root systemctl mask systemd-firstboot.service >/dev/null 2>&1
in_root apt-get clean
rm -rf "$root/var/lib/apt/lists/"* "$root/var/log/"*.log "$root/debootstrap"

for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}"; done
mounted=()

kernel=$(ls "$root"/boot/vmlinuz-* | sort -V | tail -n 1)
cp "$kernel" "$work/vmlinuz"
cp "$root/boot/initrd.img-${kernel##*/vmlinuz-}" "$work/initrd"
# ext4 made from the folder (no loop device needed), sparse; qcow2 keeps only what is used.
truncate -s 12G "$work/root.raw"
mkfs.ext4 -q -L bx-vm-root -d "$root" "$work/root.raw"
qemu-img convert -O qcow2 "$work/root.raw" "$work/debian12.qcow2"
for f in debian12.qcow2 vmlinuz initrd; do mv -f "$work/$f" "$out/$f"; done
echo "$stamp" >"$out/stamp"
echo "build-image: $out/debian12.qcow2 built in $(( $(date +%s) - start )) s" \
  "($(du -h "$out/debian12.qcow2" | cut -f1), kernel ${kernel##*/vmlinuz-})"
