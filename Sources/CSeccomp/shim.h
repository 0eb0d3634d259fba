// SPDX-License-Identifier: Apache-2.0
// libseccomp and the process-credential calls netpath-probe's sandbox makes, with wrappers for
// what Swift cannot import: prctl and syscall are variadic, SCMP_ACT_ERRNO is a macro.
#ifndef NETPATH_CSECCOMP_SHIM_H
#define NETPATH_CSECCOMP_SHIM_H

#include <seccomp.h>
#include <errno.h>
#include <grp.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>

// Glibc's module map is built without _GNU_SOURCE, which these two need.
extern int setresuid(uid_t ruid, uid_t euid, uid_t suid);
extern int setresgid(gid_t rgid, gid_t egid, gid_t sgid);

/// CLONE_THREAD from <sched.h>, also hidden behind _GNU_SOURCE.
static const unsigned long netpath_clone_thread = 0x00010000UL;

static inline uint32_t netpath_scmp_act_errno(int error) { return SCMP_ACT_ERRNO(error); }
static inline uint32_t netpath_scmp_act_allow(void) { return SCMP_ACT_ALLOW; }

static inline int netpath_prctl(int option, unsigned long a, unsigned long b) {
    return prctl(option, a, b, 0UL, 0UL);
}

/// Sets the calling thread's effective, permitted and inheritable capability sets (all
/// threads: called before any other thread exists) to `mask`, a set of CAP_* bits below 32.
static inline int netpath_capset(uint32_t effective, uint32_t permitted) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2] = { { effective, permitted, 0 }, { 0, 0, 0 } };
    return (int)syscall(SYS_capset, &header, data);
}

static inline int netpath_close_range(unsigned int first, unsigned int last) {
    return (int)syscall(SYS_close_range, first, last, 0U);
}

#endif
