#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# brokerd-builds-its-default-module.sh BUILD GENERATOR: building the brokerd target alone,
# as packaging/run-for-real.sh does (--target brokerd ... bwrap_runtime), also builds
# refusing.so, the module of a config without `runtime:`.  Without it such a config fails
# with "no such file".  Asked of the build tool as a dry run, so nothing is built here.
set -u
build=$1 generator=$2

case $generator in
  "Unix Makefiles")
    plan=$(make -n -C "$build" brokerd 2>&1) || { echo "FAIL: make -n brokerd: $plan"; exit 1; }
    ;;
  Ninja)
    plan=$(ninja -C "$build" -t commands brokerd 2>&1) || { echo "FAIL: ninja -t commands: $plan"; exit 1; }
    ;;
  *)
    echo "SKIP: no dry run known for the $generator generator"
    exit 77
    ;;
esac
case $plan in
  *refusing_runtime*) echo "ok: building brokerd builds refusing.so" ;;
  *) echo "FAIL: building brokerd does not build refusing_runtime (refusing.so)"; exit 1 ;;
esac
