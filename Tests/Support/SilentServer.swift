// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import Glibc
import Synchronization

/// A listening Unix socket that never replies (a stuck agent); with `sending`, it accepts the first
/// connection and sends those bytes before going silent (keeping the connection open), or
/// with `thenClosing`, closing it without reading anything (as an agent refuses a client).
public final class SilentServer: Sendable {
    /// The socket's path.
    public let path: String
    private let listener: Int32
    /// The accepted connection, set by the accepting thread, closed by deinit.
    private let accepted = Descriptor()
    /// Signalled once the bytes are sent (and the connection closed, with `thenClosing`).
    private let sent = DispatchSemaphore(value: 0)

    final class Descriptor: Sendable {
        let fd = Mutex<Int32>(-1)
    }

    public init(sending bytes: String? = nil, thenClosing: Bool = false) throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("np-silent-\(UUID().uuidString.prefix(8)).sock").path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
        let bound = withUnixSocketAddress(path) { bind(listener, $0, $1) }
        guard bound == 0, listen(listener, 8) == 0 else {
            close(listener)
            throw POSIXError(.init(rawValue: errno)!)
        }
        self.path = path
        self.listener = listener
        guard let bytes else { return }
        // Captures only the descriptor and the box, not the server: deinit can always run,
        // and its shutdown(listener) wakes an accept still waiting.
        let accepted = accepted
        let sent = sent
        Thread {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            _ = Array(bytes.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if thenClosing { close(fd) } else { accepted.fd.withLock { $0 = fd } }
            sent.signal()
        }.start()
    }

    /// Waits until the bytes are sent; false after 5 s.
    public func awaitSent() -> Bool {
        sent.wait(timeout: .now() + 5) == .success
    }

    deinit {
        _ = shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        accepted.fd.withLock { if $0 >= 0 { close($0) } }
        unlink(path)
    }
}
