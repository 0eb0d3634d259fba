// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport

/// The Debian packages `make deb` builds from this tree, for the suites that examine them
/// (DebianPackageTests, ManualPageTests, CompletionTests).
///
/// Each is built once per test run, whichever test asks first, and kept under
/// `.build/package-tests`. `make deb` reuses the release build in `.build/install`, which
/// `make test` brings up to date before the tests start; run alone, the first test waits for it.
enum DebianPackage {
    /// The repository: this file is Tests/CLITests/DebianPackage.swift.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A built package: its file, its Version and what `dpkg-deb -x` unpacks it to.
    struct Built: Sendable {
        var path: String
        var version: String
        /// The package's files, unpacked (not installed: no maintainer script ran).
        var contents: String
    }

    /// The version an upgrade goes to: the same binaries, a higher package Version.
    static var upgradeVersion: String { NetPathVersion.current + "+upgrade1" }

    /// `make deb`: the package of this tree, built once per run.
    static func current() async throws -> Built {
        try await Builds.shared.built("current") {
            try make(["deb", "DEB_DIR=\(directory)/current"])
            return try unpack(version: NetPathVersion.current, in: "\(directory)/current")
        }
    }

    /// `make deb NO_BUILD=1 DEB_VERSION=…`: the binaries of ``current()`` repacked with a higher
    /// Version, to upgrade to.
    static func upgrade() async throws -> Built {
        _ = try await current()
        return try await Builds.shared.built("upgrade") {
            try make(["deb", "NO_BUILD=1", "DEB_VERSION=\(upgradeVersion)", "DEB_DIR=\(directory)/upgrade"])
            return try unpack(version: upgradeVersion, in: "\(directory)/upgrade")
        }
    }

    /// True where these tests can run: as root (dpkg's scratch roots, mount namespaces), with
    /// the tools `make test-deps` installs. Under CI they always run, and fail if either is missing.
    static var testsEnabled: Bool {
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        let tools = ["dpkg-deb", "dpkg-shlibdeps", "lintian", "mandoc", "zsh", "fish", "unshare"]
        return getuid() == 0 && tools.allSatisfy { (try? Command.run(["sh", "-c", "command -v \($0)"]).status) == 0 }
            && FileManager.default.fileExists(atPath: "/usr/share/bash-completion/bash_completion")
    }

    /// The Debian architecture the packages are built for.
    static var architecture: String {
        get throws {
            try Command.check(["dpkg", "--print-architecture"]).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    private static var directory: String { repository.appendingPathComponent(".build/package-tests").path }

    /// `make ARGUMENTS…` in the repository. An outer `make test` must not leak its flags or
    /// jobserver into this make, hence the `env -u`.
    @discardableResult
    static func make(_ arguments: [String]) throws -> Command.Result {
        let result = try Command.run(
            [
                "env", "-u", "MAKEFLAGS", "-u", "MFLAGS", "-u", "MAKELEVEL", "make", "--no-print-directory", "-C",
                repository.path,
            ]
                + arguments
        )
        guard result.status == 0 else {
            throw TestFailure(
                "make \(arguments.joined(separator: " ")) exited \(result.status):\n\(result.stdout)\(result.stderr)"
            )
        }
        return result
    }

    private static func unpack(version: String, in directory: String) throws -> Built {
        let path = "\(directory)/netpath_\(version)_\(try architecture).deb"
        let contents = "\(directory)/contents"
        try? FileManager.default.removeItem(atPath: contents)
        try Command.check(["dpkg-deb", "-x", path, contents])
        return Built(path: path, version: version, contents: contents)
    }
}

/// The builds under way or done, so that concurrent tests share one.
private actor Builds {
    static let shared = Builds()
    private var builds: [String: Task<DebianPackage.Built, Error>] = [:]

    func built(_ key: String, _ build: @escaping @Sendable () throws -> DebianPackage.Built) async throws
        -> DebianPackage.Built
    {
        if let running = builds[key] { return try await running.value }
        // On a thread of its own: a build takes from seconds to minutes, and a test that waits
        // for it should not hold one of the few threads the other tests run on.
        let task = Task {
            try await withCheckedThrowingContinuation { continuation in
                Thread { continuation.resume(with: Result { try build() }) }.start()
            }
        }
        builds[key] = task
        return try await task.value
    }
}

/// An empty root for `dpkg --root`: its own dpkg database, so installing there never touches
/// this machine's, and the directories every Debian system has that deb-systemd-helper writes
/// into (they belong to other packages, so a purge rightly leaves them).
struct ScratchRoot {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("netpath-root-\(UUID().uuidString)").path
        for directory in [
            "var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers", "etc/systemd/system",
            "var/lib/systemd", "var/log",
        ] {
            try FileManager.default.createDirectory(atPath: "\(path)/\(directory)", withIntermediateDirectories: true)
        }
        try Data().write(to: URL(fileURLWithPath: "\(path)/var/lib/dpkg/status"))
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// `dpkg ARGUMENTS…` on this root. --force-script-chrootless runs the maintainer scripts
    /// here, with DPKG_ROOT set, instead of chrooted into a root that has no shell;
    /// --force-depends because the root's database has none of the libraries the package
    /// depends on (this machine has them: the binaries run).
    @discardableResult
    func dpkg(_ arguments: [String]) throws -> Command.Result {
        let result = try Command.run(
            [
                "dpkg", "--root=\(path)", "--admindir=\(path)/var/lib/dpkg", "--force-script-chrootless",
                "--force-depends",
            ]
                + arguments
        )
        guard result.status == 0 else {
            throw TestFailure(
                "dpkg \(arguments.joined(separator: " ")) exited \(result.status):\n\(result.stdout)\(result.stderr)"
            )
        }
        return result
    }

    /// `dpkg-query --showformat FORMAT --show netpath` in this root's database.
    func query(_ format: String) throws -> String {
        try Command.check([
            "dpkg-query", "--admindir=\(path)/var/lib/dpkg", "--showformat", format, "--show", "netpath",
        ])
    }

    /// Every path in the root but dpkg's own database, relative, directories included.
    var tree: Set<String> {
        Set(
            (FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? [])
                .filter { !$0.hasPrefix("var/lib/dpkg") }
        )
    }
}
