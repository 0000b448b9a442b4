#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# http_fetch.sh: what an http_fetch call costs through brokerd and bwrap.so over bare
# bubblewrap, in alternating rounds (bench/README.md, "http_fetch"):
#   bare-bwrap    fetch_floor.c: the egress proxy in a bubblewrap sandbox that shares the
#                 host's network, toolkit's http_fetch in another with no network, both
#                 binding one folder at /run/egress; no slirp4netns, no limits, no seccomp
#                 filter, no helper program
#   bwrap.so      `boxmaker call` -> brokerd -> bwrap.so (the proxy's sandbox with its own
#                 network through slirp4netns, the tool's sandbox), every limit on
#   bwrap.so-lib  the same brokerd called through the client library from the harness
# Each fetches a small file over HTTPS from a server of this run's own (openssl s_server)
# in a network namespace at an address the proxy counts as public, by a name the read-only
# root's /etc/hosts gives, with a certificate the root trusts.  p50 and p90 of the wall
# time, the CPU time per call (as run.sh counts it), and the ratios.  No fork+exec side:
# toolkit's http_fetch reaches the proxy only at /run/egress, and the host has neither the
# server's name nor its certificate.
#
#   bench/runtimes/http_fetch.sh BUILD_DIR [ROUNDS]     # default 30
#
# As root (network namespaces, cgroups), with bubblewrap, slirp4netns, ip and openssl.
set -eu
build=$(cd "$1" && pwd)
rounds=${2:-30}
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/bench/runtimes/lib.sh"
. "$src/tests/common/web_netns.sh"
[ "$(id -u)" = 0 ] || { echo "http_fetch.sh: needs root (network namespaces, cgroups)" >&2; exit 1; }
for c in bwrap slirp4netns ip openssl; do
  command -v "$c" > /dev/null || { echo "http_fetch.sh: $c is not installed" >&2; exit 1; }
done
bwrap=$(command -v bwrap)
work=$(mktemp -d /tmp/bx-bench-http.XXXXXX)
chmod 0755 "$work"
acct=/sys/fs/cgroup/cpuacct
[ -f "$acct/cpuacct.usage" ] || acct=
netns=bxbench$$
veth=bxbh$$
bench_pids=
cleanup () {
  for p in $bench_pids; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip link del "$veth" 2>/dev/null || true
  ip netns del "$netns" 2>/dev/null || true
  [ -z "$acct" ] || rmdir "$acct/bx-bench-http-bwrap-$$" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT PIPE TERM

runtimes_tiers
cc -O2 -o "$work/fetch_floor" "$src/bench/runtimes/fetch_floor.c"

# The server: its name, a certificate for it, and an address only this host routes.
octet=$(web_netns_octet 45.46)
host_ip=45.46.$octet.1 web_ip=45.46.$octet.2 name=web.bxbench.example
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$name" \
  -addext "subjectAltName=DNS:$name" -keyout "$work/key.pem" -out "$work/cert.pem" \
  2> "$work/openssl.log" || { cat "$work/openssl.log"; exit 1; }
"$src/packaging/image/build-image.sh" --quiet --rootfs "$work/rootfs" \
  --toolkit "$build/toolkit/toolkit" --extra-ca "$work/cert.pem" --add-host "$name:$web_ip" \
  > /dev/null
ip netns add "$netns"
web_netns_wire "$netns" "$veth" "bxbn$$" "$host_ip" "$web_ip"
mkdir -p "$work/www"
echo "fetched through the egress proxy" > "$work/www/index.txt"
web_netns_serve "$netns" "$work/www" "$web_ip:443" "$work/cert.pem" "$work/key.pem" "$work/server.log"
bench_pids="$bench_pids $!"
i=0
until curl -s -o /dev/null --max-time 1 --cacert "$work/cert.pem" \
        --resolve "$name:443:$web_ip" "https://$name/index.txt"; do
  i=$((i + 1))
  [ $i -lt 100 ] || { echo "http_fetch.sh: the server did not come up"; cat "$work/server.log"; exit 1; }
  sleep 0.1
done

mkdir -p "$work/home" "$work/egress" "$work/floor" "$work/check"
chown 65534:65534 "$work/floor"
cat > "$work/bwrap.yaml" <<YAML
socket: $work/bwrap.sock
home: $work/home
runtime:
  module: bwrap
  options:
    rootfs: $work/rootfs
    egress_dir: $work/egress
$runtimes_limits
grants:
  - tools: [http_fetch]
    hosts: [$name]
    class: public
YAML
cpu=-
cg=
if [ -n "$acct" ]; then
  cg=$acct/bx-bench-http-bwrap-$$
  mkdir "$cg"
  cpu=$cg/cpuacct.usage
fi
runtimes_brokerd bwrap "$cg"
bench_pids="$bench_pids $brokerd_pid"

# The floor's two sandboxes: bwrap.so's options but its limits, its seccomp filter, its
# helpers and the proxy's own network.
runtimes_root_binds "$work/rootfs"
common="--unshare-user --uid 65534 --gid 65534 --die-with-parent --clearenv --setenv PATH /bin --setenv HOME /tmp$root_binds --proc /proc --dev /dev --tmpfs /tmp"
proxy="$bwrap --unshare-all --share-net $common --bind $work/floor /run/egress --remount-ro / --chdir /tmp -- /bin/toolkit egress-proxy --socket /run/egress/egress.sock --allow $name"
tool="$bwrap --unshare-all $common --ro-bind $work/floor /run/egress --remount-ro / --chdir /tmp -- /bin/toolkit http_fetch"
printf '%s' "{\"url\":\"https://$name/index.txt\"}" > "$work/http_fetch.json"
in=$work/http_fetch.json
sides=$work/sides
{
  printf 'http_fetch\tbare-bwrap\t65534\t%s\t-\t%s %s %s @@ %s\n' "$in" "$work/fetch_floor" \
    "$work/floor" "$proxy" "$tool"
  printf 'http_fetch\tbwrap.so\t-1\t%s\t%s\t%s call http_fetch %s --socket %s --session bench\n' \
    "$in" "$cpu" "$build/client/boxmaker" "$(cat "$in")" "$work/bwrap.sock"
  printf 'http_fetch\tbwrap.so-lib\t-1\t%s\t%s\t@call %s http_fetch\n' "$in" "$cpu" "$work/bwrap.sock"
  printf 'RATIO\tbwrap.so\tbare-bwrap\nRATIO\tbwrap.so-lib\tbare-bwrap\n'
} > "$sides"

"$work/tiers" "$sides" 1 0 "$work/check" || { echo "a side failed"; exit 1; }
for f in "$work/check"/http_fetch.*; do
  case $f in *.err) continue ;; esac
  grep -q "fetched through the egress proxy" "$f" \
    || { echo "http_fetch.sh: ${f##*/} did not fetch the file: $(head -c 300 "$f" "$f.err" | tr '\n' ' ')"; exit 1; }
done

uptime
echo "$rounds rounds, sides alternating; wall time in ms, CPU ms per call (mean)"
[ -n "$acct" ] || echo "note: no cgroup v1 cpuacct: brokerd's and its sandboxes' CPU time is not counted"
"$work/tiers" "$sides" "$rounds" 0
uptime
