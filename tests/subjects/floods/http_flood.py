"""Flood over Streamable HTTP: answers every POST with a response that never
ends. Usage: http_flood.py PORT MODE, MODE `body` (one endless JSON body of
spaces, no Content-Length, never a complete message) or `events` (an endless
event stream of small JSON-RPC notifications, each a frame of its own) or
`chunked-events` (the same events with `Transfer-Encoding: chunked`, each in
a chunk of its own)."""

import socket
import sys

PORT = int(sys.argv[1])
MODE = sys.argv[2]
EVENT = b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n'


def serve(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    if MODE == "body":
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n[")
        block = b" " * 65536
    elif MODE == "chunked-events":
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        block = (b"%x\r\n" % len(EVENT) + EVENT + b"\r\n") * 512
    else:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
        block = EVENT * 512
    while True:
        conn.sendall(block)


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", PORT))
listener.listen(16)
while True:
    conn, _ = listener.accept()
    try:
        serve(conn)
    except OSError:
        pass
    finally:
        conn.close()
