// SPDX-License-Identifier: Apache-2.0

/// The links netpath does not track (`[agent] ignore`): by name glob, by netlink link kind, or by
/// a udev property, except those an administrator names (``kept``).
///
/// Pure: the udev property is asked of a closure, so the Linux layer decides where udev's
/// database is (and whether it belongs to the namespace followed).
///
/// ```swift
/// let list = LinkIgnoreList(entries: [.name(try Glob("veth*")), .kind("vxlan")], kept: [])
/// list.match(name: "veth1a2b3c4", kind: "veth") { _, _ in false }   // 0: the first entry
/// ```
package struct LinkIgnoreList: Hashable, Sendable {
    /// One `ignore` entry as written: `"veth*"`, `"kind:vxlan"`, `"udev:NM_UNMANAGED=1"`.
    package enum Entry: Hashable, Sendable, CustomStringConvertible {
        /// A name glob. Kernel names never contain `:` (`dev_valid_name`), so it cannot be
        /// mistaken for the prefixed forms.
        case name(Glob)
        /// A netlink link kind (`IFLA_INFO_KIND`): `veth`, `bridge`, `vxlan`, …
        case kind(String)
        /// A property in udev's database for the link (`E:KEY=VALUE` in `/run/udev/data/nINDEX`).
        case udev(property: String, value: String)

        /// Why an entry was refused, for `check-config`.
        package struct ParseError: Error, Hashable, Sendable {
            package var message: String
        }

        /// Parses one entry.
        package init(parsing text: String) throws(ParseError) {
            if text.hasPrefix("kind:") {
                let kind = String(text.dropFirst(5))
                guard !kind.isEmpty, kind.unicodeScalars.allSatisfy(Self.isKindCharacter) else {
                    throw ParseError(
                        message:
                            "a link kind after \"kind:\" is lower-case letters, digits, - or _, e.g. \"kind:vxlan\""
                    )
                }
                self = .kind(kind)
            } else if text.hasPrefix("udev:") {
                let assignment = text.dropFirst(5)
                let parts = assignment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
                    parts[0].unicodeScalars.allSatisfy(Self.isPropertyCharacter),
                    !parts[1].unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 })
                else {
                    throw ParseError(message: "a udev entry is \"udev:PROPERTY=VALUE\", e.g. \"udev:NM_UNMANAGED=1\"")
                }
                self = .udev(property: String(parts[0]), value: String(parts[1]))
            } else if text.contains(":") {
                throw ParseError(
                    message:
                        "an entry is a name glob (names never contain ':'), \"kind:KIND\" or \"udev:PROPERTY=VALUE\""
                )
            } else {
                guard !text.isEmpty else { throw ParseError(message: "an entry must not be empty") }
                do {
                    self = .name(try Glob(text))
                } catch {
                    throw ParseError(message: "not a valid name glob: \(error.message)")
                }
            }
        }

        private static func isKindCharacter(_ c: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(c) || ("0"..."9").contains(c) || c == "-" || c == "_"
        }

        private static func isPropertyCharacter(_ c: Unicode.Scalar) -> Bool {
            ("A"..."Z").contains(c) || ("a"..."z").contains(c) || ("0"..."9").contains(c) || c == "_"
        }

        /// The entry as written in the configuration.
        package var description: String {
            switch self {
            case .name(let glob): glob.pattern
            case .kind(let kind): "kind:\(kind)"
            case .udev(let property, let value): "udev:\(property)=\(value)"
            }
        }
    }

    /// The entries, in file order: the first that matches is the reason shown.
    package var entries: [Entry]
    /// Names an administrator named elsewhere in the configuration (an `[[interface]]`'s `match`,
    /// a rule's `interface`): a link they match is always tracked, whatever ``entries`` say.
    package var kept: [Glob]

    /// A list that ignores what `entries` match, except the names `kept` matches.
    package init(entries: [Entry], kept: [Glob] = []) {
        self.entries = entries
        self.kept = kept
    }

    /// Ignores nothing.
    package static let none = LinkIgnoreList(entries: [])

    /// What container runtimes create on the host side, by the names their own code gives them
    /// (docs/configuration.md lists the source of each), and NetworkManager's udev mark.
    /// Docker's user-defined bridges are `br-` and 12 hex digits of the network's id: spelt out, so
    /// that a bridge an administrator calls `br-lan` or `br-wan` (OpenWrt's) stays tracked.
    package static let containerDefaults: [Entry] = {
        let dockerBridge = "br-" + String(repeating: "[0-9a-f]", count: 12)
        let texts: [String] = [
            "veth*", "docker0", dockerBridge, "cni*", "cali*", "tunl0", "vxlan.calico", "vxlan-v6.calico",
            "wireguard.cali", "wg-v6.cali", "lxc*", "cilium_*", "flannel*", "podman*", "kube-ipvs0",
            "udev:NM_UNMANAGED=1",
        ]
        return texts.map { try! Entry(parsing: $0) }
    }()

    /// Whether nothing is ignored.
    package var isEmpty: Bool { entries.isEmpty }

    /// Whether any entry asks udev.
    package var asksUdev: Bool {
        entries.contains { if case .udev = $0 { true } else { false } }
    }

    /// The index in ``entries`` of the first entry that ignores the link, or `nil` when it is
    /// tracked. `udev(property, value)` is asked only for udev entries, after the cheaper ones.
    package func match(name: String, kind: String, udev: (String, String) -> Bool) -> Int? {
        guard !entries.isEmpty, !kept.contains(where: { $0.matches(name) }) else { return nil }
        var asked: Int?
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .name(let glob): if glob.matches(name) { return index }
            case .kind(let wanted): if wanted == kind { return index }
            case .udev: if asked == nil { asked = index }
            }
        }
        guard asked != nil else { return nil }
        for (index, entry) in entries.enumerated() {
            if case .udev(let property, let value) = entry, udev(property, value) { return index }
        }
        return nil
    }

    /// Why the link was ignored, as `explain` and `status --all` say it.
    package func reason(entry index: Int) -> String {
        guard entries.indices.contains(index) else { return "ignored" }
        switch entries[index] {
        case .name(let glob): return "name matches \"\(glob.pattern)\" in [agent] ignore"
        case .kind(let kind): return "link kind \(kind) (\"kind:\(kind)\" in [agent] ignore)"
        case .udev(let property, let value):
            return "udev sets \(property)=\(value) (\"udev:\(property)=\(value)\" in [agent] ignore)"
        }
    }
}

/// A link netpath does not track, as `status` and `explain` list it.
package struct IgnoredInterface: Hashable, Sendable, Codable {
    /// The kernel's index.
    package var index: Int32
    /// The name, escaped as everywhere (``InterfaceName``).
    package var name: String
    /// Why: the `ignore` entry that matched.
    package var reason: String

    package init(index: Int32, name: String, reason: String) {
        self.index = index
        self.name = name
        self.reason = reason
    }
}
