#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# packaging/test-packages.sh: build the Debian packages, install them, check them as an
# installed user would, and remove them again.
#
# Run as root on a Debian 12 machine: it installs and removes packages (purging any
# boxmaker packages already installed first), and for the rootless check it gives the
# service user subordinate ids and takes them back.
#
#   packaging/test-packages.sh [--keep] [--copy-to DIR]
#
# --keep leaves the built packages in the work folder (printed) instead of deleting it;
# --copy-to DIR copies the built .deb files into DIR (made if missing) once they are built;
# BX_VERBOSE=1 also prints what the passing checks printed.
# Every check prints one PASS, FAIL or SKIP line (a SKIP says why); the exit status is 1 when
# any check failed, 0 otherwise.
#
# What it needs from apt: the package build's Build-Depends, dpkg-dev, lintian, man-db,
# systemd (systemd-analyze), procps, and gcc/pkgconf for the out-of-tree module.  Missing ones are installed first (the Debian
# archive only).  The packages' own dependencies (podman, runc, slirp4netns, uidmap,
# busybox-static, curl, ca-certificates, systemd) come with `apt-get install ./…deb`.
set -u

NEEDED_PACKAGES="build-essential dpkg-dev debhelper cmake pkgconf libjansson-dev libyaml-dev libmicrohttpd-dev
scdoc lintian man-db systemd procps"

SRC=$(cd "$(dirname "$0")/.." && pwd)
KEEP=0
COPY_TO=
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) KEEP=1; shift ;;
    --copy-to) [ $# -ge 2 ] || { echo "usage: $0 [--keep] [--copy-to DIR]" >&2; exit 2; }
      COPY_TO=$2; shift 2 ;;
    *) echo "usage: $0 [--keep] [--copy-to DIR]" >&2; exit 2 ;;
  esac
done

