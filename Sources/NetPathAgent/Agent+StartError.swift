// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathControl
import NetPathCore
import NetPathLinux

extension Agent {
    /// Why the agent could not start: which part failed, with what it was given and the errno.
    ///
    /// ```swift
    /// do { try await agent.run() } catch let error as Agent.StartError {
    ///     if case .controlSocket(.alreadyServed(let path)) = error { print("netpathd already runs on \(path)") }
    /// }
    /// ```
    package enum StartError: Error, CustomStringConvertible {
        /// `control_group` names a group that no longer exists (it was deleted after the
        /// configuration was checked).
        case controlGroupNotFound(name: String)
        /// The control socket could not be set up.
        case controlSocket(ListenerError)
        /// The metrics endpoint (`metrics` in `[agent]`) could not be set up.
        case metrics(ListenerError)
        /// The trace `--record` names could not be written.
        case record(TraceWriterError)
        /// The netlink engine did not start (its sockets, or the initial dump).
        case engine(NetlinkError)

        /// One line, as netpathd prints it before it exits.
        package var description: String {
            switch self {
            case .controlGroupNotFound(let name):
                return "control socket: control_group \"\(name)\" does not exist".escapingControlCharacters
            case .controlSocket(let error): return "control socket: \(error)"
            case .metrics(let error): return "metrics: \(error)"
            case .record(let error): return error.description
            case .engine(let error): return error.description
            }
        }
    }

    /// Why a listening socket of the agent's (the control socket, the metrics endpoint) could not
    /// be set up. One type for both: they fail the same ways.
    package enum ListenerError: Error, CustomStringConvertible {
        /// A live agent answers on the control socket `path`.
        case alreadyServed(path: String)
        /// Something listens on `path` but took no connection within `timeout`: an agent that
        /// is stuck. Its socket is not taken over.
        case notAccepting(path: String, timeout: Duration)
        /// `path` does not fit a `sockaddr_un`.
        case pathTooLong(path: String)
        /// The socket's directory `path` is not a directory.
        case notADirectory(path: String)
        /// The socket's directory `path` belongs to `uid`, neither root nor the agent's user.
        case directoryOwnedByAnotherUser(path: String, uid: UInt32)
        /// The socket's directory `path` is writable by group or others (`mode`, permission bits).
        case directoryWritableByGroupOrOthers(path: String, mode: UInt32)
        /// The metrics address is not `HOST:PORT`.
        case notHostAndPort(address: String)
        /// The metrics address's host is not a numeric address.
        case notNumericAddress(address: String)
        /// A system call failed (`"bind /run/netpath/netpathd.sock"`, with its errno).
        case systemCall(SystemCallError)
        /// The thread that serves the socket could not be started.
        case threadNotStarted(name: String)

        /// A system call failure with the current `errno`.
        static func failed(_ operation: String) -> ListenerError {
            .systemCall(SystemCallError(operation: operation, errno: Glibc.errno))
        }

        package var description: String {
            switch self {
            case .alreadyServed(let path):
                return "another netpathd is already listening on \(path)"
            case .notAccepting(let path, let timeout):
                return "another netpathd is listening on \(path) but took no connection within \(timeout)"
            case .pathTooLong(let path):
                return "control socket path too long: \(path)"
            case .notADirectory(let path):
                return "\(path) is not a directory; cannot put the control socket there"
            case .directoryOwnedByAnotherUser(let path, let uid):
                return
                    "\(path) is owned by uid \(uid), not by root: that user could take the control socket's place; use a root-owned directory such as /run/netpath"
            case .directoryWritableByGroupOrOthers(let path, let mode):
                return
                    "\(path) is writable by group or others (mode \(String(mode & 0o7777, radix: 8))): anyone who can write there could take the control socket's place; use a root-owned directory such as /run/netpath"
            case .notHostAndPort(let address):
                return "metrics address must be HOST:PORT, found \"\(address)\""
            case .notNumericAddress(let address):
                return "metrics address \"\(address)\" is not a numeric address"
            case .systemCall(let error):
                return error.description
            case .threadNotStarted(let name):
                return "cannot start the \(name) thread"
            }
        }
    }
}
