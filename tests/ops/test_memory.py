# SPDX-License-Identifier: Apache-2.0
"""Flat memory: after a burst of 200 calls at once, idle pool workers leave, and brokerd's
resident memory then stays within 256 KiB over 5,000 calls."""
import os
import threading
import time
import unittest

from opstest import Broker, call

BURST = 200
CALLS = 5000
IDLE_S = 5  # the pool workers' idle time
IDLE_BOUND_S = 120  # how long a loaded machine may take to show them gone


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {key}")


class TestMemory(unittest.TestCase):
    def setUp(self):
        if os.environ.get("BX_SANITIZE") == "1":
            raise unittest.SkipTest("AddressSanitizer's allocator keeps freed memory in "
                                    "quarantine: RSS says nothing about brokerd's own")
        self.b = Broker(top="max_connections: 256\nmax_connections_per_uid: 256\n",
                        runtime="runtime:\n  module: fake\n  options:\n    mode: echo\n"
                                "    delay_ms: 300\n")

    def tearDown(self):
        self.b.close()

    def test_rss_stays_flat_after_a_burst(self):
        self.b.start()
        pid = self.b.proc.pid
        answers = []
        barrier = threading.Barrier(BURST)

        def one(i):
            barrier.wait()
            answers.append(call(self.b.sock, "shell", {"command": "x"}, call_id=f"b{i}")["type"])

        # The peak is sampled while the burst runs: read after it, a slow machine may already
        # have let idle workers go.
        peak = [0]
        bursting = threading.Event()
        bursting.set()

        def sample():
            while bursting.is_set():
                peak[0] = max(peak[0], status(pid, "Threads"))
                time.sleep(0.01)

        sampler = threading.Thread(target=sample)
        sampler.start()
        threads = [threading.Thread(target=one, args=(i,)) for i in range(BURST)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        bursting.clear()
        sampler.join()
        self.assertEqual(answers.count("result"), BURST)
        print(f"threads at the burst's peak: {peak[0]}")
        self.assertGreater(peak[0], BURST // 2)
        # Idle workers leave after IDLE_S; how soon a loaded machine shows it is not the point.
        time.sleep(IDLE_S)
        waited = time.monotonic()
        while status(pid, "Threads") >= 10 and time.monotonic() - waited < IDLE_BOUND_S:
            time.sleep(0.2)
        idle_threads = status(pid, "Threads")
        print(f"threads once idle: {idle_threads}")
        self.assertLess(idle_threads, 10)

        # The runtime's delay would make 5,000 calls take long: the reads are denied, which
        # runs brokerd's whole path but the module.
        def calls(n, tag):
            for i in range(n):
                msg = call(self.b.sock, "read_file", {"path": "/etc/passwd"},
                           call_id=f"{tag}{i}")
                assert msg["type"] == "denied"

        calls(200, "w")  # warm up: caches and the log's buffers settle
        before = status(pid, "VmRSS")
        calls(CALLS, "m")
        after = status(pid, "VmRSS")
        print(f"RSS before {before} KiB, after {CALLS} calls {after} KiB: "
              f"{after - before:+d} KiB")
        self.assertLessEqual(after - before, 256)
        self.assertEqual(self.b.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
