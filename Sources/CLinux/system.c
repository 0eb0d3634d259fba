// SPDX-License-Identifier: Apache-2.0
// Compiled with the GNU extensions visible: see include/CLinux.h for why they live here.
#define _GNU_SOURCE 1

#include "CLinux.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int np_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int np_o_path(void) { return O_PATH; }

int np_setns_net(int fd) { return setns(fd, CLONE_NEWNET); }

int np_eventfd_nonblocking(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

int np_tcp_bytes_received(int fd, uint64_t *bytes) {
    struct tcp_info info;
    socklen_t length = sizeof(info);
    memset(&info, 0, sizeof(info));
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return -1;
    // A kernel older than the field (4.1) fills less: nothing known to have arrived.
    if (length < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(info.tcpi_bytes_received)) {
        *bytes = 0;
        return 0;
    }
    *bytes = info.tcpi_bytes_received;
    return 0;
}

/// A system call that returns -errno on failure, as the kernel does, so that every step of the
/// child reads alike. The vfork-style child may write errno through `syscall()`: it shares the
/// spawning thread's thread-local storage, but that thread is suspended until the child has
/// exec'd or exited (CLONE_VFORK), and reads errno after the clone only when the clone failed.
static long np_sys(long number, long a, long b, long c, long d, long e) {
    long result = syscall(number, a, b, c, d, e);
    return result < 0 ? -errno : result;
}

#define NP_SYS1(n, a) np_sys(n, (long)(a), 0, 0, 0, 0)
#define NP_SYS2(n, a, b) np_sys(n, (long)(a), (long)(b), 0, 0, 0)
#define NP_SYS3(n, a, b, c) np_sys(n, (long)(a), (long)(b), (long)(c), 0, 0)
#define NP_SYS4(n, a, b, c, d) np_sys(n, (long)(a), (long)(b), (long)(c), (long)(d), 0)

/// What the spawning thread hands its child, which shares its memory until the exec.
struct np_spawn_child {
    const char *path;
    char *const *argv;
    char *const *envp;
    const char *directory;
    int in, out, err;
    /// The errno of the step that failed, written by the child before it exits; 0 when it exec'd.
    volatile int failure;
    /// The step under way (`enum np_spawn_step`): the one that failed, when `failure` is set.
    volatile int step;
};

/// Resets `signal`'s disposition: the kernel's struct (handler, flags, restorer, mask) all zero
/// is SIG_DFL, no flags, no mask. The system call itself: glibc's `sigaction` refuses its two
/// internal signals (32, 33), and its mask wrapper drops them from a set to block, so the parent
/// could not block them around the clone either.
static long np_raw_default(int signal) {
    unsigned long action[4] = {0};
    return NP_SYS4(SYS_rt_sigaction, signal, action, NULL, _NSIG / 8);
}

static long np_raw_sigmask(int how, const sigset_t *set, sigset_t *old) {
    return NP_SYS4(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

/// Every disposition back to the default, before signals are unblocked just before the exec:
/// - A handled signal: between the unblocking and the exec, the agent's handler (Swift's
///   backtracer's, Dispatch's, glibc's own for 32 and 33) would run here, on the agent's memory
///   and thread-local storage.
/// - An ignored one: the exec keeps it ignored. A service manager starts the agent with SIGPIPE
///   ignored, and swift-service-lifecycle ignores SIGTERM, SIGINT and SIGHUP to receive them
///   from Dispatch instead.
static void np_reset_dispositions(void) {
    for (int signal = 1; signal < _NSIG; signal++) {
        if (signal == SIGKILL || signal == SIGSTOP) continue;
        np_raw_default(signal);
    }
}

/// Puts `fd` at `target`. When they are the same, dup2 would leave FD_CLOEXEC set: it is cleared.
/// (dup3, not dup2, which arm64 lacks; dup3 refuses equal descriptors, which take the other way.)
static long np_place(int fd, int target) {
    if (fd != target) {
        long placed = NP_SYS3(SYS_dup3, fd, target, 0);
        return placed < 0 ? placed : 0;
    }
    long flags = NP_SYS2(SYS_fcntl, fd, F_GETFD);
    return flags < 0 ? flags : NP_SYS3(SYS_fcntl, fd, F_SETFD, flags & ~FD_CLOEXEC);
}

/// Closes every descriptor from 3 up. `close_range` (Linux 5.9) may be missing, or refused by a
/// container's older seccomp profile: then `/proc/self/fd` is read with `getdents64` into a buffer
/// on the stack, as glibc's `posix_spawn` does, and each descriptor closed.
static long np_close_from_3(void) {
    long closedAll = NP_SYS3(SYS_close_range, 3, ~0U, 0);
    if (closedAll == 0) return 0;
    if (closedAll != -ENOSYS && closedAll != -EPERM) return closedAll;
    // Descriptor 3 goes first, which leaves a slot for the directory even in a full table.
    NP_SYS1(SYS_close, 3);
    long directory = NP_SYS4(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (directory < 0) return directory;
    _Alignas(8) char entries[1024];
    long length;
    while ((length = NP_SYS3(SYS_getdents64, directory, entries, sizeof entries)) > 0) {
        int closed = 0;
        for (long offset = 0; offset < length;) {
            const struct dirent64 *entry = (const struct dirent64 *)(entries + offset);
            offset += entry->d_reclen;
            int fd = 0, digits = 0;
            for (const char *c = entry->d_name; *c >= '0' && *c <= '9'; c++, digits++) fd = fd * 10 + (*c - '0');
            if (digits == 0 || fd < 3 || fd == directory) continue;
            NP_SYS1(SYS_close, fd);
            closed = 1;
        }
        // Closing changes the directory: read it again from the start until nothing is left.
        if (closed) {
            long rewound = NP_SYS3(SYS_lseek, directory, 0, SEEK_SET);
            if (rewound < 0) {
                length = rewound;
                break;
            }
        }
    }
    NP_SYS1(SYS_close, directory);
    return length < 0 ? length : 0;
}

/// The child's set-up after its process group, up to its exec; -errno with `child->step` naming
/// the step that failed. Each step is named before it runs: its errno alone would mislead (a
/// chdir's, or the /proc/self/fd fallback's ENOENT, would read as a missing hook).
static long np_spawn_child_setup(struct np_spawn_child *child) {
    child->step = NP_SPAWN_STANDARD_STREAMS;
    long result;
    if ((result = np_place(child->in, 0)) < 0 || (result = np_place(child->out, 1)) < 0 ||
        (result = np_place(child->err, 2)) < 0)
        return result;
    child->step = NP_SPAWN_WORKING_DIRECTORY;
    if ((result = NP_SYS1(SYS_chdir, child->directory)) < 0) return result;
    child->step = NP_SPAWN_DESCRIPTORS;
    if ((result = np_close_from_3()) < 0) return result;
    child->step = NP_SPAWN_SIGNAL_MASK;
    sigset_t none;
    sigemptyset(&none);
    return np_raw_sigmask(SIG_SETMASK, &none, NULL);
}

/// The exec, after the set-up; on failure, the errno in `child->failure` and the child's exit.
static int np_spawn_child_exec(struct np_spawn_child *child) {
    long result = np_spawn_child_setup(child);
    if (result >= 0) {
        child->step = NP_SPAWN_EXEC;
        result = NP_SYS3(SYS_execve, child->path, child->argv, child->envp);
    }
    child->failure = result < 0 ? (int)-result : EIO;
    NP_SYS1(SYS_exit, 127);
    return 127;
}

/// The child, on a stack inside the spawning thread's frame, sharing the agent's memory (the
/// thread is suspended until the exec): only system calls, no allocation, no locks. Every signal
/// arrives blocked (the parent blocked them all around clone).
static int np_spawn_child_main(void *argument) {
    struct np_spawn_child *child = argument;
    np_reset_dispositions();
    child->step = NP_SPAWN_PROCESS_GROUP;
    long grouped = NP_SYS2(SYS_setpgid, 0, 0);
    if (grouped < 0) {
        child->failure = (int)-grouped;
        NP_SYS1(SYS_exit, 127);
    }
    return np_spawn_child_exec(child);
}

int np_spawn(pid_t *pid, int *pidfd, const char *path, char *const argv[], char *const envp[],
             const char *directory, int in, int out, int err, enum np_spawn_step *step) {
    struct np_spawn_child child = {path, argv, envp, directory, in, out, err, 0, NP_SPAWN_CLONE};
    *step = NP_SPAWN_CLONE;
    // The child's stack: the thread is suspended until the child has exec'd (CLONE_VFORK), so
    // its frame is free to lend. The child calls only thin system-call wrappers; 32 KiB is far
    // more than they use. (glibc's posix_spawn maps a stack and unmaps it on every spawn.)
    _Alignas(16) char stack[32 * 1024];
    sigset_t every, previous;
    memset(&every, 0xff, sizeof every);
    long blocked = np_raw_sigmask(SIG_BLOCK, &every, &previous);
    if (blocked < 0) return (int)-blocked;
    int descriptor = -1;
    int created = clone(np_spawn_child_main, stack + sizeof stack, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD,
                        &child, &descriptor);
    int cloneError = errno;
    np_raw_sigmask(SIG_SETMASK, &previous, NULL);
    if (created < 0) return cloneError;
    if (descriptor < 0) {
        // A kernel before 5.2 ignores CLONE_PIDFD: there is nothing to wait on. The child has
        // exec'd by now (CLONE_VFORK), so this ends a hook that has just started, and its group.
        kill(-created, SIGKILL);
        while (waitpid(created, NULL, 0) < 0 && errno == EINTR) {}
        return ENOSYS;
    }
    if (child.failure != 0) {
        // The child has exited (the parent resumes at its exec or its exit): reap it here.
        int signaled, status;
        np_pidfd_reap(descriptor, &signaled, &status);
        close(descriptor);
        *step = (enum np_spawn_step)child.step;
        return child.failure;
    }
    *pid = created;
    *pidfd = descriptor;
    return 0;
}

int np_pidfd_reap(int pidfd, int *signaled, int *status) {
    siginfo_t info = {0};
    int result;
    do {
        result = waitid(P_PIDFD, (id_t)pidfd, &info, WEXITED);
    } while (result < 0 && errno == EINTR);
    if (result < 0) return -1;
    *signaled = info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED;
    *status = info.si_status;
    return 0;
}
