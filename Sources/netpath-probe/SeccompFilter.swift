// SPDX-License-Identifier: Apache-2.0

import CSeccomp
import Glibc

/// netpath-probe's seccomp filter: an allow list of what the Swift runtime, glibc (threads,
/// getaddrinfo with /etc/hosts and DNS), libcurl and ICMP sockets use.
///
/// The default action is EPERM, not killing the process: glibc and libraries try optional calls
/// (getaddrinfo asks nscd over an AF_UNIX socket first; the Swift runtime may name its threads)
/// and take the failure in their stride, so an unlisted but harmless call made by a newer libc
/// costs nothing, where killing would turn it into a dead helper and `unknown` verdicts. Safety
/// is the same either way: a denied call does nothing.
enum SeccompFilter {
    static func install() throws(Sandbox.Failure) {
        guard let context = seccomp_init(netpath_scmp_act_errno(EPERM)) else {
            throw Sandbox.Failure("seccomp_init", ENOMEM)
        }
        defer { seccomp_release(context) }
        var failure: Sandbox.Failure?
        func rule(_ action: UInt32, _ name: String, _ conditions: [scmp_arg_cmp] = []) {
            let number = seccomp_syscall_resolve_name(name)
            // A call this architecture does not have (open on aarch64): nothing to allow.
            guard number != __NR_SCMP_ERROR else { return }
            let result = conditions.withUnsafeBufferPointer {
                seccomp_rule_add_array(context, action, number, UInt32($0.count), $0.baseAddress)
            }
            if result != 0 && failure == nil { failure = Sandbox.Failure("seccomp rule for \(name)", -result) }
        }
        func allow(_ names: [String]) { for name in names { rule(netpath_scmp_act_allow(), name) } }
        func equal(_ arg: UInt32, _ value: UInt64) -> scmp_arg_cmp {
            scmp_arg_cmp(arg: arg, op: SCMP_CMP_EQ, datum_a: value, datum_b: 0)
        }
        func masked(_ arg: UInt32, _ mask: UInt64, _ value: UInt64) -> scmp_arg_cmp {
            scmp_arg_cmp(arg: arg, op: SCMP_CMP_MASKED_EQ, datum_a: mask, datum_b: value)
        }

        // Memory, threads, signals, time: the runtime and glibc.
        allow([
            "brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "membarrier", "futex", "futex_waitv",
            "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "sched_yield", "sched_getaffinity",
            "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "restart_syscall",
            "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
            "getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid",
            "getgroups", "getrandom", "uname", "sysinfo", "getrlimit", "exit", "exit_group",
        ])
        // Threads only (CLONE_THREAD), never a new process. clone3 takes its flags in memory
        // that seccomp cannot read: ENOSYS makes glibc fall back to clone.
        rule(netpath_scmp_act_allow(), "clone", [masked(0, UInt64(netpath_clone_thread), UInt64(netpath_clone_thread))])
        rule(netpath_scmp_act_errno(ENOSYS), "clone3")
        // Signals to itself only (abort, the runtime's crash handling).
        rule(netpath_scmp_act_allow(), "tgkill", [equal(0, UInt64(getpid()))])
        // Reading limits, never setting them.
        rule(netpath_scmp_act_allow(), "prlimit64", [equal(2, 0)])
        rule(netpath_scmp_act_allow(), "prctl", [equal(0, UInt64(PR_SET_NAME))])
        rule(netpath_scmp_act_allow(), "prctl", [equal(0, UInt64(PR_GET_NAME))])

        // Files: read-only. open and openat only without O_WRONLY, O_RDWR, O_CREAT, O_TRUNC and
        // O_APPEND (getaddrinfo reads /etc/resolv.conf, /etc/hosts, nsswitch.conf and loads
        // libnss_*; libcurl/OpenSSL read their configuration and CA certificates). No call
        // that creates, removes, renames or changes a file is on the list.
        let writing = UInt64(O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND)
        rule(netpath_scmp_act_allow(), "openat", [masked(2, writing, 0)])
        rule(netpath_scmp_act_allow(), "open", [masked(1, writing, 0)])
        allow([
            "read", "readv", "pread64", "write", "writev", "close", "fstat", "newfstatat", "stat", "lstat",
            "statx", "lseek", "access", "faccessat", "faccessat2", "readlink", "readlinkat", "getdents64",
            "fcntl", "dup", "dup3", "poll", "ppoll", "select", "pselect6", "epoll_create1", "epoll_ctl",
            "epoll_wait", "epoll_pwait", "eventfd2", "pipe2", "pipe",
        ])
        // ioctl: FIONREAD (the resolver) and FIONBIO only.
        rule(netpath_scmp_act_allow(), "ioctl", [equal(1, 0x541B)])
        rule(netpath_scmp_act_allow(), "ioctl", [equal(1, 0x5421)])

        // Sockets: IPv4 and IPv6 (TCP, UDP for DNS, ICMP), netlink route for getaddrinfo's
        // AI_ADDRCONFIG. No AF_UNIX socket: so no way to the control socket (or to anything
        // else listening on a path). socketpair only makes an unnamed connected pair (libcurl's
        // resolver thread wakes its caller with one).
        rule(netpath_scmp_act_allow(), "socket", [equal(0, UInt64(AF_INET))])
        rule(netpath_scmp_act_allow(), "socket", [equal(0, UInt64(AF_INET6))])
        rule(netpath_scmp_act_allow(), "socket", [equal(0, UInt64(AF_NETLINK)), equal(2, 0)])
        rule(netpath_scmp_act_allow(), "socketpair", [equal(0, UInt64(AF_UNIX))])
        allow([
            "connect", "bind", "getsockname", "getpeername", "setsockopt", "getsockopt", "sendto", "recvfrom",
            "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown",
        ])
        if let failure { throw failure }
        let loaded = seccomp_load(context)
        guard loaded == 0 else { throw Sandbox.Failure("seccomp_load", -loaded) }
    }
}
