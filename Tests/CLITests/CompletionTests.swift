// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// The completion scripts in the package load in bash, zsh and fish from where the package puts
/// them, and complete a subcommand. Each shell runs with an empty environment but for a scratch
/// HOME, a PATH that finds the package's binaries first, and (bash, fish) XDG_DATA_DIRS naming
/// the package's /usr/share, so each looks for completions exactly as it does on a system.
@Suite(.serialSuite, .enabled(if: DebianPackage.testsEnabled, "needs make test-deps' shells"))
struct CompletionTests {
    /// Runs `arguments` in the clean environment described above.
    private func shell(_ package: DebianPackage.Built, _ arguments: [String]) throws -> Command.Result {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("np-completion-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        return try Command.run(
            [
                "env", "-i", "HOME=\(home.path)",
                "PATH=\(package.contents)/usr/sbin:\(package.contents)/usr/bin:/usr/bin:/bin",
                "XDG_DATA_DIRS=\(package.contents)/usr/share", "TERM=dumb",
                // A shell that waits for input it will never get fails here instead of hanging.
                "timeout", "60",
            ] + arguments
        )
    }

    @Test("bash: bash-completion loads netpathctl's script on demand; `netpathctl st` completes to status")
    func bash() async throws {
        let package = try await DebianPackage.current()
        let script = """
            source /usr/share/bash-completion/bash_completion || exit 2
            __load_completion netpathctl || { echo "no completion found for netpathctl" >&2; exit 3; }
            COMP_LINE='netpathctl st'; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(netpathctl st); COMP_CWORD=1
            COMPREPLY=()
            _netpathctl netpathctl st netpathctl
            printf '%s\\n' "${COMPREPLY[@]}"
            __load_completion netpathd || { echo "no completion found for netpathd" >&2; exit 3; }
            COMP_LINE='netpathd --log-l'; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(netpathd --log-l); COMP_CWORD=1
            COMPREPLY=()
            _netpathd netpathd --log-l netpathd
            printf '%s\\n' "${COMPREPLY[@]}"
            """

        let result = try shell(package, ["bash", "--norc", "--noprofile", "-c", script])

        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "")
        #expect(result.stdout == "status\n--log-level\n")
    }

    @Test("zsh: compinit finds _netpathctl in vendor-completions, and TAB after `netpathctl st` writes status")
    func zsh() async throws {
        let package = try await DebianPackage.current()
        let completions = "\(package.contents)/usr/share/zsh/vendor-completions"
        // An interactive zsh on a pseudo-terminal (zpty), as a user would have it. Each read
        // waits for a pattern that only the shell's answer matches (not the echo of what was
        // typed); `timeout` above bounds the whole.
        let script = """
            zmodload zsh/zpty || exit 2
            zpty shell zsh -f -i
            zpty -w shell "PS1='> '; fpath=(\(completions) \\$fpath); autoload -U compinit && compinit -u -D && print loaded:\\${_comps[netpathctl]}:\\${_comps[netpathd]}"
            zpty -r shell output '*loaded:_netpathctl:_netpathd*' || exit 3
            print -r -- "$output"
            zpty -w -n shell $'netpathctl st\\t'
            zpty -r shell output '*netpathctl status*' || exit 4
            print -r -- "$output"
            zpty -d shell
            """

        let result = try shell(package, ["zsh", "-f", "-c", script])

        #expect(result.status == 0, "zsh exited \(result.status) (124: timed out):\n\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("loaded:_netpathctl:_netpathd"), "\(result.stdout)")
        #expect(result.stdout.contains("netpathctl status"), "\(result.stdout)")
        #expect(
            !result.stdout.contains("command not found") && !result.stdout.contains("parse error"),
            "\(result.stdout)"
        )
    }

    @Test("fish: both scripts parse, and `complete -C` offers status for `netpathctl st`")
    func fish() async throws {
        let package = try await DebianPackage.current()
        let directory = "\(package.contents)/usr/share/fish/vendor_completions.d"
        for name in ["netpathctl", "netpathd"] {
            let parsed = try shell(package, ["fish", "--no-execute", "\(directory)/\(name).fish"])
            #expect(parsed.status == 0 && parsed.stderr == "", "\(name).fish: \(parsed.stderr)")
        }

        let result = try shell(package, ["fish", "-c", "complete -C 'netpathctl st'; complete -C 'netpathd --log-l'"])

        #expect(result.status == 0 && result.stderr == "", "\(result.stderr)")
        let candidates = result.stdout.split(separator: "\n").map { $0.split(separator: "\t")[0] }
        #expect(candidates == ["status", "--log-level"], "\(result.stdout)")
    }
}
