// SPDX-License-Identifier: Apache-2.0
// toggle: flip IFF_UP on one interface COUNT times, alternating down/up, and print when.
//
// Usage: toggle IFNAME COUNT GAP_MS
//        toggle --rotate COUNT GAP_MS NETNS IFNAME [NETNS IFNAME ...]
//
// The first form runs inside the interface's network namespace (`ip netns exec NS
// bench/out/toggle ...`). Toggling the watched link itself is an admin toggle; toggling the other
// end of a veth pair (in a second namespace) changes the watched link's carrier.
//
// The second form toggles several interfaces, each in its named namespace (ip netns's
// /run/netns/NETNS), in rotation: the first target, GAP_MS later the second, …, then the first
// again, COUNT times each. bench/hooks.py uses it to interleave hook runners change by change, so
// that a drift of the machine's speed falls on each of them alike (BENCHMARKS.md).
//
// For each change it prints `seq ts_ns up|down` (rotation: `seq ts_ns up|down TARGET`, TARGET the
// 0-based index of the NETNS IFNAME pair, seq counting per target), where ts_ns is CLOCK_REALTIME
// read right before the SIOCSIFFLAGS ioctl, so latency measured from it includes the kernel's own
// work. Output is written after the last toggle, so printing never delays a change. Each
// interface's first change is the opposite of its current state; it ends in the state it started
// in when COUNT is even. Between changes it sleeps GAP_MS (absolute deadlines, so the pace does
// not drift) to keep one change's burst of netlink messages from coalescing with the next.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct toggle {
    long long ts_ns;
    int up;
};

struct target {
    int fd;  // an AF_INET socket made in the interface's namespace: ioctls act there
    struct ifreq ifr;
};

static long long now_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// A socket in network namespace `netns` (NULL: the current one) for interface `name`, its flags
// read. Returns 0, or 1 after printing why not.
static int open_target(struct target *target, const char *netns, const char *name) {
    if (strlen(name) >= IFNAMSIZ) {
        fprintf(stderr, "toggle: interface name too long: %s\n", name);
        return 1;
    }
    int home = -1;
    if (netns) {
        char path[256];
        snprintf(path, sizeof path, "/run/netns/%s", netns);
        home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (home < 0) {
            perror("toggle: /proc/self/ns/net");
            return 1;
        }
        int ns = open(path, O_RDONLY | O_CLOEXEC);
        if (ns < 0 || setns(ns, CLONE_NEWNET) < 0) {
            fprintf(stderr, "toggle: entering %s: %s\n", path, strerror(errno));
            return 1;
        }
        close(ns);
    }
    target->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int saved = errno;
    if (home >= 0) {
        if (setns(home, CLONE_NEWNET) < 0) {
            perror("toggle: returning to the first namespace");
            return 1;
        }
        close(home);
    }
    if (target->fd < 0) {
        fprintf(stderr, "toggle: socket: %s\n", strerror(saved));
        return 1;
    }
    memset(&target->ifr, 0, sizeof target->ifr);
    strncpy(target->ifr.ifr_name, name, IFNAMSIZ - 1);
    if (ioctl(target->fd, SIOCGIFFLAGS, &target->ifr) < 0) {
        fprintf(stderr, "toggle: SIOCGIFFLAGS %s: %s\n", name, strerror(errno));
        return 1;
    }
    return 0;
}

// A positive decimal number, or 0.
static long positive(const char *text) {
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    return errno || end == text || *end || value <= 0 ? 0 : value;
}

int main(int argc, char **argv) {
    int rotate = argc >= 2 && strcmp(argv[1], "--rotate") == 0;
    if (rotate ? argc < 6 || argc % 2 : argc != 4) {
        fprintf(stderr, "usage: %s IFNAME COUNT GAP_MS\n"
                        "       %s --rotate COUNT GAP_MS NETNS IFNAME [NETNS IFNAME ...]\n", argv[0], argv[0]);
        return 2;
    }
    long count = positive(argv[2]);  // the same places in both forms
    long gap_ms = positive(argv[3]);
    int targets = rotate ? (argc - 4) / 2 : 1;
    if (!count || !gap_ms) {
        fprintf(stderr, "toggle: COUNT and GAP_MS must be positive numbers\n");
        return 2;
    }
    struct target *target = calloc((size_t)targets, sizeof *target);
    struct toggle *log = calloc((size_t)count * (size_t)targets, sizeof *log);
    if (!target || !log) {
        perror("toggle: calloc");
        return 1;
    }
    for (int t = 0; t < targets; t++) {
        if (rotate ? open_target(&target[t], argv[4 + 2 * t], argv[5 + 2 * t]) : open_target(&target[t], NULL, argv[1]))
            return 1;
    }

    long total = count * targets;
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    for (long i = 0; i < total; i++) {
        struct target *t = &target[i % targets];
        t->ifr.ifr_flags ^= IFF_UP;
        log[i].up = (t->ifr.ifr_flags & IFF_UP) != 0;
        log[i].ts_ns = now_ns(CLOCK_REALTIME);
        if (ioctl(t->fd, SIOCSIFFLAGS, &t->ifr) < 0) {
            fprintf(stderr, "toggle: SIOCSIFFLAGS #%ld: %s\n", i, strerror(errno));
            return 1;
        }
        deadline.tv_nsec += gap_ms * 1000000L;
        while (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_nsec -= 1000000000L;
            deadline.tv_sec += 1;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {
        }
    }

    for (long i = 0; i < total; i++) {
        if (rotate)
            printf("%ld %lld %s %ld\n", i / targets, log[i].ts_ns, log[i].up ? "up" : "down", i % targets);
        else
            printf("%ld %lld %s\n", i, log[i].ts_ns, log[i].up ? "up" : "down");
    }
    for (int t = 0; t < targets; t++) close(target[t].fd);
    free(log);
    free(target);
    return 0;
}
