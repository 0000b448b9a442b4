#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# build-image.sh: builds boxmaker's tools image offline, from what apt installed on this
# host, loads it into podman, and prints the reference to put in brokerd's config
# (runtime.options.image).
#
#   build-image.sh [--toolkit PATH] [--name NAME] [--extra-ca FILE] [--output-tar FILE]
#                  [--quiet]
#   build-image.sh --rootfs DIR [--toolkit PATH] [--extra-ca FILE] [--add-host NAME:IP]...
#                  [--quiet]
#
# --rootfs DIR puts the same files in the folder DIR instead (bwrap.so's read-only root,
# option rootfs), owned by root, replacing what DIR held, and says its content digest (for
# option rootfs_digest); podman is not needed then, and /etc/resolv.conf names
# slirp4netns's resolver (10.0.2.3), which the egress proxy uses.
# --add-host NAME:IP adds a line to the root's /etc/hosts (podman's --add-host does this
# at run time for the image).
#
# --extra-ca FILE also trusts the PEM certificates in FILE (a private CA; the test suite
# uses it for its own HTTPS server).
#
# The image holds exactly:
#   /bin/busybox (busybox-static) and /bin/sh and its other applets as links to it
#   /bin/toolkit  (static; found next to this script's install, or given with --toolkit)
#   /bin/curl and every library it loads, with the dynamic loader
#   the NSS libraries a static toolkit's getaddrinfo loads, /etc/nsswitch.conf, /etc/hosts
#   /etc/ssl/certs/ca-certificates.crt (ca-certificates)
# /etc/resolv.conf and /etc/hosts are replaced by podman's own at run time.
#
# Needs: busybox-static, curl, ca-certificates; podman (root or rootless) for the image,
# root for --rootfs.
set -eu
# The image's files take their modes from here: a umask of 077 would close /bin and the
# libraries to a container user that is not root (rootless podman's --userns=keep-id).
umask 022

name=localhost/boxmaker-tools
toolkit=${BX_TOOLKIT:-}
out_tar=
rootfs_dir=
add_hosts=
extra_ca=
quiet=0
here=$(cd "$(dirname "$0")" && pwd)

die () { echo "build-image.sh: $*" >&2; exit 1; }
say () { [ "$quiet" = 1 ] || echo "$*" >&2; }

while [ $# -gt 0 ]; do
  case $1 in
    --toolkit) toolkit=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --output-tar) out_tar=$2; shift 2 ;;
    --rootfs) rootfs_dir=$2; shift 2 ;;
    --add-host) add_hosts="$add_hosts $2"; shift 2 ;;
    --extra-ca) extra_ca=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

if [ -z "$toolkit" ]; then
  # Installed: <prefix>/share/boxmaker/image/build-image.sh and
  # <prefix>/libexec/boxmaker/toolkit.
  for candidate in "$here/../../../libexec/boxmaker/toolkit" /usr/libexec/boxmaker/toolkit \
                   /usr/lib/boxmaker/toolkit; do
    if [ -x "$candidate" ]; then toolkit=$candidate; break; fi
  done
fi
[ -n "$toolkit" ] && [ -x "$toolkit" ] || die "no toolkit program: pass --toolkit PATH"

busybox=/bin/busybox
[ -x "$busybox" ] || die "$busybox is missing: apt-get install busybox-static"
case $(ldd "$busybox" 2>&1 || true) in
  *"not a dynamic executable"*|*"statically linked"*) ;;
  *) die "$busybox is not static: apt-get install busybox-static" ;;
