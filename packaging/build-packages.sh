#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# packaging/build-packages.sh OUTDIR: build boxmaker's Debian packages into OUTDIR.
#
# dpkg-buildpackage wants debian/ at the top of the source, and this tree keeps it in
# packaging/debian: so the build runs in OUTDIR/boxmaker-<version>/, a copy of the tree with
# packaging/debian placed as debian/.  The copy holds what git tracks plus new files git
# does not ignore (no build folders); outside a git checkout, everything but build*/ and
# obj-*/.  The packages (.deb, .changes, .buildinfo) land in OUTDIR, the log in
# OUTDIR/build.log.  Needs the Build-Depends of packaging/debian/control (dpkg-checkbuilddeps
# names any that is missing); no network, no root.
set -eu

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
version=$(dpkg-parsechangelog -l "$src/packaging/debian/changelog" -S Version)
tree=$out/boxmaker-${version%%-*}

rm -rf "$tree"
mkdir -p "$tree"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z --cached --others --exclude-standard \
     | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$tree"
else
  (cd "$src" && tar --exclude='./build*' --exclude='./obj-*' -cf - .) | tar -xf - -C "$tree"
fi
rm -rf "$tree/debian"
cp -a "$tree/packaging/debian" "$tree/debian"

if (cd "$tree" && DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
      dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1; then
  rm -rf "$tree"
  ls "$out"/*.deb
else
  echo "build-packages: dpkg-buildpackage failed; the end of $out/build.log:" >&2
  tail -n 40 "$out/build.log" >&2
  exit 1
fi
