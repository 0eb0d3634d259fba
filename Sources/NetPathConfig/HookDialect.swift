// SPDX-License-Identifier: Apache-2.0

/// The contract a hook directory's scripts were written for: the arguments and environment they
/// get, and which events run them (docs/hooks.md, "Hooks written for other dispatchers").
public enum HookDialect: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// netpath's own contract (`HookInvocation`): every event, `NAME INTERFACE EVENT`.
    case netpath
    /// NetworkManager-dispatcher(8): `SCRIPT IFACE ACTION` with `NM_DISPATCHER_ACTION`,
    /// `DEVICE_IFACE`, `IP4_ADDRESS_N`, …
    case networkmanager
    /// networkd-dispatcher(8): one subdirectory per state (`routable.d`, `off.d`, …), scripts
    /// run when an interface enters that state, with `IFACE`, `STATE`, `OperationalState`, …
    case networkd

    /// The dialects `[[hook_dir]]` accepts.
    public static let supported: [HookDialect] = [.netpath, .networkmanager, .networkd]

    /// The search path a `[[hook_dir]]` of this dialect uses when it has no `path`:
    /// networkd-dispatcher's own default; `nil` when `path` is required.
    public var defaultPaths: [String]? {
        switch self {
        case .networkd: return ["/etc/networkd-dispatcher", "/usr/lib/networkd-dispatcher"]
        case .netpath, .networkmanager: return nil
        }
    }

    public var description: String { rawValue }
}