FAILURES=0
pass () { echo "PASS: $*"; }
fail () { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
skip () { echo "SKIP: $*"; }
# check NAME COMMAND...: PASS when COMMAND succeeds; otherwise FAIL with its output.
check () {
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then
    pass "$name"
    [ -z "${BX_VERBOSE:-}" ] || printf '%s\n' "$out" | sed 's/^/    /' | tail -n 30
  else
    fail "$name"
    printf '%s\n' "$out" | sed 's/^/    /' | tail -n 30
  fi
}
finish () {
  echo
  if [ "$FAILURES" -eq 0 ]; then
    echo "test-packages: all checks passed"
    exit 0
  fi
  echo "test-packages: $FAILURES check(s) failed"
  exit 1
}

if [ "$(id -u)" -ne 0 ]; then
  echo "FAIL: test-packages.sh installs packages: run it as root"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
MISSING=
for p in $NEEDED_PACKAGES; do
  dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' \
    || MISSING="$MISSING $p"
done
if [ -n "$MISSING" ]; then
  echo "installing:$MISSING"
  apt-get install -y --no-install-recommends $MISSING >/dev/null \
    || { echo "FAIL: apt-get install$MISSING"; exit 1; }
fi

ARCH=$(dpkg-architecture -qDEB_HOST_ARCH)
TRIPLET=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
RUNTIMEDIR=/usr/lib/$TRIPLET/boxmaker/runtimes
PACKAGES="boxmaker boxmaker-tools boxmaker-runtime-podman boxmaker-runtime-bwrap boxmaker-runtime-gvisor boxmaker-dev libboxmaker-client0 libboxmaker-client-dev"

WORK=$(mktemp -d /tmp/boxmaker-packages.XXXXXX)
chmod 755 "$WORK"
ROOTLESS=
cleanup () {
  [ -z "$ROOTLESS" ] || rm -rf "$ROOTLESS"
  if [ "$KEEP" -eq 1 ]; then
    echo "packages kept in $WORK"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

# Leftovers of an earlier run would hide what this one installs.
for p in $PACKAGES; do
  if dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -qv '^unknown ok not-installed'; then
    apt-get purge -y $PACKAGES >/dev/null 2>&1
    break
  fi
done

# ---- Build ------------------------------------------------------------------------------
echo "building the packages (log: $WORK/build.log)"
start=$(date +%s)
if out=$("$SRC/packaging/build-packages.sh" "$WORK" 2>&1); then
  pass "dpkg-buildpackage -b -us -uc ($(($(date +%s) - start)) s)"
else
  fail "dpkg-buildpackage -b -us -uc"
  printf '%s\n' "$out" | sed 's/^/    /'
  finish
fi

if [ -n "$COPY_TO" ]; then
  mkdir -p "$COPY_TO" && cp "$WORK"/*.deb "$COPY_TO"/ || fail "copy the packages to $COPY_TO"
fi

CHANGES=$(ls "$WORK"/boxmaker_*_"$ARCH".changes)
DEBS=
for p in $PACKAGES; do
  deb=$(ls "$WORK"/"$p"_*_"$ARCH".deb 2>/dev/null | head -n 1)
  if [ -z "$deb" ]; then
    fail "package $p was built"
    finish
  fi
  DEBS="$DEBS $deb"
done
pass "built:$(for d in $DEBS; do printf ' %s' "$(basename "$d")"; done)"

# What each package must hold, and what none may.
contents () { dpkg-deb -c "$1" | awk '{print $6}' | sed 's#^\./#/#'; }
has_files () {
  local deb=$1 f
  shift
  for f in "$@"; do
    contents "$deb" | grep -qx -- "$f" || { echo "missing $f"; return 1; }
  done
}
DEB_DAEMON=$(ls "$WORK"/boxmaker_*_"$ARCH".deb)
DEB_TOOLS=$(ls "$WORK"/boxmaker-tools_*_"$ARCH".deb)
DEB_PODMAN=$(ls "$WORK"/boxmaker-runtime-podman_*_"$ARCH".deb)
DEB_BWRAP=$(ls "$WORK"/boxmaker-runtime-bwrap_*_"$ARCH".deb)
DEB_GVISOR=$(ls "$WORK"/boxmaker-runtime-gvisor_*_"$ARCH".deb)
DEB_DEV=$(ls "$WORK"/boxmaker-dev_*_"$ARCH".deb)
DEB_CLIENT=$(ls "$WORK"/libboxmaker-client0_*_"$ARCH".deb)
DEB_CLIENT_DEV=$(ls "$WORK"/libboxmaker-client-dev_*_"$ARCH".deb)
check "boxmaker holds brokerd, the CLI, refusing.so, the config, the units, man pages" \
  has_files "$DEB_DAEMON" /usr/sbin/brokerd /usr/bin/boxmaker "$RUNTIMEDIR/refusing.so" \
  /usr/share/doc/boxmaker/examples/brokerd.yaml \
  /etc/boxmaker/brokerd.yaml /lib/systemd/system/brokerd.service \
  /lib/systemd/system/boxmaker-mcp.service \
  /usr/lib/sysusers.d/boxmaker.conf /usr/lib/tmpfiles.d/boxmaker.conf \
  /usr/share/man/man8/brokerd.8.gz /usr/share/man/man1/boxmaker.1.gz \
  /usr/share/man/man1/boxmaker-mcp.1.gz /usr/share/man/man5/brokerd.yaml.5.gz
check "boxmaker-tools holds toolkit and the image build" \
  has_files "$DEB_TOOLS" /usr/libexec/boxmaker/toolkit /usr/share/boxmaker/image/build-image.sh
check "boxmaker-runtime-podman holds podman.so and its seccomp profile" \
  has_files "$DEB_PODMAN" "$RUNTIMEDIR/podman.so" "$RUNTIMEDIR/podman-seccomp.json" \
    "$RUNTIMEDIR/podman-ucounts"
check "boxmaker-runtime-podman ships the rootful and rootless drop-ins as examples" \
  has_files "$DEB_PODMAN" /usr/share/doc/boxmaker-runtime-podman/examples/brokerd-rootful.conf \
  /usr/share/doc/boxmaker-runtime-podman/examples/brokerd-rootless.conf
check "boxmaker-runtime-bwrap holds bwrap.so and ships its drop-in as an example" \
  has_files "$DEB_BWRAP" "$RUNTIMEDIR/bwrap.so" /usr/share/doc/boxmaker-runtime-bwrap/examples/brokerd-bwrap.conf
check "boxmaker-runtime-gvisor holds gvisor.so and ships its drop-in as an example" \
  has_files "$DEB_GVISOR" "$RUNTIMEDIR/gvisor.so" /usr/share/doc/boxmaker-runtime-gvisor/examples/brokerd-gvisor.conf
check "libboxmaker-client0 holds libboxmaker-client.so.0" \
  has_files "$DEB_CLIENT" "/usr/lib/$TRIPLET/libboxmaker-client.so.0" \
  "/usr/lib/$TRIPLET/libboxmaker-client.so.0.1.0"
check "libboxmaker-client0 has a symbols file and a shlibs file" \
  sh -c "dpkg-deb --ctrl-tarfile '$DEB_CLIENT' | tar -tf - | grep -qx ./symbols && dpkg-deb --ctrl-tarfile '$DEB_CLIENT' | tar -tf - | grep -qx ./shlibs"
check "libboxmaker-client-dev holds client.h, boxmaker-client.pc and the .so link" \
  has_files "$DEB_CLIENT_DEV" /usr/include/boxmaker/client.h \
  "/usr/lib/$TRIPLET/pkgconfig/boxmaker-client.pc" "/usr/lib/$TRIPLET/libboxmaker-client.so"
check "boxmaker-dev holds runtime.h, boxmaker-runtime.pc, boxmaker-runtime(7), the kit, the walk-through" \
  has_files "$DEB_DEV" /usr/include/boxmaker/runtime.h \
  "/usr/lib/$TRIPLET/pkgconfig/boxmaker-runtime.pc" /usr/share/man/man7/boxmaker-runtime.7.gz \
  /usr/bin/boxmaker-runtime-check /usr/share/man/man1/boxmaker-runtime-check.1.gz \
  /usr/share/doc/boxmaker-dev/writing-a-runtime.md \
  /usr/share/doc/boxmaker-dev/examples/echo-runtime.c /usr/share/doc/boxmaker-dev/examples/Makefile
no_test_pieces () {
  local deb
  for deb in "$WORK"/*.deb; do
    if contents "$deb" | grep -E 'fake|/tests?/'; then
      echo "in $(basename "$deb")"
      return 1
    fi
  done
}
check "no package carries fake.so or another test-only piece" no_test_pieces
check "/etc/boxmaker/brokerd.yaml is a conffile" \
  sh -c "dpkg-deb --ctrl-tarfile '$DEB_DAEMON' | tar -xOf - ./conffiles | grep -qx /etc/boxmaker/brokerd.yaml"

# ---- lintian ----------------------------------------------------------------------------
# Errors fail; warnings are printed (packaging/debian/README explains the ones left).
# lintian advises against running as root: run it as nobody when possible.
LINTIAN="lintian"
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
  LINTIAN="setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=$WORK lintian"
fi
lintian_out=$(cd "$WORK" && $LINTIAN --fail-on error --tag-display-limit 0 "$CHANGES" 2>&1)
lintian_rc=$?
if [ $lintian_rc -eq 0 ]; then
  pass "lintian: no errors ($(printf '%s\n' "$lintian_out" | grep -c '^W:') warnings)"
else
  fail "lintian reports errors"
fi
printf '%s\n' "$lintian_out" | grep -E '^[EW]:' | sed 's/^/    /'

# Every file on the machine whose name says boxmaker or brokerd, but for dpkg's own records
# of a removed package, this script's work folder, and what was there before the install
# (a developer's machine may hold a `cmake --install` of its own).
all_named () {
  find /etc /usr /var /opt /srv /run \( -path /var/lib/dpkg/info -o -path /var/tmp \
       -o -path /var/cache -o -path "$WORK" -o -path "$SRC" \) -prune \
       -o \( -name '*boxmaker*' -o -name '*brokerd*' \) -print 2>/dev/null
  [ -e /lib/systemd/system/brokerd.service ] && echo /lib/systemd/system/brokerd.service
  return 0
}
leftovers () { all_named | grep -vxF -f "$WORK/baseline" || true; }
all_named | sort > "$WORK/baseline"
[ -s "$WORK/baseline" ] && sed 's/^/NOTE: there before the install, not checked: /' "$WORK/baseline"

# ---- Install ----------------------------------------------------------------------------
if apt-get install -y $DEBS >"$WORK/install.log" 2>&1; then
  pass "apt-get install ./boxmaker*.deb"
else
  fail "apt-get install ./boxmaker*.deb"
  tail -n 30 "$WORK/install.log" | sed 's/^/    /'
  finish
fi

# ---- As an installed user would ---------------------------------------------------------
check "the service user boxmaker exists (sysusers)" getent passwd boxmaker
check "ids 700000000-700065535 are reserved for boxmaker in /etc/subuid and /etc/subgid" \
  sh -c "grep -qx boxmaker:700000000:65536 /etc/subuid && grep -qx boxmaker:700000000:65536 /etc/subgid"
owned_by_boxmaker () { [ -d "$1" ] && [ "$(stat -c %U:%G "$1")" = boxmaker:boxmaker ]; }
check "/run/boxmaker, /var/lib/boxmaker and /var/log/boxmaker exist, owned by boxmaker (tmpfiles)" \
  sh -c "$(declare -f owned_by_boxmaker); owned_by_boxmaker /run/boxmaker && owned_by_boxmaker /var/lib/boxmaker && owned_by_boxmaker /var/log/boxmaker"
check "/usr/sbin/brokerd --check-config /etc/boxmaker/brokerd.yaml passes (root)" \
  /usr/sbin/brokerd --check-config /etc/boxmaker/brokerd.yaml
check "/usr/sbin/brokerd --check-config /etc/boxmaker/brokerd.yaml passes (as the service user)" \
  setpriv --reuid=boxmaker --regid=boxmaker --init-groups \
  /usr/sbin/brokerd --check-config /etc/boxmaker/brokerd.yaml

# The commented example with every key, shipped as documentation, is valid as installed
# (it names the podman runtime).  Docker's Debian images drop /usr/share/doc.
EXAMPLE=/usr/share/doc/boxmaker/examples/brokerd.yaml
if [ -f "$EXAMPLE" ]; then
  check "/usr/sbin/brokerd --check-config $EXAMPLE passes" /usr/sbin/brokerd --check-config "$EXAMPLE"
else
  skip "/usr/sbin/brokerd --check-config $EXAMPLE: dpkg on this machine excludes /usr/share/doc"
fi

# The unit as installed, with the real programs and man pages in place.
if command -v systemd-analyze >/dev/null; then
  check "systemd-analyze verify brokerd.service" \
    systemd-analyze verify --man=no /lib/systemd/system/brokerd.service
  check "systemd-analyze verify boxmaker-mcp.service" \
    systemd-analyze verify --man=no /lib/systemd/system/boxmaker-mcp.service
else
  skip "systemd-analyze verify: systemd-analyze is not installed"
fi
echo "NOTE: systemd is not PID 1 here, so the service is not started; brokerd is run by hand below"
check "brokerd.service is enabled at install, boxmaker-mcp.service is not" \
  sh -c "[ -L /etc/systemd/system/multi-user.target.wants/brokerd.service ] && [ ! -e /etc/systemd/system/multi-user.target.wants/boxmaker-mcp.service ]"

# Man pages.  Docker's Debian images tell dpkg to drop /usr/share/man: then read the pages
# from the package itself and say so.
man_renders () {
  local page=$1 section=$2 out
  out=$(MANWIDTH=80 man -P cat "$section" "$page" 2>&1) || { echo "$out"; return 1; }
  printf '%s\n' "$out" | grep -q "^NAME" || { echo "$out" | head; return 1; }
}
man_renders_from_deb () {
  local deb=$1 file=$2 tmp
  tmp=$(mktemp -d)
  dpkg-deb -x "$deb" "$tmp"
  MANWIDTH=80 man -P cat -l "$tmp$file" 2>&1 | grep -q "^NAME"
  local rc=$?
  rm -rf "$tmp"
  return $rc
}
if [ -f /usr/share/man/man8/brokerd.8.gz ]; then
  check "man brokerd renders" man_renders brokerd 8
  check "man 1 boxmaker renders" man_renders boxmaker 1
  check "man 1 boxmaker-mcp renders" man_renders boxmaker-mcp 1
  check "man brokerd.yaml renders" man_renders brokerd.yaml 5
  check "man boxmaker-runtime renders" man_renders boxmaker-runtime 7
  check "man boxmaker-runtime-check renders" man_renders boxmaker-runtime-check 1
else
  skip "man brokerd: dpkg on this machine excludes /usr/share/man (path-exclude in /etc/dpkg/dpkg.cfg.d); the pages are read from the packages instead"
  check "brokerd(8) renders from the package" man_renders_from_deb "$DEB_DAEMON" /usr/share/man/man8/brokerd.8.gz
  check "boxmaker(1) renders from the package" man_renders_from_deb "$DEB_DAEMON" /usr/share/man/man1/boxmaker.1.gz
  check "boxmaker-mcp(1) renders from the package" man_renders_from_deb "$DEB_DAEMON" /usr/share/man/man1/boxmaker-mcp.1.gz
  check "brokerd.yaml(5) renders from the package" man_renders_from_deb "$DEB_DAEMON" /usr/share/man/man5/brokerd.yaml.5.gz
  check "boxmaker-runtime(7) renders from the package" man_renders_from_deb "$DEB_DEV" /usr/share/man/man7/boxmaker-runtime.7.gz
  check "boxmaker-runtime-check(1) renders from the package" man_renders_from_deb "$DEB_DEV" /usr/share/man/man1/boxmaker-runtime-check.1.gz
fi

# brokerd serves with the shipped config's runtime (refusing) on a socket of our own, and
# the CLI reaches it: no grant, so a call is denied (exit 1); SIGTERM stops it cleanly.
SERVE=$WORK/serve
mkdir -p "$SERVE"
cat >"$SERVE/brokerd.yaml" <<EOF
socket: $SERVE/broker.sock
home: $SERVE/home
runtime:
  module: refusing
grants: []
EOF
mkdir -p "$SERVE/home"
serve_and_call () {
  /usr/sbin/brokerd --config "$SERVE/brokerd.yaml" >"$SERVE/brokerd.log" 2>&1 &
  local pid=$! i rc out
  for i in $(seq 50); do [ -S "$SERVE/broker.sock" ] && break; sleep 0.1; done
  out=$(/usr/bin/boxmaker call read_file '{"path":"/etc/hostname"}' --socket "$SERVE/broker.sock" 2>&1)
  rc=$?
  kill -TERM $pid
  wait $pid
  local brc=$?
  echo "boxmaker call: exit $rc: $out"
  echo "brokerd: exit $brc"; cat "$SERVE/brokerd.log"
  [ $rc -eq 1 ] && [ $brc -eq 0 ] && [ ! -e "$SERVE/broker.sock" ]
}
check "installed brokerd serves; /usr/bin/boxmaker call is denied without a grant; SIGTERM exits 0" \
  serve_and_call

# An out-of-tree module, built with nothing but the installed -dev package, loads from
# runtimedir.
MODULE=$WORK/module
# Only the system's pkg-config folders: a boxmaker-runtime.pc a developer installed under
# /usr/local must not stand in for the package's.  Likewise the programs are called by
# their installed paths throughout, never through PATH.
export PKG_CONFIG_LIBDIR=/usr/lib/$TRIPLET/pkgconfig:/usr/lib/pkgconfig:/usr/share/pkgconfig
mkdir -p "$MODULE"
# The example as the package installs it, with its Makefile: nothing from the source tree.
EXAMPLES=/usr/share/doc/boxmaker-dev/examples
if [ ! -f "$EXAMPLES/echo-runtime.c" ] || [ ! -f "$EXAMPLES/Makefile" ]; then
  fail "boxmaker-dev installs the echo example and its Makefile in $EXAMPLES"
else
  cp "$EXAMPLES/echo-runtime.c" "$EXAMPLES/Makefile" "$MODULE/"
  check "the installed example uses BX_RUNTIME_DEFINE, spec limits and the cancel descriptor" \
    sh -c "grep -q '^BX_RUNTIME_DEFINE' '$MODULE/echo-runtime.c' && grep -q 'spec_limit' '$MODULE/echo-runtime.c' && grep -q 'spec_cancel_fd' '$MODULE/echo-runtime.c'"
  check "pkg-config --variable=runtimedir boxmaker-runtime is $RUNTIMEDIR" \
    test "$(pkg-config --variable=runtimedir boxmaker-runtime)" = "$RUNTIMEDIR"
  check "pkg-config --variable=abi_version boxmaker-runtime is 1.4" \
    test "$(pkg-config --variable=abi_version boxmaker-runtime)" = "1.4"
  check "the installed Makefile builds echo.so with only pkg-config --cflags boxmaker-runtime" \
    make -s -C "$MODULE" echo.so
  check "the installed boxmaker-runtime-check reports echo.so as not a sandbox (make check)" \
    sh -c "make -s -C '$MODULE' check | grep -q '^conformance: not a sandbox: .*; no check of the contract ran$'"
  if [ -f "$MODULE/echo.so" ]; then
    install -m 644 "$MODULE/echo.so" "$(pkg-config --variable=runtimedir boxmaker-runtime)/"
    mkdir -p "$MODULE/granted" "$MODULE/slow" "$MODULE/home"
    cat >"$MODULE/brokerd.yaml" <<EOF
socket: $MODULE/broker.sock
home: $MODULE/home
audit: $MODULE/audit.log
runtime:
  module: echo
  options:
    wait: 5s
grants:
  - tools: [read_file]
    paths: [$MODULE/granted]
    class: private
    limits: {output: 20}
  - tools: [shell]
    paths: [$MODULE/slow]
  - tools: [shell]
    paths: [$MODULE/granted]
    limits: {time: 300ms}
EOF
    check "/usr/sbin/brokerd --check-config loads echo.so (ABI 1.4) from runtimedir by name" \
      sh -c "/usr/sbin/brokerd --check-config '$MODULE/brokerd.yaml' | grep -F 'runtime: echo ($RUNTIMEDIR/echo.so, ABI 1.4)'"
    echo_call () {
      /usr/sbin/brokerd --config "$MODULE/brokerd.yaml" >"$MODULE/brokerd.log" 2>&1 &
      local pid=$! i rc out rc2 out2 t0 t1
      for i in $(seq 50); do [ -S "$MODULE/broker.sock" ] && break; sleep 0.1; done
      # The grant's output limit reaches the module through the spec: 20 bytes, truncated.
      out=$(/usr/bin/boxmaker call read_file "{\"path\":\"$MODULE/granted/notes.txt\"}" \
              --socket "$MODULE/broker.sock" 2>&1)
      rc=$?
      # The grant's time limit ends a shell call that would wait 5 s.
      out2=$(/usr/bin/boxmaker call shell "{\"command\":\"true\",\"cwd\":\"$MODULE/granted\"}" \
               --socket "$MODULE/broker.sock" 2>&1)
      rc2=$?
      # A client killed after 1 s cancels its call: the audit line says so at once.
      t0=$(date +%s%N)
      timeout -s KILL 1 /usr/bin/boxmaker call shell \
        "{\"command\":\"true\",\"cwd\":\"$MODULE/slow\"}" \
        --socket "$MODULE/broker.sock" >/dev/null 2>&1
      for i in $(seq 40); do grep -q '"outcome":"cancelled"' "$MODULE/audit.log" && break; sleep 0.05; done
      t1=$(date +%s%N)
      kill -TERM $pid
      wait $pid
      echo "read_file: exit $rc: $out"
      echo "shell past its time limit: exit $rc2: $out2"
      echo "the cancelled call was logged $(( (t1 - t0) / 1000000 )) ms after its client started"
      cat "$MODULE/brokerd.log" "$MODULE/audit.log"
      [ $rc -eq 0 ] && printf '%s' "$out" | grep -q "echo: read_file" \
        && ! printf '%s' "$out" | grep -qF "$MODULE/granted" \
        && printf '%s' "$out2" | grep -q "the tool ran past its time limit" \
        && grep -q '"outcome":"cancelled"' "$MODULE/audit.log" \
        && [ $(( (t1 - t0) / 1000000 )) -lt 2500 ]
    }
    check "brokerd runs calls through the installed echo.so: the grant's output cap and time limit apply, a client that leaves cancels" \
      echo_call
    rm -f "$RUNTIMEDIR/echo.so"
  fi
fi

# docs/client.md's program, built with nothing but the installed libboxmaker-client-dev.
CLIENT=$WORK/client
mkdir -p "$CLIENT"
sed -n '/^<!-- program: ask.c -->$/,/^```$/p' "$SRC/docs/client.md" | sed '1,2d;$d' > "$CLIENT/ask.c"
check "docs/client.md's ask.c builds with only pkg-config --cflags --libs boxmaker-client" \
  sh -c "cd '$CLIENT' && cc -Wall -Wextra -Werror ask.c \$(pkg-config --cflags --libs boxmaker-client) -o ask"
ask_unavailable () {
  local out rc
  out=$("$CLIENT/ask" "$CLIENT/nobody.sock" /x 2>&1)
  rc=$?
  echo "$out"
  [ $rc -eq 3 ] && printf '%s\n' "$out" | grep -qx "failed: the tool broker is unavailable (unavailable)"
}
check "ask runs on the installed libboxmaker-client.so.0 (no broker: exit 3)" ask_unavailable

# The podman runtime as installed: build the tools image with the installed build-image.sh
# and toolkit, then run a call through brokerd, podman.so and a real container.  Podman
# as root on this kind of host needs runc and explicit ulimits (the config's example says
# so too).  When podman cannot run containers here this says why and skips (a failure with
# BX_REQUIRE_PODMAN=1).
PODMAN=$WORK/podman
mkdir -p "$PODMAN/granted"
echo "hello from the host" > "$PODMAN/granted/notes.txt"
podman_unusable () {
  if [ "${BX_REQUIRE_PODMAN:-0}" = 1 ]; then
    fail "podman runtime end to end: $*"
  else
    skip "podman runtime end to end: $*"
  fi
}
IMAGE=
# A name of its own, so the test never retags an image someone's config names.
IMAGE_NAME=localhost/boxmaker-tools-pkgtest
if ! command -v podman >/dev/null; then
  podman_unusable "podman is not installed"
elif ! IMAGE=$(/usr/share/boxmaker/image/build-image.sh --quiet --name "$IMAGE_NAME" \
                2>"$PODMAN/build-image.log"); then
  podman_unusable "the installed build-image.sh failed: $(tail -n 3 "$PODMAN/build-image.log")"
  IMAGE=
else
  IMAGE=$(printf '%s\n' "$IMAGE" | tail -n 1)
  pass "the installed build-image.sh builds the tools image from the installed toolkit"
  cat >"$PODMAN/brokerd.yaml" <<EOF
socket: $PODMAN/broker.sock
home: $PODMAN/home
runtime:
  module: podman
  options:
    image: $IMAGE
    global_options: ["--runtime", "runc"]
    run_options: ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024", "--pull=never"]
grants:
  - tools: [read_file]
    paths: [$PODMAN/granted]
    class: private
EOF
  mkdir -p "$PODMAN/home"
  check "/usr/sbin/brokerd --check-config loads the installed podman.so" \
    sh -c "/usr/sbin/brokerd --check-config '$PODMAN/brokerd.yaml' | grep -F 'runtime: podman ($RUNTIMEDIR/podman.so'"
  podman_call () {
    /usr/sbin/brokerd --config "$PODMAN/brokerd.yaml" >"$PODMAN/brokerd.log" 2>&1 &
    local pid=$! i rc out
    for i in $(seq 50); do [ -S "$PODMAN/broker.sock" ] && break; sleep 0.1; done
    out=$(/usr/bin/boxmaker call read_file "{\"path\":\"$PODMAN/granted/notes.txt\"}" \
            --socket "$PODMAN/broker.sock" --timeout-ms 60000 2>&1)
    rc=$?
    kill -TERM $pid
    wait $pid
    echo "boxmaker call: exit $rc: $out"
    cat "$PODMAN/brokerd.log"
    [ $rc -eq 0 ] && printf '%s' "$out" | grep -q "hello from the host"
  }
  check "a read_file call runs in a podman container through the installed packages" podman_call
  # The rootful drop-in's way: RestrictSUIDSGID=yes (with the NoNewPrivileges it implies),
  # rebuilt with tests/packaging/restrict-suid.c since systemd is not PID 1 here.  A call
  # still runs, and a sandboxed chmod 4755 in the writable grant is refused.
  rootful_dropin () {
    local dropin=/usr/share/doc/boxmaker-runtime-podman/examples/brokerd-rootful.conf
    if [ -f "$dropin" ]; then
      grep -qx 'User=root' "$dropin" && grep -qx 'RestrictSUIDSGID=yes' "$dropin" \
        || { echo "the drop-in's settings changed: update this check"; return 1; }
    fi
    cc -o "$PODMAN/restrict-suid" "$SRC/tests/packaging/restrict-suid.c" || return 1
    sed -i 's/tools: \[read_file\]/tools: [read_file, shell]/' "$PODMAN/brokerd.yaml"
    # Rootful, the sandbox's root is host uid 700000000 (uidmap_base): the owner gives it the
    # folder it may write, as docs/security.md says.
    local owner
    owner=$(stat -c %u:%g "$PODMAN/granted")
    chown 700000000:700000000 "$PODMAN/granted"
    "$PODMAN/restrict-suid" /usr/sbin/brokerd --config "$PODMAN/brokerd.yaml" \
      >"$PODMAN/brokerd.log" 2>&1 &
    local pid=$! i rc=0 out
    for i in $(seq 50); do [ -S "$PODMAN/broker.sock" ] && break; sleep 0.1; done
    out=$(/usr/bin/boxmaker call shell \
            "{\"command\":\"cp /bin/busybox $PODMAN/granted/sh; chmod 4755 $PODMAN/granted/sh; echo chmod=\$?\"}" \
            --socket "$PODMAN/broker.sock" --timeout-ms 60000 2>&1) || rc=1
    kill -TERM $pid
    wait $pid || rc=1
    echo "$out"
    cat "$PODMAN/brokerd.log"
    ls -l "$PODMAN/granted/sh"
    printf '%s' "$out" | grep -q "chmod=1" || rc=1
    [ -f "$PODMAN/granted/sh" ] && [ ! -u "$PODMAN/granted/sh" ] || rc=1
    rm -f "$PODMAN/granted/sh"
    chown "$owner" "$PODMAN/granted"
    return $rc
  }
  check "as the rootful drop-in runs it (root, RestrictSUIDSGID) a call runs and cannot make a setuid file" \
    rootful_dropin
  # By id: podman 4.3 does not remove an image by the digest reference build-image.sh prints.
  podman rmi -f "$(podman image inspect --format '{{.Id}}' "$IMAGE")" >/dev/null 2>&1 || true

  # The unit's way: brokerd as the service user boxmaker, so rootless podman, inside the
  # unit's hardening (ProtectSystem=full, PrivateTmp=yes) and the rootless drop-in's
  # CapabilityBoundingSet, rebuilt with a mount namespace and setpriv since systemd is not
  # PID 1 here.  It proves that the hardening the unit sets leaves
  # rootless podman working, with subordinate ids as README.Debian says, and the podman
  # options of the shipped config's example.
  unit_sandbox_rootless () {
    local unit=/lib/systemd/system/brokerd.service
    # The rootless drop-in's bounding set: only newuidmap and newgidmap gain capabilities,
    # and only these.
    local rootless_caps
    rootless_caps=-all,$(sed -n 's/^CapabilityBoundingSet=//p' \
      /usr/share/doc/boxmaker-runtime-podman/examples/brokerd-rootless.conf \
      | tr ' ' '\n' | grep . | sed 's/^CAP_//' | tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd, -)
    [ "$rootless_caps" != -all, ] || { echo "the rootless drop-in sets no bounding set"; return 1; }
    grep -qx 'User=boxmaker' $unit && grep -qx 'ProtectSystem=full' $unit \
      && grep -qx 'PrivateTmp=yes' $unit || { echo "the unit's settings changed: update this check"; return 1; }
    mkdir -p "$ROOTLESS/granted"
    echo "hello from the host" > "$ROOTLESS/granted/notes.txt"
    usermod --add-subuids 1000000-1065535 --add-subgids 1000000-1065535 boxmaker || return 1
    local image
    image=$(cd /var/lib/boxmaker && $as_boxmaker /usr/share/boxmaker/image/build-image.sh --quiet \
                --name "$IMAGE_NAME" 2>&1) \
      || { echo "build-image.sh as boxmaker: $image"; return 1; }
    image=$(printf '%s\n' "$image" | tail -n 1)
    cat >"$ROOTLESS/brokerd.yaml" <<EOF
socket: $ROOTLESS/broker.sock
runtime:
  module: podman
  options:
    image: $image
    global_options: ["--runtime", "runc"]
    run_options: ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024", "--pull=never"]
    # Rootless podman here (no user session; cgroup v1 on this kind of host) applies no
    # memory, pids or CPU limit: podman.so refuses to start until they are turned off.
    cgroup_limits: "off"
grants:
  - tools: [read_file, shell]
    paths: [$ROOTLESS/granted]
EOF
    chown -R boxmaker:boxmaker "$ROOTLESS"
    # Sandboxes run as boxmaker's first subordinate id, never as boxmaker itself; brokerd
    # (group boxmaker) makes the placeholders of missing protected paths there for a call.
    chown 1000000:boxmaker "$ROOTLESS/granted"
    chmod 2775 "$ROOTLESS/granted"
    unshare -m --propagation private sh -c '
      set -e
      for d in /usr /etc /boot; do
        [ -d $d ] || continue
        mount --bind $d $d && mount -o remount,bind,ro $d
      done
      mount -t tmpfs -o mode=1777 tmpfs /tmp
      mount -t tmpfs -o mode=1777 tmpfs /var/tmp
      if touch /etc/.bx-write-test 2>/dev/null; then echo "/etc is writable"; exit 1; fi
      cd /var/lib/boxmaker
      '"$as_boxmaker"' /usr/sbin/brokerd --check-config '"$ROOTLESS"'/brokerd.yaml >/dev/null 2>&1
      setpriv --bounding-set '"$rootless_caps"' '"$as_boxmaker"' /usr/sbin/brokerd --config '"$ROOTLESS"'/brokerd.yaml 2>'"$ROOTLESS"'/brokerd.log &
      pid=$!
      for i in $(seq 50); do [ -S '"$ROOTLESS"'/broker.sock ] && break; sleep 0.1; done
      rc=0
      /usr/bin/boxmaker call read_file "{\"path\":\"'"$ROOTLESS"'/granted/notes.txt\"}" \
        --socket '"$ROOTLESS"'/broker.sock --timeout-ms 60000 | grep -q "hello from the host" || rc=1
      /usr/bin/boxmaker call shell "{\"command\":\"echo written > '"$ROOTLESS"'/granted/out.txt\"}" \
        --socket '"$ROOTLESS"'/broker.sock --timeout-ms 60000 >/dev/null || rc=1
      kill -TERM $pid; wait $pid || rc=1
      exit $rc'
    local rc=$?
    cat "$ROOTLESS/brokerd.log"
    if [ $rc -eq 0 ] && [ "$(stat -c %u "$ROOTLESS/granted/out.txt" 2>/dev/null)" != 1000000 ]; then
      echo "shell did not write out.txt as boxmaker's first subordinate uid 1000000"; rc=1
    fi
    return $rc
  }
  rootless_cleanup () {
    # What an administrator does before removing: drop the user's podman storage from its
    # home.  Rootless podman also leaves a pause process for the user; it is ours, end it by
    # id.
    (cd /var/lib/boxmaker && $as_boxmaker podman system reset --force >/dev/null 2>&1)
    rm -rf /var/lib/boxmaker/.local /var/lib/boxmaker/.config /var/lib/boxmaker/.cache
    local pid
    for pid in $(ps -o pid= -u boxmaker 2>/dev/null); do kill "$pid" 2>/dev/null; done
    sleep 0.5
    usermod --del-subuids 1000000-1065535 --del-subgids 1000000-1065535 boxmaker 2>/dev/null
    [ -n "${ROOTLESS:-}" ] && rm -rf "$ROOTLESS"
    rm -rf /tmp/podman-run-"$(id -u boxmaker)" /tmp/containers-user-"$(id -u boxmaker)"
  }
  ROOTLESS=$(mktemp -d /srv/bx-rootless.XXXXXX) # not under /tmp: PrivateTmp hides it
  as_boxmaker="setpriv --reuid=boxmaker --regid=boxmaker --init-groups env -i HOME=/var/lib/boxmaker PATH=/usr/sbin:/usr/bin:/sbin:/bin"
  check "as the unit and the rootless drop-in run it (user boxmaker, rootless podman, ProtectSystem=full, PrivateTmp, bounding set) a call runs" \
    unit_sandbox_rootless
  rootless_cleanup
fi

# The bubblewrap runtime as installed: postinst built the read-only root; a call runs
# through brokerd, bwrap.so and a real sandbox as nobody.  bwrap.so needs root and cgroup v1
# (it refuses to start otherwise); without them this says why and skips (a failure with
# BX_REQUIRE_BWRAP=1).
BWRAP=$WORK/bwrap
check "postinst built the read-only root, owned by root, with toolkit" \
  sh -c '[ "$(stat -c %u:%a /var/lib/boxmaker-bwrap/rootfs)" = 0:755 ] && [ -x /var/lib/boxmaker-bwrap/rootfs/bin/toolkit ]'
if [ ! -e /sys/fs/cgroup/memory/cgroup.procs ]; then
  if [ "${BX_REQUIRE_BWRAP:-0}" = 1 ]; then
    fail "bwrap runtime end to end: no cgroup v1 memory hierarchy"
  else
    skip "bwrap runtime end to end: no cgroup v1 memory hierarchy"
  fi
else
  mkdir -p "$BWRAP/granted"
  chmod 0755 "$BWRAP"
  echo "hello from the host" > "$BWRAP/granted/notes.txt"
  cat >"$BWRAP/brokerd.yaml" <<EOF
socket: $BWRAP/broker.sock
runtime:
  module: bwrap
grants:
  - tools: [read_file]
    paths: [$BWRAP/granted]
EOF
  bwrap_call () {
    /usr/sbin/brokerd --config "$BWRAP/brokerd.yaml" >"$BWRAP/brokerd.log" 2>&1 &
    local pid=$! i rc out
    for i in $(seq 50); do [ -S "$BWRAP/broker.sock" ] && break; sleep 0.1; done
    out=$(/usr/bin/boxmaker call read_file "{\"path\":\"$BWRAP/granted/notes.txt\"}" \
            --socket "$BWRAP/broker.sock" --timeout-ms 60000 2>&1)
    rc=$?
    kill -TERM $pid
    wait $pid
    echo "boxmaker call: exit $rc: $out"
    cat "$BWRAP/brokerd.log"
    [ $rc -eq 0 ] && printf '%s' "$out" | grep -q "hello from the host"
  }
  check "a read_file call runs in a bubblewrap sandbox through the installed packages" bwrap_call
fi

# ---- Remove -----------------------------------------------------------------------------
# After `apt-get remove`, only what Debian keeps until purge may remain: the conffile and
# the service's enablement state (deb-systemd-helper keeps it so a reinstall restores it).
if apt-get remove -y $PACKAGES >"$WORK/remove.log" 2>&1; then
  pass "apt-get remove $PACKAGES"
else
  fail "apt-get remove $PACKAGES"
  tail -n 20 "$WORK/remove.log" | sed 's/^/    /'
fi

EXPECTED_AFTER_REMOVE='^(/etc/boxmaker|/etc/boxmaker/brokerd\.yaml|/etc/systemd/system/brokerd\.service|/etc/systemd/system/multi-user\.target\.wants/brokerd\.service|/var/lib/systemd/deb-systemd-helper-(enabled|masked)(/.*)?(brokerd|boxmaker-mcp)\.service.*)$'
after_remove () {
  local bad
  bad=$(leftovers | grep -Ev "$EXPECTED_AFTER_REMOVE" | grep -v "^/var/lib/systemd/deb-systemd-helper-enabled/multi-user.target.wants$")
  [ -z "$bad" ] || { echo "left behind:"; echo "$bad"; return 1; }
  [ -f /etc/boxmaker/brokerd.yaml ] || { echo "the conffile is gone"; return 1; }
  local p
  for p in boxmaker-tools boxmaker-runtime-podman boxmaker-runtime-bwrap boxmaker-dev libboxmaker-client0 libboxmaker-client-dev; do
    case $(dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null) in
      ''|not-installed|config-files) ;;
      *) echo "$p is still installed"; return 1 ;;
    esac
  done
  # dpkg's list of the removed daemon package: the conffile and its folder only.
  local listed
  listed=$(dpkg -L boxmaker 2>/dev/null | grep -v -x -e /etc -e /etc/boxmaker -e /etc/boxmaker/brokerd.yaml -e '/.')
  [ -z "$listed" ] || { echo "dpkg -L boxmaker still lists:"; echo "$listed"; return 1; }
}
check "after remove: nothing left but the conffile (and the service's enablement, kept until purge)" \
  after_remove
leftovers | sed 's/^/    left: /'

# dpkg forgets a removed package that had no conffiles; purge the ones it still knows.
KNOWN=
for p in $PACKAGES; do
  dpkg-query -W "$p" >/dev/null 2>&1 && KNOWN="$KNOWN $p"
done
if [ -z "$KNOWN" ] || dpkg --purge $KNOWN >"$WORK/purge.log" 2>&1; then
  pass "dpkg --purge$KNOWN"
else
  fail "dpkg --purge$KNOWN"
  tail -n 20 "$WORK/purge.log" | sed 's/^/    /'
fi
after_purge () {
  local bad
  bad=$(leftovers)
  [ -z "$bad" ] || { echo "left behind:"; echo "$bad"; return 1; }
}
check "after purge: nothing left at all (the boxmaker user stays, as Debian's users do)" after_purge
check "after purge: ids 700000000-700065535 are no longer reserved" \
  sh -c "! grep -qx boxmaker:700000000:65536 /etc/subuid && ! grep -qx boxmaker:700000000:65536 /etc/subgid"

finish
