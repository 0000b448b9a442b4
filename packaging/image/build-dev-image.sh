#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# build-dev-image.sh: builds boxmaker's development image offline, from the Debian packages
# installed on this host (no registry, no download), loads it into podman, and prints the
# reference to put in a grant's `image:` key.
#
#   build-dev-image.sh [--name NAME] [--extra-ca FILE] [--output-tar FILE] [--quiet]
#   build-dev-image.sh --rootfs DIR [--extra-ca FILE] [--quiet]
#
# --rootfs DIR puts the same files in the folder DIR instead, owned by root, replacing what
# DIR held, and prints DIR@sha256:<its content digest> to put in a grant's `rootfs:` key
# (bwrap.so); podman is not needed then, root is.
#
# The image holds git, python3, nodejs (Node.js, to run an MCP server written for it), make,
# gcc (with libc6-dev), curl and ca-certificates, with every package they depend on, and the
# essential tools a shell script expects (dash as /bin/sh, bash, coreutils, sed, grep,
# findutils, diffutils, tar, gzip, mawk): the files dpkg lists for each of them, without
# documentation, manuals and translations.  toolkit is not in it: podman.so mounts the
# installed toolkit read-only into any image a grant names.
# --extra-ca FILE also trusts the PEM certificates in FILE (the test suite's own CA).
#
# Needs: podman (root for --rootfs), and those packages installed (apt-get install git python3
# nodejs make gcc libc6-dev curl ca-certificates).
set -eu
umask 022

name=localhost/boxmaker-dev
out_tar=
extra_ca=
quiet=0
rootfs_dir=
here=$(cd "$(dirname "$0")" && pwd)

die () { echo "build-dev-image.sh: $*" >&2; exit 1; }
say () { [ "$quiet" = 1 ] || echo "$*" >&2; }

while [ $# -gt 0 ]; do
  case $1 in
    --name) name=$2; shift 2 ;;
    --output-tar) out_tar=$2; shift 2 ;;
    --extra-ca) extra_ca=$2; shift 2 ;;
    --rootfs) rootfs_dir=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

wanted="git python3 nodejs make gcc libc6-dev curl ca-certificates
        dash bash coreutils sed grep findutils diffutils tar gzip mawk"
