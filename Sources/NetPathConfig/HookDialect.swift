/// The contract a hook directory's scripts were written for: the arguments and environment they
/// get, and which events run them (docs/hooks.md, "Hooks written for other dispatchers").
public enum HookDialect: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// netpath's own contract (`HookInvocation`): every event, `NAME INTERFACE EVENT`.
    case netpath
    /// NetworkManager-dispatcher(8): `SCRIPT IFACE ACTION` with `NM_DISPATCHER_ACTION`,
    /// `DEVICE_IFACE`, `IP4_ADDRESS_N`, …
    case networkmanager
    /// networkd-dispatcher(8): one directory per operational state.
    case networkd

    /// The dialects `[[hook_dir]]` accepts today.
    public static let supported: [HookDialect] = [.netpath, .networkmanager]

    public var description: String { rawValue }
}
