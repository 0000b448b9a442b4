#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Kubernetes manifests (packaging/kubernetes/, docs/scale-out.md):
#   1. every file parses as YAML, each document a Kubernetes object (apiVersion, kind,
#      metadata.name) of a kind the docs name;
#   2. with podman (root): brokerd's DaemonSet runs for real under `podman kube play`.
#      podman 4.3 plays Pods, Deployments and PersistentVolumeClaims but not DaemonSets, so
#      the DaemonSet's Pod template is played as a Pod, with its ConfigMap given by
#      --configmap and its hostPath folders moved into this test's own folder.  The image is
#      built here from the build tree's brokerd and the libraries it loads.  A call through
#      the hostPath socket must be answered by the brokerd in the Pod, whose audit line
#      reaches the container's log; then `podman kube down` removes the Pod.
#
#   kube-play.sh BROKERD BOXMAKER RUNTIMEDIR MANIFEST_DIR
set -u
brokerd=$1 boxmaker=$2 runtimedir=$3 dir=$4
failures=0
fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
pass () { echo "ok: $*"; }
skip () {
  echo "SKIP kube play: $*"
  [ "${BX_REQUIRE_PODMAN:-0}" = 1 ] && exit 1
  exit 77
}

python3 -c 'import yaml' 2>/dev/null || skip "python3 has no yaml module (package python3-yaml)"
python3 - "$dir" <<'PY' || fail "the manifests do not parse as Kubernetes objects"
import glob, sys, yaml
known = {"ConfigMap", "DaemonSet", "RuntimeClass", "Pod", "NetworkPolicy"}
files = sorted(glob.glob(sys.argv[1] + "/*.yaml"))
if not files:
    sys.exit("no manifests in " + sys.argv[1])
bad = 0
for f in files:
    for doc in yaml.safe_load_all(open(f)):
        kind = doc.get("kind") if isinstance(doc, dict) else None
        name = (doc.get("metadata") or {}).get("name") if kind else None
        if not doc.get("apiVersion") or kind not in known or not name:
            print("%s: not a known Kubernetes object: %r" % (f, doc)[:300])
            bad = 1
        else:
            print("ok: %s: %s %s" % (f.rsplit("/", 1)[1], kind, name))
sys.exit(bad)
PY
[ $failures -eq 0 ] && pass "every manifest parses"

[ "$(id -u)" = 0 ] || skip "not root (the Pod binds its socket in a folder of the host)"
command -v podman >/dev/null 2>&1 || skip "podman is not installed"

work=$(mktemp -d /tmp/bx-kube.XXXXXX)
chmod 0755 "$work"
tag=bx-kube-$$
image=localhost/boxmaker-brokerd-test:$tag
cleanup () {
  [ -f "$work/pod.yaml" ] && podman kube down "$work/pod.yaml" >/dev/null 2>&1
  podman rmi -f "$image" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
# What a cgroup v1 or hybrid host needs of podman (docs/config.md), for the Pod's infra
# container too, which takes no option of ours: runc, and ulimits setrlimit permits.
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
  cat > "$work/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
CONF
  export CONTAINERS_CONF="$work/containers.conf"
fi

# The image: brokerd and every library it loads, nothing else.
root=$work/rootfs
mkdir -p "$root/usr/sbin" "$root/etc/boxmaker" "$root/run/boxmaker" "$root/var/lib/boxmaker" "$root/tmp"
cp "$brokerd" "$root/usr/sbin/brokerd"
# The refusing runtime, where this brokerd looks for modules by default (it says where).
printf 'socket: %s/probe.sock\n' "$work" > "$work/probe.yaml"
default=$("$brokerd" --check-config "$work/probe.yaml" 2>&1 | sed -n 's|.*runtime module \(/.*\)/refusing\.so.*|\1|p' | head -n 1)
[ -n "$default" ] || default=$(dirname "$(dirname "$brokerd")")/runtimes/modules
mkdir -p "$root$default"
cp "$runtimedir/refusing.so" "$root$default/refusing.so"
for lib in $(ldd "$brokerd" "$runtimedir/refusing.so" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
echo "root:x:0:0:root:/:/sbin/nologin" > "$root/etc/passwd"
echo "root:x:0:" > "$root/etc/group"
tar -C "$root" -cf "$work/rootfs.tar" . || fail "cannot pack the image"
podman import --quiet "$work/rootfs.tar" "$image" >/dev/null 2>"$work/import.log" \
  || { cat "$work/import.log"; fail "podman import"; exit 1; }

# The DaemonSet's Pod, as podman 4.3 plays it, with its hostPath folders in $work.
mkdir -p "$work/node/run" "$work/node/lib"
python3 - "$dir/brokerd-daemonset.yaml" "$work" "$image" <<'PY' || { fail "cannot make the Pod"; exit 1; }
import sys, yaml
src, work, image = sys.argv[1:4]
docs = list(yaml.safe_load_all(open(src)))
cm = next(d for d in docs if d["kind"] == "ConfigMap")
ds = next(d for d in docs if d["kind"] == "DaemonSet")
spec = ds["spec"]["template"]["spec"]
moved = {"/run/boxmaker": work + "/node/run", "/var/lib/boxmaker": work + "/node/lib"}
for v in spec["volumes"]:
    if "hostPath" in v:
        v["hostPath"]["path"] = moved[v["hostPath"]["path"]]
for c in spec["containers"]:
    c["image"] = image
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": ds["metadata"]["name"], "labels": ds["spec"]["template"]["metadata"]["labels"]},
       "spec": spec}
yaml.safe_dump(pod, open(work + "/pod.yaml", "w"))
yaml.safe_dump(cm, open(work + "/configmap.yaml", "w"))
PY
podman kube play --configmap "$work/configmap.yaml" "$work/pod.yaml" > "$work/play.log" 2>&1 \
  || { cat "$work/play.log"; fail "podman kube play refused the DaemonSet's Pod"; exit 1; }
pass "podman kube play runs the DaemonSet's Pod"
i=0
while [ ! -S "$work/node/run/broker.sock" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
container=$(podman ps -a --filter "pod=boxmaker-brokerd" --format '{{.Names}}' | grep -v infra | head -n 1)
if [ -S "$work/node/run/broker.sock" ]; then
  out=$("$boxmaker" call read_file '{"path":"/srv/nothing"}' --socket "$work/node/run/broker.sock" \
          --session kube-$$ 2>&1)
  case $out in
    *denied*) pass "brokerd in the Pod answers on the node's socket: $out" ;;
    *) fail "the call through the node's socket: $out" ;;
  esac
  sleep 0.5
  podman logs "$container" 2>&1 | grep -q "\"session\":\"kube-$$\"" \
    && pass "its audit line is in the container's log" \
    || fail "no audit line in the container's log: $(podman logs "$container" 2>&1 | tail -n 5)"
else
  fail "no socket at the node's /run/boxmaker: $(podman ps -a --pod 2>&1 | tail -n 5) $(podman logs "$container" 2>&1 | tail -n 20)"
fi
podman kube down "$work/pod.yaml" > "$work/down.log" 2>&1 \
  && pass "podman kube down removes it" || { cat "$work/down.log"; fail "podman kube down"; }
podman pod exists boxmaker-brokerd 2>/dev/null && fail "the Pod is still there"
rm -f "$work/pod.yaml"
[ $failures -eq 0 ] || exit 1
echo "kube-play: all as expected"
