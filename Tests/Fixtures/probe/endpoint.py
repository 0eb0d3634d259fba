#!/usr/bin/env python3
"""A connectivity endpoint, a captive portal and hostile servers in one, for the probe tests.

    endpoint.py PORT

Listens on every address on PORT (run it inside a test's network namespace) and answers by
path; prints "ready" on stdout once it listens. Each connection gets its own thread.
"""
import socket
import sys
import threading
import time


def answer(path):
    """The raw bytes to send for `path`, or a function that writes to the socket itself."""
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


def serve(conn):
    try:
        conn.settimeout(30)
        request = b""
        while b"\r\n\r\n" not in request and len(request) < 65536:
            data = conn.recv(4096)
            if not data:
                return
            request += data
        parts = request.split(b" ", 2)
        path = parts[1].decode("latin-1") if len(parts) > 2 else "/"
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
    server = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("::", port))
    server.listen(64)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
