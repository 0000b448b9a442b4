# SPDX-License-Identifier: Apache-2.0
"""What the tests of tests/mcp-servers share: toolkit's path, the test server, and one run of
`toolkit mcp_call`."""
import json
import os
import subprocess
import time

TOOLKIT = os.environ["BX_TOOLKIT"]
HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "server.py")
PYTHON = "/usr/bin/python3"


def request(command, method="tools/list", params=None, **extra):
    req = {"command": command, "method": method}
    if params is not None:
        req["params"] = params
    req.update(extra)
    return json.dumps(req).encode()


def toolkit(command, method="tools/list", params=None, **extra):
    """Runs one request: (exit status, standard output as text, standard error as text)."""
    p = subprocess.run([TOOLKIT, "mcp_call"], input=request(command, method, params, **extra),
                       capture_output=True)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def wait_for_file(path, proc=None):
    """Polls for PATH, up to 60 s, or until PROC ends; its text, or None."""
    for _ in range(600):
        if os.path.exists(path):
            with open(path) as f:
                text = f.read()
            if text:
                return text
        if proc is not None and proc.poll() is not None:
            return None
        time.sleep(0.1)
    return None


def gone(pid):
    """Whether no process PID is left (a zombie counts as left: nobody reaped it)."""
    return not os.path.exists(f"/proc/{pid}")
