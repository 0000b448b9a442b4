#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, on a fresh Debian 12 machine as root:
#   1. install what the build and the tests need, and check that every C file is formatted
#      as .clang-format says (first: it takes seconds);
#   2. build with gcc and run every test;
#   3. run the clang static analyzer (scan-build) over a gcc build: any finding fails;
#   4. build again with clang, AddressSanitizer, UBSan and libFuzzer, and run every test
#      again (the fuzz harnesses get a short smoke run each);
#   5. build the Debian packages, install them, check them as a user would, remove them.
# Any failure stops the run with a non-zero status.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
jobs=$(nproc)

step() { printf '\n==== %s\n' "$*"; }

step "dependencies"
tests/install-deps.sh

# Real podman and real bubblewrap must run in this suite: a podman or bwrap test that
# cannot run fails instead of skipping.
export BX_REQUIRE_PODMAN=1
export BX_REQUIRE_BWRAP=1
# The MCP tests need Node.js and the SDK from npm (install-deps.sh installs Node).
export BX_REQUIRE_MCP_SDK=1

step "formatting (clang-format --dry-run -Werror)"
find base broker client plugins-api proto runtimes toolkit tests bench docs/examples \
  -name '*.[ch]' -print0 | sort -z | xargs -0 clang-format --dry-run -Werror

step "gcc build"
cmake -S . -B build/gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build/gcc -j "$jobs"
step "gcc tests"
ctest --test-dir build/gcc --output-on-failure -j "$jobs"

step "static analysis (scan-build on the gcc build)"
rm -rf build/scan build/scan-report
scan-build -o build/scan-report cmake -S . -B build/scan -DCMAKE_BUILD_TYPE=Debug
scan-build -o build/scan-report --status-bugs cmake --build build/scan -j "$jobs"

step "sanitizer build (clang, ASan, UBSan, libFuzzer)"
cmake -S . -B build/asan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
  -DBX_SANITIZE=ON -DBX_FUZZ=ON
cmake --build build/asan -j "$jobs"
step "sanitizer tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$jobs"

step "Debian packages"
packaging/test-packages.sh



step "all tests passed"
cd "$top"
