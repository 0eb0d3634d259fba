// SPDX-License-Identifier: Apache-2.0

/// One file in the hooks directory and what netpath makes of it: what `netpathctl hooks` lists.
package struct HookEntry: Hashable, Sendable, CustomStringConvertible {
    /// Whether a file runs as a hook.
    package enum Status: Hashable, Sendable, CustomStringConvertible {
        /// It passes every trust check and runs.
        case accepted
        /// It fails a trust check and never runs; logged once per file and reason.
        case refused(HookRefusal)
        /// Its name marks it as not a hook (a dotfile, a backup, a package manager's leftover).
        case ignored(IgnoreReason)

        package var description: String {
            switch self {
            case .accepted: return "accepted"
            case .refused(let reason): return "refused: \(reason)"
            case .ignored(let reason): return "ignored: \(reason)"
            }
        }
    }

    /// Why a name is skipped without a trust check, like run-parts and NetworkManager-dispatcher do.
    package enum IgnoreReason: String, Hashable, Sendable, CustomStringConvertible {
        /// The name starts with `.`.
        case dotfile
        /// An editor backup: the name ends with `~`.
        case backup
        /// A dpkg leftover: `.dpkg-old`, `.dpkg-dist`, `.dpkg-new`, `.dpkg-tmp`, …
        case dpkg
        /// An rpm leftover: `.rpmsave`, `.rpmnew`, `.rpmorig`, …
        case rpm
        /// A NetworkManager-dispatcher subdirectory (`no-wait.d`, `pre-up.d`, `pre-down.d`): not
        /// a hook itself (``DialectHookDirectory``).
        case dispatcherSubdirectory
        /// A symlink to `/dev/null`: masks the file of the same name in later directories.
        case masked
        /// A file of the same name in an earlier directory of the search path runs instead.
        case overridden
        /// In a networkd-dispatcher directory of a state netpath never enters (`enslaved.d`, …,
        /// ``NetworkdState``).
        case stateNeverEntered

        package var description: String {
            switch self {
            case .dotfile: return "dotfile"
            case .backup: return "backup file (~)"
            case .dpkg: return "dpkg leftover (.dpkg-*)"
            case .rpm: return "rpm leftover (.rpm*)"
            case .dispatcherSubdirectory: return "dispatcher subdirectory, not a hook"
            case .masked: return "masked (a symlink to /dev/null)"
            case .overridden: return "overridden by the same name in an earlier directory"
            case .stateNeverEntered: return "netpath never enters this state"
            }
        }

        /// Why `name` is ignored, or `nil` when it is a candidate hook.
        package init?(name: String) {
            if name.hasPrefix(".") {
                self = .dotfile
            } else if name.hasSuffix("~") {
                self = .backup
            } else if name.contains(".dpkg-") {
                self = .dpkg
            } else if name.contains(".rpm") {
                self = .rpm
            } else {
                return nil
            }
        }
    }

    /// The file name inside the hooks directory.
    package var name: String
    package var status: Status

    package init(name: String, status: Status) {
        self.name = name
        self.status = status
    }

    /// `50-vpn: refused: writable by group or others (mode 0775)`.
    package var description: String { "\(name): \(status)" }
}
