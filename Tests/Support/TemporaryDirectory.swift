// SPDX-License-Identifier: Apache-2.0

import Foundation

/// A fresh directory under the system's temporary one, for tests of files that no trust rule
/// looks at (hooks need ``ScratchDirectory``).
public enum TemporaryDirectory {
    /// Makes the directory, runs `body` with its path, and removes it with all it holds after.
    ///
    /// - Parameter prefix: The start of the directory's name, to tell tests apart in a listing.
    public static func with(_ prefix: String, _ body: (String) throws -> Void) throws {
        var template = Array((NSTemporaryDirectory() + "/" + prefix + "-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw TestFailure("mkdtemp in \(NSTemporaryDirectory()): \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory)
    }
}
