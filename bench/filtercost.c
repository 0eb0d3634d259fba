// SPDX-License-Identifier: Apache-2.0
// bench/filtercost.c: what it costs to read a route storm and drop the routes netpath does not
// keep, two ways (issue 14), measured by hand beside `ip -batch` (see BENCHMARKS.md):
//
//   libnl  libnl's own receive (nl_recvmsgs_report: a buffer per read, an nl_msg copy of every
//          message) with an NL_CB_VALID callback that reads rtm_dst_len and drops the route
//          before libnl parses it: the shim-function-in-libnl's-callback design;
//   walk   recvmmsg into fixed slots and a walk over the headers in place (np_walk's design).
//
// Usage: filtercost libnl|walk COUNT  (in the namespace, before the batch; exits after COUNT
// route messages) and prints the CPU it used (utime+stime, µs) per route message.
// Build: cc -O2 -o filtercost bench/filtercost.c $(pkg-config --cflags --libs libnl-route-3.0)
#define _GNU_SOURCE
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/socket.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

static unsigned long seen, kept;

static void count(struct nlmsghdr *nlh) {
    if (nlh->nlmsg_type != RTM_NEWROUTE && nlh->nlmsg_type != RTM_DELROUTE) return;
    seen++;
    const struct rtmsg *rtm = NLMSG_DATA(nlh);
    if (rtm->rtm_dst_len == 0) kept++;
}

static int on_valid(struct nl_msg *msg, void *arg) {
    (void)arg;
    count(nlmsg_hdr(msg));
    return NL_OK;
}

static double cpu_us(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec * 1e6 + usage.ru_utime.tv_usec + usage.ru_stime.tv_sec * 1e6 + usage.ru_stime.tv_usec;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s libnl|walk COUNT\n", argv[0]);
        return 2;
    }
    unsigned long want = strtoul(argv[2], NULL, 10);
    struct nl_sock *sk = nl_socket_alloc();
    if (!sk || nl_connect(sk, NETLINK_ROUTE) < 0) return 1;
    nl_socket_disable_seq_check(sk);
    nl_socket_add_membership(sk, RTNLGRP_IPV4_ROUTE);
    int size = 4 << 20;
    setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
    nl_socket_set_msg_buf_size(sk, 65536);
    nl_socket_disable_msg_peek(sk);
    nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_valid, NULL);
    fprintf(stderr, "ready\n");
    double start = -1;
    if (strcmp(argv[1], "libnl") == 0) {
        while (seen < want) {
            nl_recvmsgs_default(sk);
            if (start < 0) start = cpu_us();
        }
    } else {
        enum { SLOTS = 16, SLOT = 32768 };
        char *buffer = malloc(SLOTS * SLOT);
        struct mmsghdr headers[SLOTS];
        struct iovec vectors[SLOTS];
        while (seen < want) {
            memset(headers, 0, sizeof headers);
            for (int i = 0; i < SLOTS; i++) {
                vectors[i] = (struct iovec){buffer + i * SLOT, SLOT};
                headers[i].msg_hdr.msg_iov = &vectors[i];
                headers[i].msg_hdr.msg_iovlen = 1;
            }
            int n = recvmmsg(nl_socket_get_fd(sk), headers, SLOTS, MSG_WAITFORONE, NULL);
            if (start < 0) start = cpu_us();
            for (int i = 0; i < n; i++) {
                int left = (int)headers[i].msg_len;
                for (struct nlmsghdr *nlh = vectors[i].iov_base; NLMSG_OK(nlh, left); nlh = NLMSG_NEXT(nlh, left))
                    count(nlh);
            }
        }
    }
    double used = cpu_us() - start;
    printf("%s: %lu route messages, %lu kept, %.0f µs CPU, %.2f µs per route\n", argv[1], seen, kept, used,
           used / (double)seen);
    return 0;
}
