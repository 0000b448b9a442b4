# SPDX-License-Identifier: Apache-2.0
"""A brokerd of the test's own for the operations tests: a config in a fresh folder, the
process, and calls over its socket (frames: 4-byte big-endian length, one JSON object)."""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time

BROKERD = os.environ["BX_BROKERD"]
BOXMAKER = os.environ["BX_BOXMAKER"]
RUNTIMEDIR = os.environ["BX_RUNTIMEDIR"]


def grants_text(d, read=True):
    g = "grants:\n"
    if read:
        g += f"  - tools: [read_file]\n    paths: [{d}/notes]\n    class: internal\n"
    g += f"  - tools: [shell]\n    paths: [{d}/work]\n"
    return g


class Broker:
    def __init__(self, top="", runtime=None, read=True, audit=None):
        self.dir = tempfile.mkdtemp(prefix="bxops-")
        os.mkdir(f"{self.dir}/notes")
        os.mkdir(f"{self.dir}/work")
        self.sock = f"{self.dir}/b.sock"
        self.audit = audit or f"{self.dir}/audit.log"
        self.config = f"{self.dir}/brokerd.yaml"
        self.out = f"{self.dir}/out"
        self.top = top
        self.runtime = runtime or "runtime:\n  module: fake\n  options:\n    mode: echo\n"
        self.write_config(read=read)
        self.proc = None

    def write_config(self, read=True, extra=""):
        text = (f"socket: {self.sock}\nhome: {self.dir}/home\naudit: {self.audit}\n"
                f"{self.top}{extra}{self.runtime}{grants_text(self.dir, read)}")
        tmp = self.config + ".new"
        with open(tmp, "w") as f:
            f.write(text)
        os.rename(tmp, self.config)

    def start(self, prefix=(), env=None, wait=True):
        e = dict(os.environ)
        e.pop("NOTIFY_SOCKET", None)
        e.pop("JOURNAL_STREAM", None)
        if env:
            e.update(env)
        out = open(self.out, "ab")
        self.proc = subprocess.Popen(
            list(prefix) + [BROKERD, "--config", self.config, "--runtimedir", RUNTIMEDIR],
            stdout=out, stderr=out, env=e)
        out.close()
        if wait:
            self.wait_listening()
        return self.proc

    def wait_listening(self, timeout=10):
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                raise AssertionError(f"brokerd exited ({self.proc.returncode}):\n{self.output()}")
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                try:
                    s.connect(self.sock)
                    return
                except OSError:
                    pass
            time.sleep(0.01)
        raise AssertionError("brokerd did not listen")

    def output(self):
        try:
            with open(self.out, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_output(self, text, timeout=10):
        end = time.time() + timeout
        while time.time() < end:
            if text in self.output():
                return
            time.sleep(0.02)
        raise AssertionError(f"no {text!r} in brokerd's output:\n{self.output()}")

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        rc = self.proc.wait(timeout)
        self.proc = None
        return rc

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def audit_lines(self):
        with open(self.audit) as f:
            return [json.loads(line) for line in f]


def frame(obj):
    data = json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data


def read_frame(s):
    def exact(n):
        buf = b""
        while len(buf) < n:
            chunk = s.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf
    head = exact(4)
    if head is None:
        return None
    body = exact(struct.unpack(">I", head)[0])
    return json.loads(body) if body is not None else None


def call(sock, tool, args, call_id="c1", session="s1", timeout=30):
    """The final answer's msg (a dict), or raises OSError."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(sock)
        s.sendall(frame({"v": 1, "id": call_id, "final": True,
                         "msg": {"type": "tool_request", "call": call_id, "session": session,
                                 "tool": tool, "arguments": args}}))
        answer = read_frame(s)
        if answer is None:
            raise OSError("the connection closed without an answer")
        return answer["msg"]
    finally:
        s.close()


def skip_unless_root_and(*programs):
    import unittest
    if os.geteuid() != 0:
        raise unittest.SkipTest("needs root (mount namespaces)")
    for p in programs:
        if shutil.which(p) is None:
            raise unittest.SkipTest(f"needs {p}")
