#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
#   Fuzz/netlink/capture-corpus.py DIR
#
# Writes the kernel's answers to link, address, route and rule dumps, one datagram per file
# (DIR/dump-TYPE-N), as the engine receives them: the netlink harness's seed corpus. Run it in a
# namespace with a few links, addresses, routes and rules (docs/fuzzing.md shows one).
import os
import socket
import struct
import sys

NLMSG_DONE = 3
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
DUMPS = {"link": (18, 0), "addr": (22, 0), "route": (26, 0), "rule": (34, 0)}  # RTM_GET*, family


def dump(sock, kind, message_type, family, seq, out):
    header = struct.pack("=LHHLL", 20, message_type, NLM_F_REQUEST | NLM_F_DUMP, seq, 0)
    sock.send(header + struct.pack("=Bxxx", family))
    count = 0
    while True:
        datagram = sock.recv(65536)
        count += 1
        with open(os.path.join(out, f"dump-{kind}-{count}"), "wb") as f:
            f.write(datagram)
        # The last datagram of a dump holds NLMSG_DONE.
        offset = 0
        while offset + 16 <= len(datagram):
            length, kind_of = struct.unpack_from("=LH", datagram, offset)
            if kind_of == NLMSG_DONE:
                return
            offset += max((length + 3) & ~3, 16)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    for seq, (kind, (message_type, family)) in enumerate(DUMPS.items(), start=1):
        dump(sock, kind, message_type, family, seq, out)


if __name__ == "__main__":
    main()
