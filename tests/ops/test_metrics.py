# SPDX-License-Identifier: Apache-2.0
"""brokerd's metrics on metrics_socket, read raw, over HTTP and through `boxmaker stats`,
parsed with the Prometheus client library's own parser, against the calls the test made."""
import os
import socket
import subprocess
import unittest

from prometheus_client.parser import text_string_to_metric_families

from opstest import BOXMAKER, Broker, call, frame


def families(text):
    return {f.name: f for f in text_string_to_metric_families(text)}


def value(fams, family, sample, **labels):
    for s in fams[family].samples:
        if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    return 0.0


class TestMetrics(unittest.TestCase):
    def setUp(self):
        self.b = Broker(top="metrics_socket: {}/m.sock\n")
        self.b.top = f"metrics_socket: {self.b.dir}/m.sock\n"
        self.b.write_config()
        self.msock = f"{self.b.dir}/m.sock"

    def tearDown(self):
        self.b.close()

    def stats(self):
        r = subprocess.run([BOXMAKER, "stats", "--socket", self.msock], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def make_calls(self):
        d = self.b.dir
        for i in range(3):
            self.assertEqual(call(self.b.sock, "read_file", {"path": f"{d}/notes/a"},
                                  call_id=f"a{i}")["type"], "result")
        for i in range(2):
            self.assertEqual(call(self.b.sock, "read_file", {"path": "/etc/passwd"},
                                  call_id=f"d{i}")["type"], "denied")
        self.assertEqual(call(self.b.sock, "x" * 5000, {})["type"], "denied")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(self.b.sock)
            s.sendall(frame({"v": 1, "id": "e", "final": True, "msg": {"type": "nonsense"}}))
            s.recv(65536)

    def test_counts_and_histograms_parse_and_match_the_calls(self):
        self.b.start()
        fams = families(self.stats())
        self.assertEqual(value(fams, "boxmaker_calls", "boxmaker_calls_total"), 0)
        self.make_calls()
        fams = families(self.stats())
        self.assertEqual(fams["boxmaker_calls"].type, "counter")
        self.assertEqual(value(fams, "boxmaker_calls", "boxmaker_calls_total", tool="read_file",
                               decision="allowed", outcome="result"), 3)
        self.assertEqual(value(fams, "boxmaker_calls", "boxmaker_calls_total", tool="read_file",
                               decision="denied", outcome="denied"), 2)
        # Whatever name a model sends, the label is "unknown": the label set cannot grow.
        self.assertEqual(value(fams, "boxmaker_calls", "boxmaker_calls_total", tool="unknown",
                               decision="error", outcome="denied"), 1)
        self.assertEqual(value(fams, "boxmaker_calls", "boxmaker_calls_total", tool="none",
                               decision="error", outcome="error"), 1)
        for s in fams["boxmaker_calls"].samples:
            self.assertIn(s.labels["tool"], {"read_file", "write_file", "shell", "http_fetch",
                                             "mcp_call", "unknown", "none"})
        for name, count in (("boxmaker_decision_seconds", 7), ("boxmaker_run_seconds", 3)):
            f = fams[name]
            self.assertEqual(f.type, "histogram")
            buckets = [(s.labels["le"], s.value) for s in f.samples
                       if s.name == name + "_bucket"]
            self.assertEqual(buckets[-1][0], "+Inf")
            values = [v for _, v in buckets]
            self.assertEqual(values, sorted(values), "buckets must be cumulative")
            self.assertEqual(value(fams, name, name + "_count"), count)
            self.assertEqual(buckets[-1][1], count)
            self.assertGreater(value(fams, name, name + "_sum"), 0)
        self.assertEqual(fams["boxmaker_calls_in_flight"].type, "gauge")
        self.assertEqual(value(fams, "boxmaker_calls_in_flight", "boxmaker_calls_in_flight"), 0)
        self.assertEqual(value(fams, "boxmaker_module_failures", "boxmaker_module_failures_total"),
                         0)
        self.assertEqual(value(fams, "boxmaker_audit_failures", "boxmaker_audit_failures_total"),
                         0)
        self.assertEqual(fams["boxmaker_egress_connections"].type, "counter")
        for verdict in ("allowed", "refused"):
            self.assertEqual(value(fams, "boxmaker_egress_connections",
                                   "boxmaker_egress_connections_total", verdict=verdict), 0)
        self.assertEqual(self.b.stop(), 0)

    def test_module_failures_are_counted(self):
        self.b.runtime = "runtime:\n  module: fake\n  options:\n    mode: failed\n"
        self.b.write_config()
        self.b.start()
        self.assertEqual(call(self.b.sock, "read_file", {"path": f"{self.b.dir}/notes/a"})["type"],
                         "failed")
        fams = families(self.stats())
        self.assertEqual(value(fams, "boxmaker_module_failures", "boxmaker_module_failures_total"),
                         1)

    def test_http_get_gets_the_text_format(self):
        self.b.start()
        self.assertEqual(os.stat(self.msock).st_mode & 0o777, 0o660)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(self.msock)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.0 200 OK"))
        self.assertIn(b"Content-Type: text/plain; version=0.0.4", head)
        self.assertIn(f"Content-Length: {len(body)}".encode(), head)
        self.assertIn("boxmaker_calls_in_flight", families(body.decode()))

    def test_stats_without_brokerd_exits_3(self):
        r = subprocess.run([BOXMAKER, "stats", "--socket", self.msock], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 3)
        self.assertIn(f"cannot connect to {self.msock}", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
