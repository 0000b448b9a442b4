# SPDX-License-Identifier: Apache-2.0
"""brokerd's log lines in the journal, without journald: brokerd runs in a mount namespace of
the test's own whose /run/systemd/journal is a tmpfs, with the test's own datagram socket bound
over /run/systemd/journal/socket, and with JOURNAL_STREAM naming its standard error, as
systemd sets it.  The test decodes journald's native protocol (KEY=VALUE lines, the
length-prefixed binary form that a message with a newline takes; the memfd that libsystemd
passes with SCM_RIGHTS for an entry too large for a datagram is read too, though no line of
brokerd's is that large) and checks each line's MESSAGE, PRIORITY and BOXMAKER_* fields; and
that the same lines are plain "brokerd: ..." lines on standard error when JOURNAL_STREAM
names another file.

TestRealJournald does the same with Debian's systemd-journald itself (it runs without systemd
as PID 1) and reads the entries back with journalctl, as an operator would."""
import array
import os
import signal
import socket
import struct
import threading
import time
import unittest

from opstest import Broker, call, skip_unless_root_and

# The journal's socket inside brokerd's namespace: a tmpfs over /run/systemd/journal (or,
# where there is no such folder, over /run), and the test's socket bound onto the path.
NAMESPACE = r'''
set -e
if [ -d /run/systemd/journal ]; then
  mount -t tmpfs -o mode=0755 bxjournal /run/systemd/journal
else
  mount -t tmpfs -o mode=0755 bxrun /run
  mkdir -p /run/systemd/journal
fi
: > /run/systemd/journal/socket
mount --bind "$BX_JOURNAL_SOCKET" /run/systemd/journal/socket
exec "$@" ${BX_DEBUG:+--debug}
'''


