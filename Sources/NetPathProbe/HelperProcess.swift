// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore

/// One running `netpath-probe`: its pid and the agent's end of the socketpair. The descriptor is
/// closed when the last reference goes (the reader thread's and the client's), so it is never
/// written after another file took its number.
final class HelperProcess: @unchecked Sendable {
    // @unchecked: pid and fd never change; the kernel serialises what is done with them.
    let pid: pid_t
    let fd: Int32
    let generation: UInt64

    private init(pid: pid_t, fd: Int32, generation: UInt64) {
        self.pid = pid
        self.fd = fd
        self.generation = generation
    }

    deinit { close(fd) }

    /// Why a helper could not be started: the file the agent refused to run, or the system call
    /// that failed, with its errno.
    enum StartError: Error, Equatable, CustomStringConvertible {
        /// `stat` or `realpath` of `path` (the helper, or a directory on the way) failed.
        case cannotInspect(path: String, errno: Int32)
        /// The helper is not a regular file.
        case notARegularFile(path: String)
        /// The helper has no execute bit.
        case notExecutable(path: String)
        /// The helper belongs to `uid`, neither root nor the agent's user.
        case ownedByAnotherUser(path: String, uid: UInt32)
        /// The helper is writable by its group or others.
        case writableByGroupOrOthers(path: String)
        /// `directory`, on the way to the helper at `path`, belongs to `uid`.
        case directoryOwnedByAnotherUser(directory: String, path: String, uid: UInt32)
        /// `directory`, on the way to the helper at `path`, is writable by its group or others.
        case directoryWritableByGroupOrOthers(directory: String, path: String)
        /// `socketpair` failed.
        case socketpairFailed(errno: Int32)
        /// `posix_spawn` of `path` failed.
        case spawnFailed(path: String, errno: Int32)

        var description: String {
            func reason(_ errno: Int32) -> String { String(cString: strerror(errno)) }
            switch self {
            case .cannotInspect(let path, let errno): return "\(path): \(reason(errno))"
            case .notARegularFile(let path): return "\(path) is not a regular file"
            case .notExecutable(let path): return "\(path) is not executable"
            case .ownedByAnotherUser(let path, let uid):
                return "\(path) is owned by uid \(uid), not by root or the agent's user"
            case .writableByGroupOrOthers(let path): return "\(path) is writable by its group or others"
            case .directoryOwnedByAnotherUser(let directory, let path, let uid):
                return "\(directory), on the way to \(path), is owned by uid \(uid), not by root or the agent's user"
            case .directoryWritableByGroupOrOthers(let directory, let path):
                return "\(directory), on the way to \(path), is writable by its group or others"
            case .socketpairFailed(let errno): return "socketpair: \(reason(errno))"
            case .spawnFailed(let path, let errno): return "cannot start \(path): \(reason(errno))"
            }
        }
    }

    /// Starts `path --mode MODE` with its end of a new socketpair as fd 3, an empty environment,
    /// the default signal dispositions and no blocked signal.
    static func start(path: String, mode: String, generation: UInt64) throws(StartError) -> HelperProcess {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw .socketpairFailed(errno: errno)
        }
        defer { close(pair[1]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 onto 3 clears close-on-exec, also when the socket already is fd 3 (glibc ≥ 2.29).
        posix_spawn_file_actions_adddup2(&actions, pair[1], 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let arguments = [path, "--mode", mode]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var environment: [UnsafeMutablePointer<CChar>?] = [nil]
        var pid: pid_t = 0
        var spawned = posix_spawn(&pid, path, &actions, &attributes, &argv, &environment)
        // ETXTBSY: another thread's fork holds a descriptor that writes the file (it was just
        // installed or replaced), until that child execs. Brief: a few tries, 10 ms apart.
        for _ in 0..<20 where spawned == ETXTBSY {
            usleep(10_000)
            spawned = posix_spawn(&pid, path, &actions, &attributes, &argv, &environment)
        }
        guard spawned == 0 else {
            close(pair[0])
            throw .spawnFailed(path: path, errno: spawned)
        }
        return HelperProcess(pid: pid, fd: pair[0], generation: generation)
    }

    /// Sends one line without blocking; false when it did not all go (the helper is not reading,
    /// or is gone).
    func send(_ line: String) -> Bool {
        var bytes = Array(line.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            bytes = bytes.dropFirst(sent)
        }
        return true
    }

    /// SIGKILL: the reader then sees the end of the socket and reaps it.
    func kill() { _ = Glibc.kill(pid, SIGKILL) }

    /// What the reader thread reports, in order.
    enum Event: Sendable {
        case message(ProbeWire.HelperMessage)
        case malformed(String)
        case exited(String)
    }

    /// Reads lines on a thread of its own until the socket ends or a line is malformed, then
    /// kills and reaps the process and reports how it ended.
    func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream()
        let reader: @Sendable () -> Void = { [self] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            reading: while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: 0x0a) {
                    do throws(ProbeWire.Error) {
                        continuation.yield(.message(try ProbeWire.decodeHelperMessage(pending[..<newline])))
                    } catch {
                        continuation.yield(.malformed(error.description))
                        break reading
                    }
                    pending.removeSubrange(...newline)
                }
                if pending.count >= ProbeWire.maximumLineLength {
                    continuation.yield(.malformed("line longer than \(ProbeWire.maximumLineLength) bytes"))
                    break
                }
            }
            // Whatever ended the reading, the process is of no more use.
            kill()
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let signal = status & 0x7f
            continuation.yield(.exited(signal == 0 ? "exit status \((status >> 8) & 0xff)" : "signal \(signal)"))
            continuation.finish()
        }
        // No thread to be had: read on a task instead (holding a pool thread meanwhile: late rather
        // than never).
        if !OSThread.detach(reader) { Task.detached { reader() } }
        return stream
    }
}
