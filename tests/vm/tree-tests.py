#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/vm/tree-tests.py BUILD_DIR NAME...: inside the VM, runs tests of the host's build.

The tests are those of `ctest --test-dir BUILD_DIR`, named exactly (each NAME is a test's
name), run in the order given, each with the command, environment and working folder ctest
would give it; first the tests that set up the fixtures they require, last those that clean
them up.  ctest
itself is not used: its TIMEOUT properties are set for the host, and the guest runs under
software emulation, tens of times slower.  Each test's bound is its TIMEOUT times
BX_VM_TEST_SLOWDOWN (default 4).

Prints one line per test, "PASS: NAME (N s)", "SKIP: NAME (N s): WHY" (the test's exit was
its SKIP_RETURN_CODE; WHY is the last line it printed that says SKIP or skip) or
"FAIL: NAME (N s)" followed by the end of its output.  Exit status 1 when a test failed,
2 when a NAME is not a test of BUILD_DIR.
"""
import json
import os
import subprocess
import sys
import time


def load(build):
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    tests = {}
    order = []
    for t in json.loads(out)["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        tests[t["name"]] = (t.get("command", []), props)
        order.append(t["name"])
    return tests, order


def plan(tests, order, names):
    fixtures = set()
    for n in names:
        fixtures.update(tests[n][1].get("FIXTURES_REQUIRED", []))
    setups = [n for n in order if set(tests[n][1].get("FIXTURES_SETUP", [])) & fixtures]
    cleanups = [n for n in order if set(tests[n][1].get("FIXTURES_CLEANUP", [])) & fixtures]
    body = [n for n in names if n not in setups and n not in cleanups]
    return [n for n in setups if n not in body] + body + [n for n in cleanups if n not in body]


def run(name, command, props, slowdown):
    env = dict(os.environ)
    for kv in props.get("ENVIRONMENT", []):
        k, _, v = kv.partition("=")
        env[k] = v
    bound = float(props.get("TIMEOUT", 1500)) * slowdown
    t0 = time.monotonic()
    try:
        p = subprocess.run(command, cwd=props.get("WORKING_DIRECTORY") or None, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=bound)
        rc, out = p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        rc, out = None, (e.stdout or b"").decode(errors="replace")
        out += "\n(killed: past its bound of %d s)" % bound
    took = int(time.monotonic() - t0)
    skip_rc = props.get("SKIP_RETURN_CODE")
    if rc == 0:
        print("PASS: %s (%d s)" % (name, took))
    elif rc is not None and skip_rc is not None and rc == int(skip_rc):
        why = [ln for ln in out.splitlines() if "skip" in ln.lower()]
        print("SKIP: %s (%d s): %s" % (name, took, why[-1] if why else "(no reason printed)"))
    else:
        print("FAIL: %s (%d s): exit %s" % (name, took, rc))
        for ln in out.splitlines()[-40:]:
            print("    " + ln)
        if os.environ.get("BX_VERBOSE"):
            print(out)
        return False
    if os.environ.get("BX_VERBOSE"):
        for ln in out.splitlines()[-40:]:
            print("    " + ln)
    sys.stdout.flush()
    return True


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, names = sys.argv[1], sys.argv[2:]
    tests, order = load(build)
    unknown = [n for n in names if n not in tests]
    if unknown:
        print("tree-tests: not tests of %s: %s" % (build, " ".join(unknown)))
        return 2
    slowdown = float(os.environ.get("BX_VM_TEST_SLOWDOWN", "4"))
    ok = True
    for n in plan(tests, order, names):
        command, props = tests[n]
        ok = run(n, command, props, slowdown) and ok
        sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
