// SPDX-License-Identifier: Apache-2.0
// The system calls netpath needs that Swift's Glibc module does not offer: glibc declares them
// (and their constants) only under _GNU_SOURCE, which a Swift module cannot set without changing
// types it shares with Glibc (fd_set's layout). system.c is compiled with _GNU_SOURCE and names
// every constant with the header's own macro, so no number is copied into Swift.
#ifndef NETPATH_CSYSTEM_H
#define NETPATH_CSYSTEM_H

#include <stdint.h>
#include <sys/types.h>

/// `pipe2(fds, O_CLOEXEC)`: both ends close-on-exec from the start. With `pipe` then `fcntl`, a
/// process another thread spawns in between inherits the ends (and a hook waiting for the end of
/// its stdin then waits for that process too).
int np_pipe_cloexec(int fds[2]);

/// `O_PATH`: opens a path without opening the file (the hook trust walk).
int np_o_path(void);

/// `setns(fd, CLONE_NEWNET)`: moves the calling thread into the network namespace `fd`.
int np_setns_net(int fd);

/// `eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)`.
int np_eventfd_nonblocking(void);

/// The steps of `np_spawn`, in order: the `clone` itself (or a kernel without CLONE_PIDFD), then
/// the child's own before its exec, then the exec.
enum np_spawn_step {
    NP_SPAWN_CLONE = 0,
    NP_SPAWN_PROCESS_GROUP = 1,
    NP_SPAWN_STANDARD_STREAMS = 2,
    NP_SPAWN_WORKING_DIRECTORY = 3,
    NP_SPAWN_DESCRIPTORS = 4,
    NP_SPAWN_SIGNAL_MASK = 5,
    NP_SPAWN_EXEC = 6,
};

/// Spawns `path` with `argv` and `envp` (NULL-terminated) the way hooks are started: in a new
/// process group of its own, every signal at its default disposition and none blocked, `in`,
/// `out` and `err` as its descriptors 0, 1 and 2, every other descriptor closed, and `directory`
/// as its working directory.
///
/// The calling thread forks (`clone` with CLONE_VM | CLONE_VFORK, the child on a stack lent from
/// the caller's frame) and returns once the child has exec'd or failed to; CLONE_PIDFD gives the
/// pidfd with the pid, so no other process can ever be confused with the child. Not glibc's
/// `posix_spawn`, which also maps and unmaps a stack for each child and needs a `pidfd_open` after
/// it: this gets the pidfd in the same call and does less (BENCHMARKS.md, "The clone alone").
///
/// Needs Linux 5.4 (CLONE_PIDFD from 5.2, `waitid(P_PIDFD)` from 5.4; Debian 12 ships 6.1).
///
/// Returns 0 and sets `*pid` and `*pidfd` (close-on-exec), or an errno value (the exec's own
/// error included; the failed child is then reaped) and sets `*step` to the step that failed.
int np_spawn(pid_t *pid, int *pidfd, const char *path, char *const argv[], char *const envp[],
             const char *directory, int in, int out, int err, enum np_spawn_step *step);

/// Reaps the exited process of `pidfd` (`waitid(P_PIDFD, …, WEXITED)`). Sets `*signaled` to 1
/// when a signal ended it, and `*status` to the exit code or the signal. Returns 0 or -1 (errno).
int np_pidfd_reap(int pidfd, int *signaled, int *status);

/// The bytes a TCP socket has received from its peer (`TCP_INFO`'s `tcpi_bytes_received`, which
/// glibc's `struct tcp_info` leaves out): whether a server sent anything at all, even what no
/// parser accepted. Returns 0 and sets `*bytes`, or -1 (errno: not a TCP socket, say).
int np_tcp_bytes_received(int fd, uint64_t *bytes);

#endif
