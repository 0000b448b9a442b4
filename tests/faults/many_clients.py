# SPDX-License-Identifier: Apache-2.0
"""many_clients.py SOCKET N SESSION ARGS: N clients connect to brokerd at once and each sends
one read_file call.  Prints results=, busy=, and exits 1 when any client got another answer or
none."""
import json
import socket
import struct
import sys
import threading

sock, n, session, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
answers = {}
barrier = threading.Barrier(n)


def read_exact(s, k):
    buf = b""
    while len(buf) < k:
        chunk = s.recv(k - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def client(i):
    call = f"m{i}"
    try:
        barrier.wait()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(180)
            s.connect(sock)
            body = json.dumps({"v": 1, "id": call, "final": True,
                               "msg": {"type": "tool_request", "call": call, "session": session,
                                       "tool": "read_file", "arguments": args}}).encode()
            try:
                s.sendall(struct.pack(">I", len(body)) + body)
            except (BrokenPipeError, ConnectionResetError):
                # Refused at once, brokerd may close before the request is in: its answer
                # ("brokerd is busy") is still waiting to be read.
                pass
            head = read_exact(s, 4)
            frame = json.loads(read_exact(s, struct.unpack(">I", head)[0])) if head else None
        msg = frame["msg"] if frame else {}
        if msg.get("type") == "result":
            answers[i] = "result"
        elif msg.get("type") == "error" and msg.get("detail") == "brokerd is busy":
            answers[i] = "busy"
        else:
            answers[i] = f"other: {msg}"
    except Exception as e:  # a client that got nothing is a failure of the case
        answers[i] = f"none: {e!r}"


threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
values = list(answers.values())
print(f"results={values.count('result')}")
print(f"busy={values.count('busy')}")
others = [v for v in values if v not in ("result", "busy")]
for v in others[:5]:
    print(v)
sys.exit(0 if len(values) == n and not others else 1)
