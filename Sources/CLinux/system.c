// Compiled with the GNU extensions visible: see include/CLinux.h for why they live here.
#define _GNU_SOURCE 1

#include "CLinux.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

int np_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int np_o_path(void) { return O_PATH; }

int np_setns_net(int fd) { return setns(fd, CLONE_NEWNET); }

int np_eventfd_nonblocking(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

int np_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], const char *directory, int in,
             int out, int err) {
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_t actions;
    int result = posix_spawnattr_init(&attributes);
    if (result != 0) return result;
    result = posix_spawn_file_actions_init(&actions);
    if (result != 0) {
        posix_spawnattr_destroy(&attributes);
        return result;
    }
    sigset_t every, none;
    // Every bit, not sigfillset(): glibc leaves its two internal signals (32, 33) out of a filled
    // set, and posix_spawn then sets them to SIG_IGN in the child, which exec keeps.
    memset(&every, 0xff, sizeof every);
    sigemptyset(&none);
    // The agent ignores SIGPIPE and blocks nothing a hook should inherit: reset it all.
    short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    if ((result = posix_spawnattr_setflags(&attributes, flags)) == 0 &&
        (result = posix_spawnattr_setpgroup(&attributes, 0)) == 0 &&
        (result = posix_spawnattr_setsigdefault(&attributes, &every)) == 0 &&
        (result = posix_spawnattr_setsigmask(&attributes, &none)) == 0 &&
        (result = posix_spawn_file_actions_adddup2(&actions, in, 0)) == 0 &&
        (result = posix_spawn_file_actions_adddup2(&actions, out, 1)) == 0 &&
        (result = posix_spawn_file_actions_adddup2(&actions, err, 2)) == 0 &&
        (result = posix_spawn_file_actions_addchdir_np(&actions, directory)) == 0 &&
        (result = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) == 0) {
        result = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    return result;
}

int np_pidfd_open(pid_t pid) { return pidfd_open(pid, 0); }

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