def decode(data):
    """One entry of journald's native protocol as a dict (a repeated key keeps its last)."""
    fields = {}
    i = 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            key, value = line.split(b"=", 1)
            i = nl + 1
        else:
            # KEY\n, a 64-bit little-endian length, the value, \n.
            key = line
            (size,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            value = data[nl + 9:nl + 9 + size]
            if data[nl + 9 + size:nl + 10 + size] != b"\n":
                raise AssertionError(f"bad binary field {key!r} in {data!r}")
            i = nl + 10 + size
        fields[key.decode()] = value.decode()
    return fields


class Journal:
    """A datagram socket standing in for journald's."""

    def __init__(self, path):
        self.path = path
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind(path)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.entries = []

    def read(self, timeout=0.2):
        """Reads every entry that arrives within TIMEOUT of the last one."""
        self.s.settimeout(timeout)
        while True:
            try:
                data, anc, _, _ = self.s.recvmsg(1 << 20, socket.CMSG_SPACE(4 * 4))
            except socket.timeout:
                return self.entries
            fds = array.array("i")
            for level, kind, cdata in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(cdata[:len(cdata) - len(cdata) % fds.itemsize])
            for fd in fds:
                # A large entry comes as a sealed memfd with an empty datagram.
                with os.fdopen(fd, "rb") as f:
                    data += f.read()
            if data:
                self.entries.append(decode(data))

    def until(self, text, timeout=10):
        end = time.time() + timeout
        while time.time() < end:
            for e in self.read():
                if text in e.get("MESSAGE", ""):
                    return e
        raise AssertionError(f"no {text!r} in the journal: {self.entries}")

    def close(self):
        self.s.close()


class TestJournal(unittest.TestCase):
    def setUp(self):
        skip_unless_root_and("unshare", "mount")
        # /dev/full: every audit line fails, so a call logs lines of its own.
        self.b = Broker(audit="/dev/full")
        self.journal = Journal(f"{self.b.dir}/journal.sock")

    def tearDown(self):
        self.journal.close()
        self.b.close()

    def start(self, stream, debug=False):
        env = {"JOURNAL_STREAM": stream, "BX_JOURNAL_SOCKET": self.journal.path}
        if debug:
            env["BX_DEBUG"] = "1"
        self.b.start(prefix=["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                             NAMESPACE, "sh"], env=env)

    def stderr_stream(self):
        # Broker.start appends to this file: its device and inode are brokerd's standard error.
        with open(self.b.out, "ab") as f:
            st = os.fstat(f.fileno())
        return f"{st.st_dev}:{st.st_ino}"

    def test_lines_carry_their_priority_and_the_calls_fields(self):
        self.start(self.stderr_stream())
        listening = self.journal.until("listening on ")
        self.assertEqual(listening["PRIORITY"], "6")
        self.assertEqual(listening["SYSLOG_IDENTIFIER"], "brokerd")
        # Every entry would name the same function of brokerd's: left out.
        self.assertNotIn("CODE_FILE", listening)
        # Not a call's line: no BOXMAKER_* field at all.
        self.assertEqual([k for k in listening if k.startswith("BOXMAKER_")], [])
        self.assertEqual(listening["MESSAGE"],
                         f"listening on {self.b.sock} with runtime fake, 2 grant(s)")

        # The module's own line, with the priority of its level.
        module = self.journal.until("fake: info: fake runtime ready")
        self.assertEqual(module["PRIORITY"], "6")

        msg = call(self.b.sock, "shell", {"command": "id"}, call_id="j1", session="sess-9")
        self.assertEqual(msg["type"], "failed")
        refused = self.journal.until("call j1: cannot write the audit log, not running it")
        self.assertEqual(refused["MESSAGE"], "call j1: cannot write the audit log, not running it: "
                                             "No space left on device")
        self.assertEqual(refused["PRIORITY"], "2")  # LOG_CRIT
        self.assertEqual(refused["BOXMAKER_CALL"], "j1")
        self.assertEqual(refused["BOXMAKER_SESSION"], "sess-9")
        self.assertEqual(refused["BOXMAKER_TOOL"], "shell")
        self.assertEqual(refused["BOXMAKER_GRANT"], "2")
        # The call's final line could not be written either: its own line, same fields.
        final = self.journal.until("call j1: cannot write the audit log: ")
        self.assertEqual(final["PRIORITY"], "2")
        self.assertEqual((final["BOXMAKER_CALL"], final["BOXMAKER_GRANT"]), ("j1", "2"))

        # A denied call's line has no grant.
        call(self.b.sock, "read_file", {"path": "/etc/passwd"}, call_id="j2", session="sess-9")
        denied = self.journal.until("call j2: cannot write the audit log: ")
        self.assertEqual(denied["BOXMAKER_TOOL"], "read_file")
        self.assertNotIn("BOXMAKER_GRANT", denied)

        # A reload refused, then taken.
        with open(self.b.config, "a") as f:
            f.write("bogus_key: 1\n")
        self.b.proc.send_signal(signal.SIGHUP)
        bad = self.journal.until("reload: the config stays as it was")
        self.assertEqual(bad["PRIORITY"], "3")  # LOG_ERR
        # A message of several lines, sent in the binary form, arrives whole.
        self.assertRegex(bad["MESSAGE"], r"^reload: the config stays as it was:\n.*brokerd\.yaml:"
                                         r"\d+:1: unknown key \"bogus_key\"")
        self.b.write_config()
        self.b.proc.send_signal(signal.SIGHUP)
        ok = self.journal.until("reload: ")
        while "now serve" not in ok["MESSAGE"]:
            ok = self.journal.until("now serve")
        self.assertEqual(ok["PRIORITY"], "5")  # LOG_NOTICE

        self.assertEqual(self.b.stop(), 0)
        stopping = self.journal.until("stopping")
        self.assertEqual(stopping["MESSAGE"], "Terminated: stopping")
        self.assertEqual(stopping["PRIORITY"], "5")
        # None of these lines also went to standard error.
        self.assertNotIn("brokerd: ", self.b.output())

    def test_warnings_and_an_audit_log_on_standard_error(self):
        # audit: stderr writes its JSON lines to standard error as they are, not through the
        # journal's socket; brokerd's own lines still go to the journal.
        self.b.audit = "stderr"
        self.b.top = "grace_ms: 200\n"
        self.b.runtime = "runtime:\n  module: fake\n  options:\n    mode: echo\n    delay_ms: 20000\n"
        self.b.write_config()
        self.start(self.stderr_stream())
        self.journal.until("listening on ")
        t = threading.Thread(target=lambda: call(self.b.sock, "shell", {"command": "id"},
                                                 call_id="w1"))
        t.start()
        end = time.time() + 10
        while '"outcome":"running"' not in self.b.output() and time.time() < end:
            time.sleep(0.02)
        self.b.proc.send_signal(signal.SIGTERM)
        warning = self.journal.until("still running after 200 ms; cancelling them")
        self.assertEqual(warning["MESSAGE"], "1 call(s) still running after 200 ms; cancelling them")
        self.assertEqual(warning["PRIORITY"], "4")  # LOG_WARNING
        self.assertEqual(self.b.stop(), 0)
        t.join()
        out = self.b.output()
        self.assertIn('"call":"w1"', out)
        self.assertIn('"outcome":"cancelled"', out)
        self.assertNotIn("brokerd: ", out)
        self.assertEqual([e for e in self.journal.read() if '"outcome"' in e.get("MESSAGE", "")],
                         [])
        # The call ran, but without --debug the module's debug line is not logged.
        self.assertEqual([e for e in self.journal.entries if "debug" in e["MESSAGE"]], [])

    def test_a_modules_debug_lines_with_debug(self):
        self.b.audit = f"{self.b.dir}/audit.log"
        self.b.write_config()
        self.start(self.stderr_stream(), debug=True)
        self.assertEqual(call(self.b.sock, "shell", {"command": "id"}, call_id="d1")["type"],
                         "result")
        debug = self.journal.until("fake: debug: run d1: shell")
        self.assertEqual(debug["PRIORITY"], "7")  # LOG_DEBUG
        # Logged from the thread that runs the call: the call's line.
        self.assertEqual((debug["BOXMAKER_CALL"], debug["BOXMAKER_SESSION"],
                          debug["BOXMAKER_TOOL"], debug["BOXMAKER_GRANT"]),
                         ("d1", "s1", "shell", "2"))
        # Logged at start, outside any call: no call fields.
        ready = self.journal.until("fake: info: fake runtime ready")
        self.assertNotIn("BOXMAKER_CALL", ready)
        self.assertEqual(self.b.stop(), 0)

    def test_a_call_that_needs_approval_logs_with_its_fields(self):
        self.b.top = f"admin_socket: {self.b.dir}/admin.sock\nadmin_group: 4242\n"
        self.b.write_config()
        with open(self.b.config, "a") as f:
            f.write(f"  - tools: [read_file]\n    paths: [{self.b.dir}/work]\n"
                    "    approval: always\n")
        self.start(self.stderr_stream())
        msg = call(self.b.sock, "read_file", {"path": f"{self.b.dir}/work/a"}, call_id="p1",
                   session="sess-3")
        # Its pending line cannot be written: it does not wait.
        self.assertEqual(msg["type"], "failed")
        line = self.journal.until("call p1: cannot write the audit log, not running it")
        self.assertEqual(line["PRIORITY"], "2")
        self.assertEqual((line["BOXMAKER_CALL"], line["BOXMAKER_SESSION"], line["BOXMAKER_TOOL"],
                          line["BOXMAKER_GRANT"]), ("p1", "sess-3", "read_file", "3"))
        self.assertEqual(self.b.stop(), 0)

    def test_plain_lines_when_standard_error_is_not_the_journals_stream(self):
        # The journal's socket is there, but JOURNAL_STREAM names another file (a service
        # whose standard error was redirected): standard error gets plain lines.
        self.start("1:1")
        call(self.b.sock, "shell", {"command": "id"}, call_id="j1")
        self.assertEqual(self.b.stop(), 0)
        out = self.b.output()
        self.assertIn("brokerd: call j1: cannot write the audit log, not running it: "
                      "No space left on device\n", out)
        self.assertIn("brokerd: fake: info: fake runtime ready", out)
        self.assertIn("brokerd: Terminated: stopping\n", out)
        self.assertEqual(self.journal.read(), [])


# Debian's systemd-journald itself, without systemd as PID 1: in brokerd's mount namespace,
# with a tmpfs /run, a config of the test's own (volatile storage, no kernel log, nothing
# forwarded), and brokerd's standard error connected to its stream socket by systemd-cat, as
# a service's is.  The entries are read back with journalctl.
JOURNALD = "/lib/systemd/systemd-journald"
JOURNALD_CONF = """[Journal]
Storage=volatile
ReadKMsg=no
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
"""
REAL = r'''
set -e
mount -t tmpfs -o mode=0755 bxrun /run
mkdir -p /run/systemd/journal /run/log/journal
mount --bind "$BX_JOURNALD_CONF" /etc/systemd/journald.conf
/lib/systemd/systemd-journald &
echo $! > "$BX_JOURNALD_PID"
i=0
while [ ! -S /run/systemd/journal/stdout ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done
# JOURNAL_STREAM as systemd sets it for a service: the device and inode of its stream.
exec systemd-cat -t brokerd sh -c \
  'JOURNAL_STREAM=$(stat -L -c "%d:%i" /proc/self/fd/2) exec "$@"' sh "$@"
'''


class TestRealJournald(unittest.TestCase):
    def setUp(self):
        skip_unless_root_and("unshare", "nsenter", "mount", "systemd-cat", "journalctl", "stat")
        if not os.access(JOURNALD, os.X_OK):
            raise unittest.SkipTest(f"needs {JOURNALD} (Debian's systemd)")
        try:
            with open("/etc/machine-id") as f:
                if len(f.read().strip()) != 32:
                    raise unittest.SkipTest("journald needs /etc/machine-id, which is empty")
        except FileNotFoundError:
            raise unittest.SkipTest("journald needs /etc/machine-id, which is missing")
        self.b = Broker(audit="/dev/full")
        self.conf = f"{self.b.dir}/journald.conf"
        with open(self.conf, "w") as f:
            f.write(JOURNALD_CONF)
        self.pidfile = f"{self.b.dir}/journald.pid"
        self.journald = None

    def tearDown(self):
        if self.journald is not None:
            try:
                os.kill(self.journald, signal.SIGTERM)
            except ProcessLookupError:
                pass
        self.b.close()

    def start(self):
        self.b.start(prefix=["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                             REAL, "sh"],
                     env={"BX_JOURNALD_CONF": self.conf, "BX_JOURNALD_PID": self.pidfile})
        with open(self.pidfile) as f:
            self.journald = int(f.read())

    def entries(self, *matches, want=1, timeout=10):
        """The journal's brokerd entries (journalctl -o json) matching MATCHES, once there are
        at least WANT of them."""
        import json
        import subprocess
        end = time.time() + timeout
        while True:
            r = subprocess.run(["nsenter", "-t", str(self.journald), "-m", "--", "journalctl",
                                "-D", "/run/log/journal", "-o", "json", "--no-pager",
                                "SYSLOG_IDENTIFIER=brokerd"] + list(matches),
                               capture_output=True, text=True, timeout=30)
            found = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
            if len(found) >= want or time.time() > end:
                return found
            time.sleep(0.1)

    def test_journald_stores_the_lines_with_their_fields(self):
        self.start()
        msg = call(self.b.sock, "shell", {"command": "id"}, call_id="j1", session="sess-9")
        self.assertEqual(msg["type"], "failed")
        # The call's own lines, found by its field as an operator would.
        lines = self.entries("BOXMAKER_CALL=j1", want=2)
        self.assertEqual(sorted(e["MESSAGE"] for e in lines),
                         ["call j1: cannot write the audit log, not running it: No space left "
                          "on device",
                          "call j1: cannot write the audit log: No space left on device"])
        for e in lines:
            self.assertEqual(e["_TRANSPORT"], "journal")
            self.assertEqual(e["PRIORITY"], "2")
            self.assertEqual(e["BOXMAKER_SESSION"], "sess-9")
            self.assertEqual(e["BOXMAKER_TOOL"], "shell")
            self.assertEqual(e["BOXMAKER_GRANT"], "2")
            self.assertEqual(int(e["_PID"]), self.b.proc.pid)
        # -p: what needs a look, and not the start's info line.
        messages = [e["MESSAGE"] for e in self.entries("-p", "warning", want=2)]
        self.assertEqual(len(messages), 2)
        listening = self.entries("PRIORITY=6")
        self.assertTrue(any(e["MESSAGE"].startswith("listening on ") for e in listening))
        self.assertEqual(self.b.stop(), 0)
        stopping = self.entries("MESSAGE=Terminated: stopping")
        self.assertEqual(stopping[0]["PRIORITY"], "5")
        # Nothing came through the stream: no plain "brokerd: " line.
        self.assertEqual(self.entries("_TRANSPORT=stdout", want=0), [])

    def test_an_audit_log_on_standard_error_reaches_the_journal_as_the_stream(self):
        self.b.audit = "stderr"
        self.b.write_config()
        self.start()
        self.assertEqual(call(self.b.sock, "shell", {"command": "id"}, call_id="a1")["type"],
                         "result")
        stream = self.entries("_TRANSPORT=stdout", want=2)
        import json
        audit = [json.loads(e["MESSAGE"]) for e in stream]
        self.assertEqual([(a["call"], a["outcome"]) for a in audit],
                         [("a1", "running"), ("a1", "result")])
        self.assertTrue(all("BOXMAKER_CALL" not in e for e in stream))
        self.assertEqual(self.b.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
