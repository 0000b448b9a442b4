# SPDX-License-Identifier: Apache-2.0
"""Fail closed: an audit line that cannot be written means the call does not run.  brokerd
runs in a mount namespace of the test's own with its audit log on a small tmpfs (filled to
the last byte) or on a read-only mount, and the module's 2 s delay shows whether a call ran."""
import os
import signal
import subprocess
import time
import unittest

from opstest import BOXMAKER, Broker, call, skip_unless_root_and

NOT_RUN = "the audit log cannot be written: the call did not run"
WITHHELD = "the audit log cannot be written: the result is withheld"
DELAYED = "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 2000\n"
QUICK = "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 1000\n"


def in_ns(pid, *argv, check=True):
    return subprocess.run(["nsenter", "-t", str(pid), "-m", "--"] + list(argv), check=check,
                          capture_output=True, text=True, timeout=60)


class TestFailClosed(unittest.TestCase):
    def setUp(self):
        skip_unless_root_and("unshare", "nsenter", "mount")
        self.b = Broker(runtime=DELAYED)
        self.fs = f"{self.b.dir}/auditfs"
        os.mkdir(self.fs)
        self.b.audit = f"{self.fs}/audit.log"
        self.b.write_config()

    def tearDown(self):
        self.b.close()

    def start_in_namespace(self, size="64k"):
        # The tmpfs exists only in brokerd's namespace: it goes when brokerd does.
        self.b.start(prefix=["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                             f'mount -t tmpfs -o size={size},mode=0700 bxaudit "{self.fs}" '
                             '&& exec "$@"', "sh"])
        return self.b.proc.pid

    def read(self, call_id):
        t0 = time.monotonic()
        msg = call(self.b.sock, "read_file", {"path": f"{self.b.dir}/notes/a"}, call_id=call_id)
        return msg, time.monotonic() - t0

    def log(self, pid):
        return in_ns(pid, "cat", self.b.audit).stdout

    def test_a_full_disk_refuses_the_call_and_keeps_whole_lines(self):
        self.b.runtime = QUICK
        self.b.write_config()
        pid = self.start_in_namespace()
        msg, _ = self.read("before")
        self.assertEqual(msg["type"], "result")
        # Fill the file system to the last block.
        in_ns(pid, "dd", "if=/dev/zero", f"of={self.fs}/fill", "bs=1k", "count=100000",
              check=False)
        # The file's last page may still hold a line or two; a page holds fewer than 20.
        # A call whose "running" line fit but whose final line did not has run: its result
        # is withheld.
        for i in range(20):
            msg, took = self.read(f"full{i}")
            if msg["type"] == "failed" and msg["message"] == WITHHELD:
                continue
            if msg["type"] == "failed":
                break
        self.assertEqual(msg["type"], "failed")
        self.assertEqual(msg["message"], NOT_RUN)
        self.assertLess(took, 0.8, "the call ran: it took the module's 1 s")
        refused = f"full{i}"
        self.assertIn("cannot write the audit log, not running it", self.b.output())
        # Room again: calls run, and the file holds whole lines whose chain still holds.
        in_ns(pid, "rm", f"{self.fs}/fill")
        msg, _ = self.read("after")
        self.assertEqual(msg["type"], "result")
        text = self.log(pid)
        self.assertTrue(text.endswith("\n"))
        self.assertNotIn(f'"call":"{refused}"', text)
        self.assertIn('"call":"after"', text)
        r = in_ns(pid, BOXMAKER, "audit", "verify", self.b.audit, check=False)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.b.stop(), 0)

    def test_a_read_only_log_after_rotation_refuses_calls(self):
        pid = self.start_in_namespace()
        self.assertEqual(self.read("before")[0]["type"], "result")
        # Rotation: the file moves away and, on reload, brokerd opens the path again, which
        # is now a read-only mount.
        in_ns(pid, "sh", "-c", f'mv "{self.b.audit}" "{self.b.audit}.1" && '
                               f'touch "{self.b.audit}" && '
                               f'mount --bind "{self.b.audit}" "{self.b.audit}" && '
                               f'mount -o remount,bind,ro "{self.b.audit}"')
        self.b.proc.send_signal(signal.SIGHUP)
        self.b.wait_output("calls are refused until it can be written")
        msg, took = self.read("ro")
        self.assertEqual(msg["type"], "failed")
        self.assertEqual(msg["message"], NOT_RUN)
        self.assertLess(took, 1.5)
        # The log says why, as for a failed write.
        self.b.wait_output("brokerd: call ro: cannot write the audit log, not running it: "
                           "Read-only file system\n")
        # Writable again: the next reload opens it and the chain goes on from the old file.
        in_ns(pid, "umount", self.b.audit)
        self.b.proc.send_signal(signal.SIGHUP)
        time.sleep(0.3)
        self.assertEqual(self.read("again")[0]["type"], "result")
        r = in_ns(pid, BOXMAKER, "audit", "verify", f"{self.b.audit}.1", self.b.audit,
                  check=False)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.b.stop(), 0)

    def test_an_approved_call_whose_running_line_cannot_be_written_does_not_run(self):
        import socket
        from opstest import frame, read_frame
        admin = f"{self.b.dir}/admin.sock"
        self.b.top = f"admin_socket: {admin}\nadmin_group: 4242\n"
        self.b.write_config()
        with open(self.b.config, "a") as f:
            f.write(f"  - tools: [read_file]\n    paths: [{self.b.dir}/work]\n"
                    "    approval: always\n")
        pid = self.start_in_namespace()
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.settimeout(30)
        c.connect(self.b.sock)
        c.sendall(frame({"v": 1, "id": "ap1", "final": True,
                         "msg": {"type": "tool_request", "call": "ap1", "session": "s1",
                                 "tool": "read_file",
                                 "arguments": {"path": f"{self.b.dir}/work/a"}}}))
        pending = read_frame(c)
        self.assertEqual(pending["msg"]["type"], "pending_approval")
        approval = pending["msg"]["approval"][:32]
        # While it waits, the log becomes read-only (a rotation onto a read-only mount).
        in_ns(pid, "sh", "-c", f'mv "{self.b.audit}" "{self.b.audit}.1" && '
                               f'touch "{self.b.audit}" && '
                               f'mount --bind "{self.b.audit}" "{self.b.audit}" && '
                               f'mount -o remount,bind,ro "{self.b.audit}"')
        self.b.proc.send_signal(signal.SIGHUP)
        self.b.wait_output("calls are refused until it can be written")
        t0 = time.monotonic()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as a:
            a.settimeout(30)
            a.connect(admin)
            a.sendall(frame({"v": 1, "op": "approve", "approval": approval}))
            self.assertEqual(read_frame(a)["state"], "approved")
        final = read_frame(c)
        took = time.monotonic() - t0
        c.close()
        self.assertEqual(final["msg"]["type"], "failed")
        self.assertEqual(final["msg"]["message"], NOT_RUN)
        self.assertLess(took, 1.5, "the call ran: it took the module's 2 s")
        self.b.wait_output("brokerd: call ap1: cannot write the audit log, not running it: "
                           "Read-only file system\n")
        # The log before the rotation has the line of the call waiting, and nothing more.
        text = in_ns(pid, "cat", f"{self.b.audit}.1").stdout
        self.assertIn('"call":"ap1"', text)
        self.assertNotIn('"outcome":"running"', text)
        self.assertEqual(self.b.stop(), 0)

    def test_a_read_only_log_at_start_is_refused(self):
        proc = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
             f'mount -t tmpfs -o size=64k bxaudit "{self.fs}" && touch "{self.b.audit}" && '
             f'mount -o remount,ro "{self.fs}" && exec "$@"', "sh",
             os.environ["BX_BROKERD"], "--config", self.b.config,
             "--runtimedir", os.environ["BX_RUNTIMEDIR"]],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, _ = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(f"cannot open the audit log {self.b.audit}: Read-only file system", out)
        self.assertFalse(os.path.exists(self.b.sock), "it listened")


if __name__ == "__main__":
    unittest.main(verbosity=2)
