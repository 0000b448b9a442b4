#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# grants_answer.py SOCKET: sends brokerd one grants_request, as any peer does, and prints the
# answer's message (its "msg") as one line of JSON; status 1 when it is not a grants answer.
import json
import socket
import struct
import sys

with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
    s.connect(sys.argv[1])
    body = b'{"v":1,"id":"g-1","final":true,"msg":{"type":"grants_request"}}'
    s.sendall(struct.pack(">I", len(body)) + body)
    data = b""
    while True:
        more = s.recv(1 << 16)
        if not more:
            break
        data += more
msg = json.loads(data[4:])["msg"]
print(json.dumps(msg))
sys.exit(0 if msg.get("type") == "grants" else 1)
