// Compiled with the GNU extensions visible: see include/CLinux.h for why they live here.
#define _GNU_SOURCE 1

#include "CLinux.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int np_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int np_o_path(void) { return O_PATH; }

int np_setns_net(int fd) { return setns(fd, CLONE_NEWNET); }

int np_eventfd_nonblocking(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

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

/// `rt_sigaction` and `rt_sigprocmask` themselves. glibc's wrappers leave out its two internal
/// signals (32, 33): its mask wrapper drops them from a set to block, so the parent could not
/// block them around the clone, and its `sigaction` refuses them, so the child could not reset
/// their handlers.
static int np_raw_default(int signal) {
    // The kernel's struct (handler, flags, restorer, mask) all zero: SIG_DFL, no flags, no mask.
    unsigned long action[4] = {0};
    return (int)syscall(SYS_rt_sigaction, signal, action, NULL, _NSIG / 8);
}

static int np_raw_sigmask(int how, const sigset_t *set, sigset_t *old) {
    return (int)syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

/// Puts `fd` at `target`. When they are the same, dup2 would leave FD_CLOEXEC set: it is cleared.
static int np_place(int fd, int target) {
    if (fd != target) return dup2(fd, target) < 0 ? -1 : 0;
    int flags = fcntl(fd, F_GETFD);
    return flags < 0 ? -1 : fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
}

/// Closes every descriptor from 3 up. `close_range` (Linux 5.9) may be missing, or refused by a
/// container's older seccomp profile: then `/proc/self/fd` is read with `getdents64` into a buffer
/// on the stack, as glibc's `posix_spawn` does, and each descriptor closed.
static int np_close_from_3(void) {
    if (close_range(3, ~0U, 0) == 0) return 0;
    if (errno != ENOSYS && errno != EPERM) return -1;
    // System calls themselves, not glibc's cancellable wrappers: those would update the
    // cancellation state of the suspended parent thread, whose memory this child shares.
    // Descriptor 3 goes first, which leaves a slot for the directory even in a full table.
    syscall(SYS_close, 3);
    int directory = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (directory < 0) return -1;
    _Alignas(8) char entries[1024];
    long length;
    while ((length = syscall(SYS_getdents64, directory, entries, sizeof entries)) > 0) {
        int closed = 0;
        for (long offset = 0; offset < length;) {
            const struct dirent64 *entry = (const struct dirent64 *)(entries + offset);
            offset += entry->d_reclen;
            int fd = 0, digits = 0;
            for (const char *c = entry->d_name; *c >= '0' && *c <= '9'; c++, digits++) fd = fd * 10 + (*c - '0');
            if (digits == 0 || fd < 3 || fd == directory) continue;
            syscall(SYS_close, fd);
            closed = 1;
        }
        // Closing changes the directory: read it again from the start until nothing is left.
        if (closed && syscall(SYS_lseek, directory, 0, SEEK_SET) < 0) {
            length = -1;
            break;
        }
    }
    int failure = errno;
    syscall(SYS_close, directory);
    errno = failure;
    return length < 0 ? -1 : 0;
}

/// The child's set-up before its exec; -1 with errno and `child->step` naming the step that failed.
/// Each step is named before it runs: its errno alone would mislead (a chdir's, or the
/// /proc/self/fd fallback's ENOENT, would read as a missing hook).
static int np_spawn_child_setup(struct np_spawn_child *child) {
    child->step = NP_SPAWN_PROCESS_GROUP;
    if (setpgid(0, 0) < 0) return -1;
    child->step = NP_SPAWN_STANDARD_STREAMS;
    if (np_place(child->in, 0) < 0 || np_place(child->out, 1) < 0 || np_place(child->err, 2) < 0) return -1;
    child->step = NP_SPAWN_WORKING_DIRECTORY;
    if (chdir(child->directory) < 0) return -1;
    child->step = NP_SPAWN_DESCRIPTORS;
    if (np_close_from_3() < 0) return -1;
    child->step = NP_SPAWN_SIGNAL_MASK;
    sigset_t none;
    sigemptyset(&none);
    return np_raw_sigmask(SIG_SETMASK, &none, NULL);
}

/// The child, on a stack inside the spawning thread's frame, sharing the agent's memory (the
/// thread is suspended until the exec): only system calls, no allocation, no locks.
static int np_spawn_child_main(void *argument) {
    struct np_spawn_child *child = argument;
    // Every signal arrives blocked (the parent blocked them all around clone). Each disposition
    // goes back to the default before they are unblocked, just before the exec:
    // - A handled signal: between the unblocking and the exec, the agent's handler (Swift's
    //   backtracer's, Dispatch's, glibc's own for 32 and 33) would run here, on the agent's
    //   memory and thread-local storage.
    // - An ignored one: the exec keeps it ignored. A service manager starts the agent with
    //   SIGPIPE ignored, and swift-service-lifecycle ignores SIGTERM, SIGINT and SIGHUP to
    //   receive them from Dispatch instead.
    for (int signal = 1; signal < _NSIG; signal++) {
        if (signal == SIGKILL || signal == SIGSTOP) continue;
        np_raw_default(signal);
    }
    if (np_spawn_child_setup(child) < 0) {
        child->failure = errno != 0 ? errno : EIO;
        _exit(127);
    }
    child->step = NP_SPAWN_EXEC;
    execve(child->path, child->argv, child->envp);
    child->failure = errno != 0 ? errno : EIO;
    _exit(127);
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
    if (np_raw_sigmask(SIG_BLOCK, &every, &previous) < 0) return errno;
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
