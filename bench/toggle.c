// toggle: flip IFF_UP on one interface COUNT times, alternating down/up, and print when.
//
// Usage: toggle IFNAME COUNT GAP_MS
//
// Run it inside the interface's network namespace (`ip netns exec NS bench/out/toggle ...`).
// Toggling the watched link itself is an admin toggle; toggling the other end of a veth pair
// (in a second namespace) changes the watched link's carrier.
//
// For each change it prints `seq ts_ns up|down`, where ts_ns is CLOCK_REALTIME read right before
// the SIOCSIFFLAGS ioctl, so latency measured from it includes the kernel's own work. Output is
// written after the last toggle, so printing never delays a change. The first change is the
// opposite of the link's current state; the link ends in the state it started in when COUNT is
// even. Between changes it sleeps GAP_MS (absolute deadlines, so the pace does not drift) to keep
// one change's burst of netlink messages from coalescing with the next.

#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
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

static long long now_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s IFNAME COUNT GAP_MS\n", argv[0]);
        return 2;
    }
    const char *name = argv[1];
    long count = strtol(argv[2], NULL, 10);
    long gap_ms = strtol(argv[3], NULL, 10);
    if (strlen(name) >= IFNAMSIZ || count <= 0 || gap_ms <= 0) {
        fprintf(stderr, "toggle: bad arguments\n");
        return 2;
    }

    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        perror("toggle: socket");
        return 1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
        perror("toggle: SIOCGIFFLAGS");
        return 1;
    }
    short flags = ifr.ifr_flags;

    struct toggle *log = calloc((size_t)count, sizeof *log);
    if (!log) {
        perror("toggle: calloc");
        return 1;
    }

    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    for (long i = 0; i < count; i++) {
        flags ^= IFF_UP;
        ifr.ifr_flags = flags;
        log[i].up = (flags & IFF_UP) != 0;
        log[i].ts_ns = now_ns(CLOCK_REALTIME);
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
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

    for (long i = 0; i < count; i++) printf("%ld %lld %s\n", i, log[i].ts_ns, log[i].up ? "up" : "down");
    free(log);
    close(fd);
    return 0;
}
