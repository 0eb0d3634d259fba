// SPDX-License-Identifier: Apache-2.0

import Foundation

/// Whether tests that need root and network namespaces can run here.
public enum Privileges {
    /// True when running as root, and also under CI: there such tests must run (and fail loudly
    /// if root is missing), never skip.
    public static var namespaceTestsEnabled: Bool {
        getuid() == 0 || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// Throws a clear error when not root (reached only under CI without root).
    public static func requireRoot() throws {
        guard getuid() == 0 else {
            throw TestFailure("this test creates network namespaces and needs root (run `make test` as root)")
        }
    }
}

/// A test failure with a readable message.
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
