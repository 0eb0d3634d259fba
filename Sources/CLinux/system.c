// Compiled with the GNU extensions visible: see include/CLinux.h for why they live here.
#define _GNU_SOURCE 1

#include "CLinux.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int np_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int np_o_path(void) { return O_PATH; }

int np_setns_net(int fd) { return setns(fd, CLONE_NEWNET); }

int np_eventfd_nonblocking(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

/// A system call that leaves errno alone: -errno on failure. A spare (np_spare_make) runs beside
/// the thread that made it and shares its thread-local storage, errno included; glibc's wrappers,
/// `syscall()` among them, would write that thread's errno from another process at any moment.
/// So the child side of both spawns makes its calls here. Elsewhere than x86-64 and arm64 it is
/// `syscall()` (errno is written, which the vfork-style child may do: its parent is suspended),
/// and there are no spares.
#if defined(__x86_64__)
#define NP_SPARES 1
static long np_sys(long number, long a, long b, long c, long d, long e) {
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    long result;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return result;
}
#elif defined(__aarch64__)
#define NP_SPARES 1
static long np_sys(long number, long a, long b, long c, long d, long e) {
    register long x8 __asm__("x8") = number;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
    return x0;
}
#else
#define NP_SPARES 0
static long np_sys(long number, long a, long b, long c, long d, long e) {
    long result = syscall(number, a, b, c, d, e);
    return result < 0 ? -errno : result;
}
#endif

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

// MARK: Spares

/// A spare's mapping: this header on its first page, a guard page (no access: an overflowing
/// stack faults instead of overwriting the header), the child's stack above.
struct np_spare {
    /// The order: 0 none yet, 1 exec `job` (the agent's), 3 taken (the child's, from 1), 2 called
    /// off (the agent's, from 1, when the child did not take it in time). A futex word. The two
    /// compare-and-swaps from 1 decide who has the hook: the child execs it, or the agent spawns
    /// it another way, never both.
    volatile int order;
    /// The child's set-up at its making: 0 under way, 1 done (it waits for its order), 2 failed
    /// (it exits; `unusable` says why). A futex word.
    volatile int ready;
    /// How far the child got after its order: 0 not ordered, 1 ordered, 2 about to exec.
    volatile int progress;
    /// The child's tid while it has this memory; the kernel clears it and wakes the futex when
    /// the child execs or exits (CLONE_CHILD_CLEARTID), which is what a spawn waits for. The
    /// kernel writes it (CLONE_CHILD_SETTID) before the child's first instruction, so it is set
    /// once `ready` is.
    volatile pid_t tid;
    /// The errno of the child's own set-up at its making (dispositions, parent death signal,
    /// process group), which leaves it unusable.
    volatile int unusable;
    /// The agent's pid, which the child checks its parent against.
    pid_t agent;
    pid_t pid;
    int pidfd;
    /// The mapping's size.
    size_t size;
    struct np_spawn_child job;
};

/// The child's stack: it calls only thin system-call wrappers (~2 KiB).
enum { NP_SPARE_STACK = 64 * 1024 };

/// 0 when woken (or the word was not `value`), -ETIMEDOUT, -EINTR: the caller looks at the word.
static long np_futex_wait(volatile int *word, int value, const struct timespec *timeout) {
    return NP_SYS4(SYS_futex, word, FUTEX_WAIT, value, timeout);
}

static void np_futex_wake(volatile int *word) { NP_SYS3(SYS_futex, word, FUTEX_WAKE, 1); }

#if NP_SPARES
/// The spare's child: made ready, then waiting for its order, sharing the agent's memory and
/// descriptor table meanwhile (so it holds nothing open that the agent closes). Only system
/// calls that leave errno alone (np_sys); signals stay blocked until just before the exec.
static int np_spare_main(void *argument) {
    struct np_spare *spare = argument;
    np_reset_dispositions();
    // Killed with the thread that made it (the runner's own, which lives as long as the agent),
    // so that a spare never outlives the agent holding its memory. An agent that exited before
    // this line sent no signal: then the parent is the reaper, not the agent (whose pid the
    // agent wrote before the clone), and the spare goes.
    long result = NP_SYS2(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
    if (result == 0 && NP_SYS1(SYS_getppid, 0) != spare->agent) result = -ESRCH;
    if (result == 0) result = NP_SYS2(SYS_setpgid, 0, 0);
    // Named for what it is until it execs (a child takes the name of the thread that made it).
    if (result == 0) NP_SYS2(SYS_prctl, PR_SET_NAME, "netpathd-spare");
    if (result < 0) {
        spare->unusable = (int)-result;
        __atomic_store_n(&spare->ready, 2, __ATOMIC_RELEASE);
        np_futex_wake(&spare->ready);
        NP_SYS1(SYS_exit, 0);
    }
    __atomic_store_n(&spare->ready, 1, __ATOMIC_RELEASE);
    np_futex_wake(&spare->ready);
    while (__atomic_load_n(&spare->order, __ATOMIC_ACQUIRE) == 0) np_futex_wait(&spare->order, 0, NULL);
    int given = 1;
    if (!__atomic_compare_exchange_n(&spare->order, &given, 3, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        NP_SYS1(SYS_exit, 0);
    __atomic_store_n(&spare->progress, 1, __ATOMIC_RELEASE);
    // Signals sent to the spare while it waited stay pending (blocked): it shares netpathd's
    // command line, so `pkill netpathd` or `kill $(pidof netpathd)` reach it too. A new clone
    // has none pending, and neither may the hook: they are taken off here, one call when there
    // are none. (SIGKILL and SIGSTOP are never pending on a live, running process.)
    sigset_t every;
    memset(&every, 0xff, sizeof every);
    const struct timespec now = {0, 0};
    while (NP_SYS4(SYS_rt_sigtimedwait, &every, NULL, &now, _NSIG / 8) > 0) {}
    // A descriptor table of its own from here: the hook's descriptors go to 0, 1 and 2 in it, and
    // the agent's others close, without touching the agent's.
    spare->job.step = NP_SPAWN_DESCRIPTORS;
    result = NP_SYS1(SYS_unshare, CLONE_FILES);
    // The hook must not die with the agent: the parent death signal was the spare's alone.
    if (result == 0) result = NP_SYS2(SYS_prctl, PR_SET_PDEATHSIG, 0);
    if (result < 0) {
        spare->job.failure = (int)-result;
        NP_SYS1(SYS_exit, 127);
    }
    __atomic_store_n(&spare->progress, 2, __ATOMIC_RELEASE);
    return np_spawn_child_exec(&spare->job);
}
#endif

static void np_spare_wait_gone(struct np_spare *spare);
static void np_spare_free(struct np_spare *spare);

int np_spare_make(struct np_spare **made) {
#if NP_SPARES
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = 2 * page + NP_SPARE_STACK;
    void *mapping = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (mapping == MAP_FAILED) return errno;
    if (mprotect((char *)mapping + page, page, PROT_NONE) < 0) {
        int failure = errno;
        munmap(mapping, size);
        return failure;
    }
    struct np_spare *spare = mapping;
    memset(spare, 0, sizeof *spare);
    spare->pidfd = -1;
    spare->size = size;
    spare->agent = getpid();
    sigset_t every, previous;
    memset(&every, 0xff, sizeof every);
    long blocked = np_raw_sigmask(SIG_BLOCK, &every, &previous);
    if (blocked < 0) {
        munmap(mapping, size);
        return (int)-blocked;
    }
    // The stack's top, 16-byte aligned (the mapping's end).
    char *top = (char *)mapping + size;
    int created = clone(np_spare_main, top,
                        CLONE_VM | CLONE_FILES | CLONE_PIDFD | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD,
                        spare, &spare->pidfd, NULL, &spare->tid);
    int cloneError = errno;
    np_raw_sigmask(SIG_SETMASK, &previous, NULL);
    if (created < 0 || spare->pidfd < 0) {
        if (created >= 0) {
            // No pidfd (a kernel before 5.2): nothing to wait on safely. It goes, and is reaped.
            kill(created, SIGKILL);
            while (waitpid(created, NULL, 0) < 0 && errno == EINTR) {}
            cloneError = ENOSYS;
        }
        munmap(mapping, size);
        return cloneError;
    }
    spare->pid = created;
    // Ready when its set-up is done; a child killed meanwhile never says so, which its pidfd
    // tells (looked at when a wait of 100 ms ends without word).
    const struct timespec pause = {0, 100 * 1000 * 1000};
    int ready;
    while ((ready = __atomic_load_n(&spare->ready, __ATOMIC_ACQUIRE)) == 0) {
        np_futex_wait(&spare->ready, 0, &pause);
        struct pollfd exited = {spare->pidfd, POLLIN, 0};
        if (__atomic_load_n(&spare->ready, __ATOMIC_ACQUIRE) == 0 && poll(&exited, 1, 0) > 0) break;
    }
    if (ready != 1) {
        int reason = ready == 2 ? spare->unusable : ECHILD;
        np_spare_wait_gone(spare);
        np_spare_free(spare);
        return reason;
    }
    *made = spare;
    return 0;
#else
    (void)made;
    return ENOSYS;
#endif
}

/// Waits until the spare's child has left its memory: exec'd or exited.
static void np_spare_wait_gone(struct np_spare *spare) {
    pid_t tid;
    while ((tid = __atomic_load_n(&spare->tid, __ATOMIC_ACQUIRE)) != 0) np_futex_wait(&spare->tid, tid, NULL);
}

/// Reaps an exited spare's child, closes its pidfd and unmaps it.
static void np_spare_free(struct np_spare *spare) {
    int signaled, status;
    np_pidfd_reap(spare->pidfd, &signaled, &status);
    close(spare->pidfd);
    munmap(spare, spare->size);
}

/// Ends a spare that has not taken an order (SIGKILL through its pidfd, which cannot reach
/// another process), waits until it has left its memory, reaps it and unmaps it.
static void np_spare_kill(struct np_spare *spare) {
    syscall(SYS_pidfd_send_signal, spare->pidfd, SIGKILL, NULL, 0);
    np_spare_wait_gone(spare);
    np_spare_free(spare);
}

/// np_spare_spawn's own part: -1 when the spare never took the hook.
static int np_spare_exec(struct np_spare *spare, pid_t *pid, int *pidfd, const char *path, char *const argv[],
                         char *const envp[], const char *directory, int in, int out, int err,
                         enum np_spawn_step *step) {
    *step = NP_SPAWN_CLONE;
    struct np_spawn_child job = {path, argv, envp, directory, in, out, err, 0, NP_SPAWN_CLONE};
    spare->job = job;
    __atomic_store_n(&spare->order, 1, __ATOMIC_RELEASE);
    np_futex_wake(&spare->order);
    // Until it has exec'd or exited. A spare that does not take the order within a second
    // (stopped by SIGSTOP or a debugger, or starved) would hold the spawning thread, the
    // engine's, for as long: when a wait of a second ends with the child still there, the order
    // is called off and the spare killed; if it took the order meanwhile, the exec is under way
    // and is waited for, as a vfork-style clone's is. (A wait cut short by a signal starts its
    // second again.)
    const struct timespec second = {1, 0};
    pid_t tid;
    while ((tid = __atomic_load_n(&spare->tid, __ATOMIC_ACQUIRE)) != 0) {
        if (np_futex_wait(&spare->tid, tid, &second) != -ETIMEDOUT) continue;
        int given = 1;
        if (__atomic_compare_exchange_n(&spare->order, &given, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            np_spare_kill(spare);
            return -1;
        }
    }
    int progress = __atomic_load_n(&spare->progress, __ATOMIC_ACQUIRE);
    int failure = spare->job.failure;
    if (failure == 0 && progress == 2 && spare->unusable == 0) {
        // Exec'd (or killed on its way there, which the hook's reaping will tell).
        *pid = spare->pid;
        *pidfd = spare->pidfd;
        munmap(spare, spare->size);
        return 0;
    }
    int step_reached = spare->job.step;
    np_spare_free(spare);
    if (failure == 0) return -1;  // It was gone before it took the order: nothing was tried.
    *step = (enum np_spawn_step)step_reached;
    return failure;
}

int np_spare_spawn(struct np_spare *spare, int *spared, pid_t *pid, int *pidfd, const char *path, char *const argv[],
                   char *const envp[], const char *directory, int in, int out, int err, enum np_spawn_step *step) {
    if (spare != NULL) {
        int result = np_spare_exec(spare, pid, pidfd, path, argv, envp, directory, in, out, err, step);
        if (result != -1) {
            *spared = 1;
            return result;
        }
    }
    *spared = 0;
    return np_spawn(pid, pidfd, path, argv, envp, directory, in, out, err, step);
}

pid_t np_spare_pid(const struct np_spare *spare) { return spare->pid; }

void np_spare_discard(struct np_spare *spare) { np_spare_kill(spare); }

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
