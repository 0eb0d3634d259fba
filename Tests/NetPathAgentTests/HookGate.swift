// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport

/// A gate that hooks wait at until the test releases it: the test holds an exclusive `flock(2)` on
/// a file, and a hook that runs ``waitCommand`` blocks on a shared lock of the same file. Releasing
/// lets every waiting hook through at once, and later ones pass straight away; a hook is never
/// left sleeping after the test, as a `sleep 40` would be.
final class HookGate: @unchecked Sendable {
    // @unchecked: `descriptor` is set in init and only closed (once, under `lock`) afterwards.
    let path: String
    private var descriptor: Int32
    private let lock = NSLock()

    /// Creates the gate, closed, as a file in `directory`.
    init(in directory: URL) throws {
        path = directory.appendingPathComponent("gate.lock").path
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else {
            throw TestFailure("cannot lock \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { release() }

    /// A shell command that returns once the gate is open.
    var waitCommand: String { "flock -s \(path) true" }

    /// Lets every hook through.
    func release() {
        lock.lock()
        defer { lock.unlock() }
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }
}
