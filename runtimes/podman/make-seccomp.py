#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes podman-seccomp.json: podman's default profile (containers-common's seccomp.json,
given as the first argument) with what a sandbox must never do taken out.

    make-seccomp.py /usr/share/containers/seccomp.json > runtimes/podman/podman-seccomp.json

- keyctl, add_key, request_key: refused (EPERM).  Keyrings are not namespaced by mount or
  pid: a sandbox must not read, unlink or plant keys.
- unshare and clone with CLONE_NEWUSER: refused (EPERM).  A new user namespace would give
  the sandbox every capability inside it, and the kernel's attack surface with them.
- clone3: ENOSYS, so that the C library falls back to clone, whose flags a filter can read
  (clone3 passes them in memory).
Everything else is podman's default, unchanged.  Rerun this when containers-common's
profile changes, and review the difference."""
import json
import sys

CLONE_NEWUSER = 0x10000000
EPERM, ENOSYS = 1, 38
TAKEN = {"keyctl", "add_key", "request_key", "unshare", "clone", "clone3"}

profile = json.load(open(sys.argv[1]))
rules = []
for rule in profile["syscalls"]:
    names = [n for n in rule["names"] if not (n in TAKEN and rule["action"] == "SCMP_ACT_ALLOW")]
    if names:
        rule = dict(rule, names=names)
        rules.append(rule)

def newuser(index, set_):
    return [{"index": index, "value": CLONE_NEWUSER, "valueTwo": CLONE_NEWUSER if set_ else 0,
             "op": "SCMP_CMP_MASKED_EQ"}]

# clone's flags are its first argument, except on s390 and s390x, where they are the second.
S390 = {"arches": ["s390", "s390x"]}
rules += [
    {"names": ["keyctl", "add_key", "request_key"], "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM},
    {"names": ["unshare"], "action": "SCMP_ACT_ALLOW", "args": newuser(0, False)},
    {"names": ["unshare"], "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM, "args": newuser(0, True)},
    {"names": ["clone"], "action": "SCMP_ACT_ALLOW", "args": newuser(0, False), "excludes": S390},
    {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM, "args": newuser(0, True),
     "excludes": S390},
    {"names": ["clone"], "action": "SCMP_ACT_ALLOW", "args": newuser(1, False), "includes": S390},
    {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM, "args": newuser(1, True),
     "includes": S390},
    {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": ENOSYS},
]
profile["syscalls"] = rules
json.dump(profile, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
