// SPDX-License-Identifier: Apache-2.0

import Glibc

/// Where the agent finds `netpath-probe`, and whether it may run what it found.
package enum HelperLocation {
    /// The installed place (`make install` with PREFIX=/usr, and the Debian package).
    package static let installed = "/usr/libexec/netpath/netpath-probe"

    /// The places looked at, in order: next to the running executable (a build directory:
    /// `.build/debug/netpath-probe` beside netpathd and the tests), `../libexec/netpath/` from it
    /// (`make install` with any PREFIX: /usr/local/sbin → /usr/local/libexec/netpath), then
    /// ``installed``.
    package static func candidates() -> [String] {
        var result: [String] = []
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if length > 0 {
            let exe = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let slash = exe.lastIndex(of: "/") {
                let directory = String(exe[..<slash])
                result.append(directory + "/netpath-probe")
                if let up = directory.lastIndex(of: "/") {
                    result.append(String(directory[..<up]) + "/libexec/netpath/netpath-probe")
                }
            }
        }
        result.append(installed)
        return result
    }

    /// The first candidate that exists, or ``installed`` (whose absence the first start reports).
    package static func find() -> String {
        candidates().first { access($0, F_OK) == 0 } ?? installed
    }

    /// Why the agent must not run `path`, or nil when it may: it must be a regular, executable
    /// file owned by root or by the agent's user and writable by no one else, since the agent
    /// (root) runs it.
    static func refusal(_ path: String) -> HelperProcess.StartError? {
        var status = stat()
        guard stat(path, &status) == 0 else { return .cannotInspect(path: path, errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .notARegularFile(path: path) }
        guard status.st_mode & 0o111 != 0 else { return .notExecutable(path: path) }
        guard status.st_uid == 0 || status.st_uid == geteuid() else {
            return .ownedByAnotherUser(path: path, uid: UInt32(status.st_uid))
        }
        guard status.st_mode & 0o022 == 0 else { return .writableByGroupOrOthers(path: path) }
        return directoryRefusal(path)
    }

    /// Why a directory on the way to `path` (its real path: symlinks resolved) lets someone else
    /// replace what the agent runs, or nil: each must be owned by root or the agent's user and
    /// closed to writes by group and others, as the hook trust rules ask (NetPathDispatch's
    /// TrustedPath, which this module sits below) — except a root-owned sticky directory such as
    /// `/tmp`, where no one can rename or remove an entry they do not own, and every entry on the
    /// way is checked for its owner in turn (a build directory under /tmp stays usable). Between
    /// this check and the spawn only root and the agent's user can change anything on the way,
    /// and they could replace the helper anyway.
    static func directoryRefusal(_ path: String) -> HelperProcess.StartError? {
        guard let resolved = realpath(path, nil) else { return .cannotInspect(path: path, errno: errno) }
        var directory = String(cString: resolved)
        free(resolved)
        while let slash = directory.lastIndex(of: "/") {
            directory = slash == directory.startIndex ? "/" : String(directory[..<slash])
            var status = stat()
            guard stat(directory, &status) == 0 else { return .cannotInspect(path: directory, errno: errno) }
            guard status.st_uid == 0 || status.st_uid == geteuid() else {
                return .directoryOwnedByAnotherUser(directory: directory, path: path, uid: UInt32(status.st_uid))
            }
            let sticky = status.st_mode & S_ISVTX != 0 && status.st_uid == 0
            guard status.st_mode & 0o022 == 0 || sticky else {
                return .directoryWritableByGroupOrOthers(directory: directory, path: path)
            }
            if directory == "/" { break }
        }
        return nil
    }
}
