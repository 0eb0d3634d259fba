// SPDX-License-Identifier: Apache-2.0
// hookstamp: the first thing the benchmark's hook does (bench/hooks.py).
//
// Usage: hookstamp FILE [ARG...]
//
// Reads CLOCK_REALTIME (the clock bench/toggle.c stamps changes with) as its very first action,
// then appends one line `ts_ns ARG...` to FILE with a single write() on an O_APPEND descriptor
// (so lines from hooks running at once never interleave), then reads its stdin to EOF (netpathd
// writes the event's JSON there; draining it keeps the writer from seeing EPIPE) and exits 0.
// A C helper rather than `date +%s%N`, so every listener's hook costs the same short exec.

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (argc < 2) {
        fprintf(stderr, "usage: hookstamp FILE [ARG...]\n");
        return 2;
    }
    char line[512];
    int n = snprintf(line, sizeof line, "%lld", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    for (int i = 2; i < argc && n < (int)sizeof line - 2; i++) {
        n += snprintf(line + n, sizeof line - (size_t)n - 1, " %s", argv[i][0] ? argv[i] : "-");
    }
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, line, (size_t)n) != n) {
        perror("hookstamp");
        return 1;
    }
    close(fd);
    char buf[4096];
    while (read(STDIN_FILENO, buf, sizeof buf) > 0) {
    }
    return 0;
}
