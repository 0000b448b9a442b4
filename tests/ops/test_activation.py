# SPDX-License-Identifier: Apache-2.0
"""Socket activation across restarts, without systemd as PID 1: the test holds the listening
socket as systemd's socket unit does (non-blocking, as systemd makes it) and starts brokerd
on it again and again.  brokerd must serve after each start, stop at once on SIGTERM even when
the socket's path is gone, refuse to start (saying why) when the path is no longer the socket
it was passed, and not spin on the non-blocking socket while idle."""
import os
import signal
import socket
import subprocess
import time
import unittest

from opstest import BROKERD, RUNTIMEDIR, Broker, call

# Long enough that a stop waiting for it would time the test out: a stop must not need it.
GRACE = "grace_ms: 10m\n"


class Held:
    """The listening socket, held by the test as systemd holds a socket unit's."""

    def __init__(self, path):
        self.path = path
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.bind(path)
        self.s.listen(128)
        self.s.setblocking(False)

    def start(self, b):
        """brokerd on the held socket (fd 3, LISTEN_FDS=1, LISTEN_PID its own)."""
        fd = self.s.fileno()
        e = dict(os.environ)
        for k in ("NOTIFY_SOCKET", "JOURNAL_STREAM", "LISTEN_FDS", "LISTEN_PID"):
            e.pop(k, None)
        out = open(b.out, "ab")
        b.proc = subprocess.Popen(
            ["/bin/sh", "-c", 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$@"', "sh",
             BROKERD, "--config", b.config, "--runtimedir", RUNTIMEDIR],
            stdout=out, stderr=out, env=e, pass_fds=(3,),
            preexec_fn=lambda: os.dup2(fd, 3))
        out.close()

    def close(self):
        self.s.close()


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class TestActivationAcrossRestarts(unittest.TestCase):
    def setUp(self):
        self.b = Broker(top=GRACE)
        self.held = Held(self.b.sock)

    def tearDown(self):
        self.b.close()
        self.held.close()

    def test_serves_after_every_restart_and_stops_at_once(self):
        for n in range(3):
            self.held.start(self.b)
            msg = call(self.b.sock, "shell", {"command": "id"}, call_id=f"c{n}")
            self.assertEqual(msg["type"], "result", self.b.output())
            self.assertEqual(self.b.stop(timeout=120), 0, self.b.output())
            # The socket is the holder's: still there, still the same.
            self.assertTrue(os.path.exists(self.b.sock))
        self.assertEqual(self.b.output().count("(passed by systemd)"), 3, self.b.output())

    def test_stops_at_once_when_the_path_is_gone(self):
        self.held.start(self.b)
        self.assertEqual(call(self.b.sock, "shell", {"command": "id"})["type"], "result")
        # What a unit's RuntimeDirectory= removal did to the path under a running brokerd.
        os.unlink(self.b.sock)
        self.assertEqual(self.b.stop(timeout=120), 0, self.b.output())

    def test_refuses_to_start_when_the_path_is_gone(self):
        os.unlink(self.b.sock)
        self.held.start(self.b)
        self.assertEqual(self.b.proc.wait(60), 1, self.b.output())
        self.assertIn(f"socket activation: {self.b.sock} is gone", self.b.output())
        self.b.proc = None

    def test_refuses_to_start_when_the_path_is_another_socket(self):
        os.unlink(self.b.sock)
        other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        other.bind(self.b.sock)
        other.listen(1)
        try:
            self.held.start(self.b)
            self.assertEqual(self.b.proc.wait(60), 1, self.b.output())
        finally:
            other.close()
        self.assertIn(f"socket activation: {self.b.sock} is not the socket systemd passed",
                      self.b.output())
        self.b.proc = None

    def test_does_not_spin_on_the_non_blocking_socket(self):
        self.held.start(self.b)
        self.assertEqual(call(self.b.sock, "shell", {"command": "id"})["type"], "result")
        before = cpu_seconds(self.b.proc.pid)
        time.sleep(2)
        used = cpu_seconds(self.b.proc.pid) - before
        # Idle, brokerd sleeps in accept(): a worker spinning on EAGAIN burns a whole CPU.
        self.assertLess(used, 0.2, f"brokerd used {used:.2f} s of CPU in 2 s idle")
        self.assertEqual(self.b.stop(timeout=120), 0, self.b.output())


if __name__ == "__main__":
    unittest.main()
