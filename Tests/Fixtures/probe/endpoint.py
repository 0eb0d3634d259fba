#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""A connectivity endpoint, a captive portal and hostile servers in one, for the probe tests.

    endpoint.py PORT [CHOICES]

Listens on every address on PORT (run it inside a test's network namespace) and answers by
path; prints "ready" on stdout once it listens. Each connection gets its own thread.

/chosen answers as the path named in the file CHOICES/CLIENT-ADDRESS (e.g. "/garbage" in
CHOICES/10.9.0.1) does, and as /204 without one: a test switches one uplink's answers while
the probe's URI stays the same.
"""
import os
import socket
import sys
import threading
import time


# A TLS 1.3 ServerHello's record: what a TLS server sends first, here to a plain HTTP request.
SERVER_HELLO = (
    bytes.fromhex("160303007a020000760303")
    + bytes(range(32))
    + b"\x20"
    + bytes(range(32, 64))
    + bytes.fromhex("130100002e002b0002030400330024001d0020")
    + bytes(range(64, 96))
)


def answer(path):
    """The raw bytes to send for `path`, or a function that writes to the socket itself."""
    # Hostile answers that are not usable HTTP: each is `limited`, /close (nothing) is `none`.
    if path == "/garbage":
        return bytes(range(256)) * 100
    if path == "/version":
        return b"HTTP/9.9 999999999999 X\r\n\r\n"
    if path == "/status99":
        return b"HTTP/1.1 99 X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    if path == "/status600":
        return b"HTTP/1.1 600 X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    if path == "/cut":
        return b"HTTP/1."
    if path == "/tls":
        return SERVER_HELLO
    if path == "/close":
        return b""
    if path == "/204":
        return b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    if path == "/ok":
        return b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\nConnection: close\r\n\r\nNetpath\n"
    if path == "/302":
        return b"HTTP/1.1 302 Found\r\nLocation: http://portal.example/login?from=probe\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    if path == "/page":
        body = b"<!DOCTYPE html><html><body><form>Log in to the hotel Wi-Fi</form></body></html>"
        return b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
    if path == "/500":
        return b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    if path == "/wrong":
        return b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: close\r\n\r\nnope\n"
    if path == "/loop":
        return b"HTTP/1.1 302 Found\r\nLocation: /loop\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    if path == "/badutf8":
        return b"HTTP/1.1 302 Found\r\nLocation: http://portal.example/\xff\xfe\x1b[31m\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    if path == "/hang":
        return hang
    if path == "/headers":
        return headers
    if path == "/endless":
        return endless
    if path == "/slow":
        return slow
    return b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def hang(conn):
    time.sleep(3600)


def headers(conn):
    """10 MB of headers."""
    conn.sendall(b"HTTP/1.1 204 No Content\r\n")
    line = b"X-Filler: " + b"a" * 1000 + b"\r\n"
    for _ in range(10 * 1024):
        conn.sendall(line)
    conn.sendall(b"\r\n")


def endless(conn):
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n")
    chunk = b"<p>" + b"x" * 65536
    while True:
        conn.sendall(chunk)


def slow(conn):
    """A byte a minute."""
    for byte in b"HTTP/1.1 204 No Content\r\n\r\n":
        conn.sendall(bytes([byte]))
        time.sleep(60)


def chosen(conn, choices):
    """The path CHOICES names for this client's address, or /204."""
    client = conn.getpeername()[0].removeprefix("::ffff:")
    try:
        with open(os.path.join(choices, client)) as f:
            return f.read().strip() or "/204"
    except (OSError, TypeError):
        return "/204"


def serve(conn, choices):
    try:
        conn.settimeout(30)
        request = b""
        while b"\r\n\r\n" not in request and len(request) < 65536:
            data = conn.recv(4096)
            if not data:
                return
            request += data
            if request[:1] == b"\x16":
                # A TLS ClientHello (https:// to this plain port): what an HTTP server says to it.
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
        parts = request.split(b" ", 2)
        path = parts[1].decode("latin-1") if len(parts) > 2 else "/"
        if path == "/chosen":
            path = chosen(conn, choices)
        reply = answer(path)
        conn.settimeout(None)
        if callable(reply):
            reply(conn)
        else:
            conn.sendall(reply)
    except OSError:
        pass
    finally:
        conn.close()


def main():
    port = int(sys.argv[1])
    choices = sys.argv[2] if len(sys.argv) > 2 else None
    server = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("::", port))
    server.listen(64)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn, choices), daemon=True).start()


if __name__ == "__main__":
    main()
