# SPDX-License-Identifier: Apache-2.0
"""brokerd under systemd's protocols, without systemd as PID 1: readiness and status sent to
a NOTIFY_SOCKET of the test's own, socket activation with systemd-socket-activate, and
SIGHUP reloads (also under load, and with configs that must stay out)."""
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import unittest

from opstest import Broker, call


class Notify:
    """A datagram socket standing in for systemd's notification socket."""

    def __init__(self, d):
        self.path = f"{d}/notify.sock"
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind(self.path)
        self.s.settimeout(10)

    def next(self):
        data, _ = self.s.recvfrom(4096)
        return dict(line.split("=", 1) for line in data.decode().splitlines() if "=" in line)

    def until(self, key, timeout=10):
        end = time.time() + timeout
        seen = []
        while time.time() < end:
            msg = self.next()
            seen.append(msg)
            if key in msg:
                return msg
        raise AssertionError(f"no {key} among {seen}")


class TestNotify(unittest.TestCase):
    def setUp(self):
        self.b = Broker(runtime="runtime:\n  module: fake\n  options:\n    mode: echo\n"
                                "    delay_ms: 2500\n")

    def tearDown(self):
        self.b.close()

    def test_ready_after_listening_then_status_reload_and_stopping(self):
        n = Notify(self.b.dir)
        self.b.start(env={"NOTIFY_SOCKET": n.path}, wait=False)
        ready = n.until("READY")
        self.assertEqual(ready["READY"], "1")
        # READY=1 comes after the socket listens: a client can connect at once.
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.b.sock)
        s.close()
        self.assertIn("listening on", ready["STATUS"])
        self.assertEqual(int(ready["MAINPID"]), self.b.proc.pid)

        # A call in flight shows in STATUS= within a second or so.
        t = threading.Thread(target=call, args=(self.b.sock, "shell", {"command": "x"}))
        t.start()
        status = n.until("STATUS")
        while "1 call(s) in flight" not in status["STATUS"]:
            status = n.until("STATUS")
        t.join()

        self.b.proc.send_signal(signal.SIGHUP)
        self.assertEqual(n.until("RELOADING")["RELOADING"], "1")
        self.assertEqual(n.until("READY")["READY"], "1")

        self.b.proc.send_signal(signal.SIGTERM)
        self.assertEqual(n.until("STOPPING")["STOPPING"], "1")
        self.assertEqual(self.b.stop(), 0)
        n.s.close()


class TestSocketActivation(unittest.TestCase):
    def setUp(self):
        if shutil.which("systemd-socket-activate") is None:
            raise unittest.SkipTest("systemd-socket-activate is not installed")
        self.b = Broker()

    def tearDown(self):
        self.b.close()

    def test_takes_the_passed_socket_and_leaves_it_in_place(self):
        self.b.start(prefix=["systemd-socket-activate", "-l", self.b.sock], wait=False)
        # systemd-socket-activate listens first and starts brokerd with the first connection.
        self.b.wait_listening()
        msg = call(self.b.sock, "shell", {"command": "id"})
        self.assertEqual(msg["type"], "result")
        self.b.wait_output("(passed by systemd)")
        self.assertEqual(self.b.stop(), 0)
        # The socket belongs to whoever passed it: brokerd neither removed it nor shut it down.
        self.assertTrue(os.path.exists(self.b.sock))

    def test_refuses_a_socket_listening_elsewhere(self):
        other = f"{self.b.dir}/other.sock"
        self.b.start(prefix=["systemd-socket-activate", "-l", other], wait=False)
        # Activation happens on the first connection, once systemd-socket-activate listens:
        # it binds before it listens, so the file may be there a moment before a connection
        # is taken.  (The bounds only end a hang.)
        for _ in range(6000):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(other)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                time.sleep(0.01)
            finally:
                s.close()
        self.assertEqual(self.b.proc.wait(60), 1)
        self.assertIn("the socket passed is not a Unix stream socket listening on "
                      f"{self.b.sock}", self.b.output())

    def test_starts_without_it(self):
        self.b.start()
        self.assertEqual(call(self.b.sock, "shell", {"command": "id"})["type"], "result")
        self.assertEqual(self.b.stop(), 0)
        self.assertFalse(os.path.exists(self.b.sock))


