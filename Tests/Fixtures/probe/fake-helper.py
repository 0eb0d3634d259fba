#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0

"""A stand-in for netpath-probe that speaks the wire format well or badly, for the client's tests.

    fake-helper.py BEHAVIOUR STATE_FILE --mode MODE     (its socket is fd 3)

BEHAVIOUR: good, slow (answers after 0.5 s), silent, exit, crash-first (exits on its first
request unless STATE_FILE exists, which it creates), garbage, control, wrong-id, overlong,
no-hello, bad-url, fatal, root, wrong-mode. Every request it reads is appended to STATE_FILE.log.
"""
import os
import socket
import sys
import time

behaviour, state = sys.argv[1], sys.argv[2]
mode = sys.argv[4] if len(sys.argv) > 4 else "http"
sock = socket.socket(fileno=3)
out = sock.makefile("wb", buffering=0)
inp = sock.makefile("rb")


def send(line):
    out.write(line)


if behaviour == "fatal":
    send(b"fatal sandbox:%20seccomp_load:%20Invalid%20argument\n")
    sys.exit(2)
if behaviour == "root":
    send(b"hello 1 0 0 0 %s\n" % mode.encode())
elif behaviour == "wrong-mode":
    send(b"hello 1 65534 65534 0 %s\n" % (b"icmp" if mode == "http" else b"http"))
elif behaviour != "no-hello":
    send(b"hello 1 65534 65534 0 %s\n" % mode.encode())

count = 0
for line in inp:
    count += 1
    with open(state + ".log", "ab") as log:
        log.write(line)
    rid = line.split(b" ")[1]
    if behaviour == "crash-first" and not os.path.exists(state):
        open(state, "w").close()
        os._exit(1)
    if behaviour == "exit":
        os._exit(3)
    if behaviour == "silent":
        continue
    if behaviour == "slow":
        time.sleep(0.5)
    if behaviour == "garbage":
        send(b"result %s full - - - \n" % rid)
    elif behaviour == "control":
        send(b"result %s full - - - \x1b[31mred\n" % rid)
    elif behaviour == "wrong-id":
        send(b"result 999999 full - - - ok\n")
    elif behaviour == "overlong":
        send(b"result " + b"9" * 100000)
    elif behaviour == "bad-url":
        send(b"result %s portal 1500 0 http://portal/%%FF%%1B[2J HTTP%%20302\n" % rid)
    else:
        send(b"result %s full 1500 0 - request%%20%d\n" % (rid, count))