esac
curl=$(command -v curl) || die "curl is missing: apt-get install curl"
curl=$(readlink -f "$curl")
cacerts=/etc/ssl/certs/ca-certificates.crt
[ -s "$cacerts" ] || die "$cacerts is missing: apt-get install ca-certificates"
if [ -n "$rootfs_dir" ]; then
  case $rootfs_dir in /*) ;; *) die "--rootfs needs an absolute path" ;; esac
  [ "$(id -u)" = 0 ] || die "--rootfs needs root: the folder must belong to root"
else
  command -v podman >/dev/null || die "podman is missing: apt-get install podman"
fi

start=$(date +%s.%N)
root=$(mktemp -d "${TMPDIR:-/tmp}/boxmaker-image.XXXXXX")
trap 'rm -rf "$root"' EXIT

mkdir -p "$root/bin" "$root/etc/ssl/certs" "$root/tmp" "$root/run/egress" "$root/proc" \
         "$root/sys" "$root/dev" "$root/root"
# Root's alone, not 1777: every runtime mounts a tmpfs of the sandbox's own on /tmp, and
# a folder anyone may write would let anyone change the root's digest (a grant's root is
# refused then, docs/config.md).
chmod 0755 "$root/tmp"
# mktemp -d makes the folder 0700, and it becomes the image's /: a container whose process
# is not root (rootless podman's --userns=keep-id) could not even reach /bin/toolkit.
chmod 0755 "$root"

cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
  case $applet in busybox|curl|toolkit) continue ;; esac
  [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
cp "$toolkit" "$root/bin/toolkit"
cp "$curl" "$root/bin/curl"
chmod 0755 "$root/bin/toolkit" "$root/bin/curl"

# Copies a file to the same path inside the image, as a real file (Debian's /lib is a
# link to /usr/lib; the image keeps the path the loader and ldd name).
copy_in () {
  mkdir -p "$root$(dirname "$1")"
  cp -L "$1" "$root$1"
}

# Every library curl (and toolkit, when it is not static, as in sanitizer builds) loads:
# ldd already lists the whole closure, loader included.
for program in "$curl" "$toolkit"; do
  ldd "$program" 2>/dev/null | while read -r first second third _; do
    case $first in
      /*) copy_in "$first" ;;                    # the loader: /lib64/ld-linux-x86-64.so.2
      *) case $third in /*) copy_in "$third" ;; esac ;;   # libfoo.so => /path (addr)
    esac
  done
done

# The NSS modules glibc's getaddrinfo dlopens, from libc's own folder.
libc=$(ldd "$curl" | awk '$1 ~ /^libc\.so/ { print $3 }')
libdir=$(dirname "$libc")
for lib in libnss_files.so.2 libnss_dns.so.2 libresolv.so.2; do
  [ -e "$libdir/$lib" ] && copy_in "$libdir/$lib"
done

cp "$here/nsswitch.conf" "$root/etc/nsswitch.conf"
cp "$cacerts" "$root/etc/ssl/certs/ca-certificates.crt"
if [ -n "$extra_ca" ]; then
  grep -q 'BEGIN CERTIFICATE' "$extra_ca" || die "--extra-ca $extra_ca holds no PEM certificate"
  cat "$extra_ca" >> "$root/etc/ssl/certs/ca-certificates.crt"
fi
printf '127.0.0.1 localhost\n::1 localhost\n' > "$root/etc/hosts"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' \
  > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"

# So the loader finds libraries wherever Debian put them, without an ld.so.cache.
echo "$libdir" > "$root/etc/ld.so.conf"
if command -v ldconfig >/dev/null; then
  ldconfig -r "$root" 2>/dev/null || true
fi

if [ -n "$rootfs_dir" ]; then
  echo "nameserver 10.0.2.3" > "$root/etc/resolv.conf"
  for entry in $add_hosts; do
    case $entry in *:*) ;; *) die "--add-host $entry: expected NAME:IP" ;; esac
    printf '%s %s\n' "${entry#*:}" "${entry%%:*}" >> "$root/etc/hosts"
  done
  # Built beside DIR and moved into place, so a running brokerd never sees half a root.
  mkdir -p "$(dirname "$rootfs_dir")"
  new=$(mktemp -d "$rootfs_dir.new.XXXXXX")
  cp -a "$root/." "$new/"
  chown -R 0:0 "$new"
  chmod 0755 "$new"
  old="$rootfs_dir.old.$$"
  [ ! -e "$rootfs_dir" ] || mv "$rootfs_dir" "$old"
  mv "$new" "$rootfs_dir"
  rm -rf "$old"
  # The content digest bwrap.so checks against its option rootfs_digest.
  digest=$("$here/rootfs-digest.sh" "$rootfs_dir")
  say "built the read-only root $rootfs_dir ($(du -sk "$rootfs_dir" | cut -f1) KiB)"
  say "to pin it, put this in brokerd's config, under runtime.options:"
  say ""
  say "    rootfs_digest: sha256:$digest"
  say ""
  echo "$rootfs_dir"
  exit 0
fi

tar=$(mktemp "${TMPDIR:-/tmp}/boxmaker-image.XXXXXX.tar")
trap 'rm -rf "$root" "$tar"' EXIT
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$tar" .
[ -z "$out_tar" ] || cp "$tar" "$out_tar"

tag=$(sha256sum "$tar" | cut -c1-12)
set -- --change 'CMD ["/bin/toolkit"]' --change 'WORKDIR /tmp'
# A sanitizer build's toolkit: LeakSanitizer stops the world with ptrace when the program
# exits, which the sandboxes' seccomp filter refuses, and then ends the program with status 1,
# a refusal to brokerd.  Its leaks are looked for where the tests run it on the host.
if grep -aq __asan_init "$toolkit"; then
  set -- "$@" --change 'ENV ASAN_OPTIONS=detect_leaks=0'
fi
id=$(podman import --quiet "$@" --message "boxmaker tools image" "$tar" "$name:$tag")
id=${id#sha256:}
# Also :latest, for configs that name the image by tag (the digest below is the safer name).
podman tag "$id" "$name:latest" >/dev/null
# By digest, as the config should name it: a tag can be moved, a digest cannot.
digest=$(podman image inspect --format '{{.Digest}}' "$id")
ref="$name@$digest"
size=$(du -sk "$root" | cut -f1)
end=$(date +%s.%N)
say "built $name:$tag (image ${id%"${id#????????????}"}), ${size} KiB unpacked," \
    "in $(awk "BEGIN { printf \"%.1f\", $end - $start }") s"
say "put this in brokerd's config, under runtime.options:"
say ""
say "    image: $ref"
say ""
echo "$ref"