class TestReload(unittest.TestCase):
    def setUp(self):
        self.b = Broker(runtime="runtime:\n  module: fake\n  options:\n    mode: echo\n"
                                "    delay_ms: 300\n")

    def tearDown(self):
        self.b.close()

    def read(self, call_id="r1"):
        return call(self.b.sock, "read_file", {"path": f"{self.b.dir}/notes/a"}, call_id=call_id)

    def reload(self, expect):
        before = self.b.output().count(expect)
        self.b.proc.send_signal(signal.SIGHUP)
        end = time.time() + 10
        while self.b.output().count(expect) <= before:
            self.assertLess(time.time(), end, f"no {expect!r}:\n{self.b.output()}")
            time.sleep(0.02)

    def test_new_grants_serve_the_next_calls(self):
        self.b.start()
        self.assertEqual(self.read()["type"], "result")
        self.b.write_config(read=False)
        self.reload("1 grant(s) now serve")
        msg = self.read()
        self.assertEqual(msg["type"], "denied")
        self.b.write_config(read=True)
        self.reload("2 grant(s) now serve")
        self.assertEqual(self.read()["type"], "result")

    def test_a_config_that_does_not_check_stays_out(self):
        self.b.start()
        with open(self.b.config, "a") as f:
            f.write("sockt: /x\n")
        self.reload("reload: the config stays as it was")
        self.assertIn('unknown key "sockt"', self.b.output())
        self.assertEqual(self.read()["type"], "result")

    def test_a_change_only_a_restart_applies_stays_out(self):
        self.b.start()
        self.b.write_config(read=False, extra="max_connections: 3\n")
        self.reload('"max_connections" changed, which only a restart applies')
        # The grants of the refused file did not come in either.
        self.assertEqual(self.read()["type"], "result")

    def test_reload_under_load_drops_no_call(self):
        """8 clients call without pause while the grants flip 10 times (and a bad file comes
        and goes): every call gets an answer, a result or a denial, never an error; calls
        running across a reload finish with the grants they started with."""
        self.b.start()
        stop = threading.Event()
        answers, errors = [], []

        def client(k):
            i = 0
            while not stop.is_set():
                i += 1
                try:
                    answers.append(self.read(call_id=f"k{k}-{i}")["type"])
                except OSError as e:
                    errors.append(repr(e))

        threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for i in range(10):
            time.sleep(0.15)
            self.b.write_config(read=(i % 2 == 1))
            self.reload(f"{2 if i % 2 == 1 else 1} grant(s) now serve")
            if i == 4:
                with open(self.b.config, "a") as f:
                    f.write("grants: oops\n")
                self.reload("reload: the config stays as it was")
        stop.set()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertGreater(len(answers), 40)
        self.assertEqual(set(answers) - {"result", "denied"}, set())
        self.assertIn("result", answers)
        self.assertIn("denied", answers)
        self.assertEqual(self.b.stop(), 0)
        finals = [line for line in self.b.audit_lines() if line["outcome"] != "running"]
        self.assertEqual(len(finals), len(answers))


class TestLogLines(unittest.TestCase):
    """Without the journal, log lines are plain "brokerd: ..." lines; so too with a
    JOURNAL_STREAM that names standard error while the journal's socket is missing (the
    journal would drop them silently).  With a journal, the same lines carry PRIORITY and
    BOXMAKER_* fields: test_journal.py."""

    def run_with_full_audit(self, env=None):
        b = Broker(audit="/dev/full")
        try:
            if env == "stderr":
                out = open(b.out, "ab")
                st = os.fstat(out.fileno())
                out.close()
                env = {"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}
            b.start(env=env)
            msg = call(b.sock, "shell", {"command": "id"}, call_id="j1")
            self.assertEqual(msg["type"], "failed")
            self.assertEqual(b.stop(), 0)
            return b.output()
        finally:
            b.close()

    def test_plain_lines_without_the_journal(self):
        out = self.run_with_full_audit()
        self.assertIn("brokerd: call j1: cannot write the audit log, not running it: "
                      "No space left on device\n", out)

    def test_plain_lines_when_the_journal_is_not_there(self):
        if os.path.exists("/run/systemd/journal/socket"):
            raise unittest.SkipTest("a journal runs here: the fallback cannot be seen")
        out = self.run_with_full_audit(env="stderr")
        self.assertIn("brokerd: call j1: cannot write the audit log, not running it: "
                      "No space left on device\n", out)


class TestAuditOnStandardError(unittest.TestCase):
    def test_lines_chain_within_one_run(self):
        import hashlib
        import json
        b = Broker(audit="stderr")
        try:
            b.start()
            for i in range(3):
                call(b.sock, "shell", {"command": "id"}, call_id=f"c{i}")
            self.assertEqual(b.stop(), 0)
            lines = [line for line in b.output().splitlines() if line.startswith("{")]
            self.assertEqual(len(lines), 6)
            prev = "0" * 64
            for line in lines:
                self.assertEqual(json.loads(line)["prev"], prev)
                prev = hashlib.sha256(line.encode()).hexdigest()
        finally:
            b.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
