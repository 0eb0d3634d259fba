// SPDX-License-Identifier: Apache-2.0

import Foundation

/// Fresh directories for tests whose files the hook trust rules must accept.
///
/// netpath refuses a hook when any directory on its path, from `/` down, is writable by group
/// or others, sticky or not: so a hooks directory under `/tmp` is always refused. Tests that run
/// hooks make their directories here instead: under `/run/netpath-tests` as root (`/run` is
/// root's, mode 0755), under `$XDG_RUNTIME_DIR` or `$HOME` otherwise (the user's own).
public enum ScratchDirectory {
    /// A new, empty directory, mode 0755, whose every ancestor only root or this user can change.
    ///
    /// - Parameter prefix: The start of the directory's name, to tell tests apart in a listing.
    public static func make(_ prefix: String) throws -> URL {
        let base = try self.base()
        var template = Array((base + "/" + prefix + "-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw TestFailure("mkdtemp in \(base): \(String(cString: strerror(errno)))")
        }
        let path = String(cString: made)
        guard chmod(path, 0o755) == 0 else { throw TestFailure("chmod \(path): \(String(cString: strerror(errno)))") }
        return URL(fileURLWithPath: path, isDirectory: true)
    }

    private static func base() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let base: String
        if getuid() == 0 {
            base = "/run/netpath-tests"
        } else if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            base = runtime + "/netpath-tests"
        } else {
            base = (environment["HOME"] ?? NSHomeDirectory()) + "/.cache/netpath-tests"
        }
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        // Another user's or an open base would make every test hook refused: say so plainly.
        var status = stat()
        guard stat(base, &status) == 0, status.st_uid == getuid(), status.st_mode & 0o022 == 0 else {
            throw TestFailure("\(base) must be owned by uid \(getuid()) and not writable by group or others")
        }
        return base
    }
}
