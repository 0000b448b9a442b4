#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The real-podman tests' fixture: checks that podman can run a container here, builds the
# tools image from TOOLKIT with build-image.sh, and writes its reference to OUT.  The image
# also trusts a self-signed certificate for web.bxtest.example, made here (in OUT's folder,
# web/cert.pem and web/key.pem) for the HTTPS server real-brokerd.sh runs.  When
# podman is unusable it writes "unusable: <why>" instead, and the tests say so on their
# own line and skip; with BX_REQUIRE_PODMAN=1 (CI) that is a failure here instead.
#
#   real-setup.sh BUILD_IMAGE_SH TOOLKIT OUT
set -u
build_image=$1 toolkit=$2 out=$3

unusable () {
  echo "unusable: $*" > "$out"
  echo "real podman tests cannot run: $*"
  if [ "${BX_REQUIRE_PODMAN:-0}" = 1 ]; then
    echo "BX_REQUIRE_PODMAN=1: failing" >&2
    exit 1
  fi
  exit 0
}

command -v podman >/dev/null 2>&1 || unusable "podman is not installed"
info=$(podman info --format '{{.Host.OCIRuntime.Name}}' 2>&1) || unusable "podman info failed: $info"
[ -e "$toolkit" ] || unusable "no toolkit program at $toolkit"
case $(file -b "$toolkit" 2>/dev/null) in
  *dynamically*) echo "note: toolkit is dynamically linked (sanitizer build); its libraries go in the image" ;;
esac

web=$(dirname "$out")/web
mkdir -p "$web"
if ! openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=web.bxtest.example \
       -addext subjectAltName=DNS:web.bxtest.example \
       -keyout "$web/key.pem" -out "$web/cert.pem" 2>"$web/openssl.log"; then
  unusable "openssl cannot make the test certificate: $(cat "$web/openssl.log")"
fi

# A name of this build tree's own: several trees may run these tests on one podman at once,
# and each cleanup removes only its own image.
name=localhost/boxmaker-tools-test-$(dirname "$out" | cksum | cut -d ' ' -f 1)
if ! ref=$("$build_image" --quiet --toolkit "$toolkit" --name "$name" \
             --extra-ca "$web/cert.pem" 2>&1); then
  unusable "build-image.sh failed: $ref"
fi
ref=$(printf '%s\n' "$ref" | tail -n 1)

# One container, the way podman.so runs them on this kind of host, proves podman works.
if ! probe=$(echo '{"command":"echo ok"}' | podman --runtime runc run --rm -i --network=none \
      --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "$ref" /bin/toolkit shell 2>&1); then
  unusable "podman cannot run a container here: $probe"
fi
echo "$ref" > "$out"
echo "tools image for the tests: $ref"