if [ -n "$rootfs_dir" ]; then
  case $rootfs_dir in /*) ;; *) die "--rootfs needs an absolute path" ;; esac
  [ "$(id -u)" = 0 ] || die "--rootfs needs root: the folder must belong to root"
else
  command -v podman >/dev/null || die "podman is missing: apt-get install podman"
fi
command -v dpkg-query >/dev/null || die "dpkg-query is missing: this script reads Debian's package database"
missing=
for p in $wanted; do
  dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
    missing="$missing $p"
done
[ -z "$missing" ] || die "not installed:$missing (apt-get install$missing)"

start=$(date +%s.%N)
root=$(mktemp -d "${TMPDIR:-/tmp}/boxmaker-dev-image.XXXXXX")
list=$(mktemp "${TMPDIR:-/tmp}/boxmaker-dev-files.XXXXXX")
trap 'rm -rf "$root" "$list"' EXIT
chmod 0755 "$root"

# The packages: what is wanted and everything it depends on (Depends and Pre-Depends), each
# alternative taken as the first one installed, a virtual package as an installed provider.
packages=$(dpkg-query -W -f '${Package}\t${Status}\t${Provides}\t${Pre-Depends}, ${Depends}\n' |
  awk -F '\t' -v wanted="$wanted" '
    function bare(s) { sub(/^[ \t]+/, "", s); sub(/[ \t(:].*$/, "", s); return s }
    $2 == "install ok installed" {
      installed[$1] = 1; deps[$1] = $4
      n = split($3, prov, ",")
      for (i = 1; i <= n; i++) { p = bare(prov[i]); if (p != "" && !(p in provider)) provider[p] = $1 }
    }
    function resolve(name) {
      if (name in installed) return name
      if (name in provider) return provider[name]
      return ""
    }
    END {
      n = split(wanted, queue, /[ \t\n]+/); head = 1; tail = n
      while (head <= tail) {
        pkg = resolve(queue[head++])
        if (pkg == "" || (pkg in seen)) continue
        seen[pkg] = 1; print pkg
        m = split(deps[pkg], groups, ",")
        for (g = 1; g <= m; g++) {
          k = split(groups[g], alts, "|")
          for (a = 1; a <= k; a++) {
            r = resolve(bare(alts[a]))
            if (r != "") { queue[++tail] = r; break }
          }
        }
      }
    }')
count=$(printf '%s\n' "$packages" | wc -l)

# Their files, as dpkg lists them, at their real place: Debian 12 merged /bin, /sbin and
# /lib into /usr, while packages still list the old paths.
for p in $packages; do dpkg-query -L "$p"; done |
  sed -e 's,^/bin/,/usr/bin/,' -e 's,^/sbin/,/usr/sbin/,' -e 's,^/lib/,/usr/lib/,' \
      -e 's,^/lib64/,/usr/lib64/,' |
  grep -v -e '^/usr/share/doc/' -e '^/usr/share/man/' -e '^/usr/share/info/' \
          -e '^/usr/share/locale/' -e '^/usr/share/lintian/' -e '^/\.$' |
  sort -u | while read -r f; do
    # Only what is there and is not a folder (folders come with their files).
    if [ -L "$f" ] || { [ -e "$f" ] && [ ! -d "$f" ]; }; then printf '%s\n' "${f#/}"; fi
  done > "$list"
# The links update-alternatives made (awk, cc, ...) for the programs that are in.
for link in /usr/bin/* /usr/sbin/*; do
  [ -L "$link" ] || continue
  case $(readlink "$link") in /etc/alternatives/*) ;; *) continue ;; esac
  target=$(readlink -f "$link") || continue
  grep -qx "${target#/}" "$list" || continue
  printf '%s\n%s\n' "${link#/}" "etc/alternatives/$(basename "$(readlink "$link")")" >> "$list"
done
tar -C / --no-recursion -cf - -T "$list" | tar -C "$root" -xf -
for d in bin sbin lib lib64; do
  [ -e "$root/usr/$d" ] && ln -s "usr/$d" "$root/$d"
done

mkdir -p "$root/etc/ssl/certs" "$root/tmp" "$root/run" "$root/proc" "$root/sys" "$root/dev" \
         "$root/root" "$root/home"
# Root's alone, not 1777: every runtime mounts a tmpfs of the sandbox's own on /tmp, and
# a folder anyone may write would let anyone change the root's digest (a grant's root is
# refused then, docs/config.md).
chmod 0755 "$root/tmp"
cacerts=/etc/ssl/certs/ca-certificates.crt
[ -s "$cacerts" ] || die "$cacerts is missing: apt-get install ca-certificates"
rm -f "$root/etc/ssl/certs/ca-certificates.crt"
cp "$cacerts" "$root/etc/ssl/certs/ca-certificates.crt"
if [ -n "$extra_ca" ]; then
  grep -q 'BEGIN CERTIFICATE' "$extra_ca" || die "--extra-ca $extra_ca holds no PEM certificate"
  cat "$extra_ca" >> "$root/etc/ssl/certs/ca-certificates.crt"
fi
cp "$here/nsswitch.conf" "$root/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$root/etc/hosts"
printf 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' \
  > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
# git and pip read HOME; a fresh one each call is under /tmp.
if command -v ldconfig >/dev/null; then
  ldconfig -r "$root" 2>/dev/null || true
fi

if [ -n "$rootfs_dir" ]; then
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
  digest=$("$here/rootfs-digest.sh" "$rootfs_dir")
  end=$(date +%s.%N)
  say "wrote the root $rootfs_dir from $count Debian packages, $(du -sk "$rootfs_dir" | cut -f1) KiB," \
      "in $(awk "BEGIN { printf \"%.1f\", $end - $start }") s"
  say "name it in a grant (rootfs:, bwrap.so), pinned by its digest:"
  echo "$rootfs_dir@sha256:$digest"
  exit 0
fi

tar=$(mktemp "${TMPDIR:-/tmp}/boxmaker-dev-image.XXXXXX.tar")
trap 'rm -rf "$root" "$list" "$tar"' EXIT
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$tar" .
[ -z "$out_tar" ] || cp "$tar" "$out_tar"

tag=$(sha256sum "$tar" | cut -c1-12)
id=$(podman import --quiet --change 'WORKDIR /tmp' --change 'ENV HOME=/tmp' \
       --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
       --message "boxmaker development image" "$tar" "$name:$tag")
id=${id#sha256:}
podman tag "$id" "$name:latest" >/dev/null
digest=$(podman image inspect --format '{{.Digest}}' "$id")
ref="$name@$digest"
size=$(du -sk "$root" | cut -f1)
end=$(date +%s.%N)
say "built $name:$tag from $count Debian packages, ${size} KiB unpacked," \
    "in $(awk "BEGIN { printf \"%.1f\", $end - $start }") s"
say "name it in a grant (image:), pinned by its digest:"
echo "$ref"
