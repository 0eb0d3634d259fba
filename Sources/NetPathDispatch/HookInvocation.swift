// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// Everything a hook receives: the hook contract of docs/hooks.md, as code.
///
/// A hook `NAME` in the hooks directory is executed directly (never through a shell; no value is
/// ever interpolated into a command line) with:
///
/// - **argv**: `[NAME, INTERFACE, EVENT]`. `INTERFACE` is the interface the event concerns; for
///   a path event, the path's primary interface, or `""` when there is none. `EVENT` is the event
///   name (`up`, `carrier-down`, `satisfied`, …). A `#!` script sees its real path as `$0`
///   (`/etc/netpath/hooks.d/NAME`, see ``OpenedHook/executablePath``), as from run-parts or
///   NetworkManager-dispatcher; `$1` and `$2` are the interface and the event.
/// - **environment**, exactly these variables and nothing inherited from the agent:
///
///   | variable | value |
///   |---|---|
///   | `NETPATH_EVENT` | the event name (= argv[2]) |
///   | `NETPATH_SCOPE` | `interface` or `path` |
///   | `NETPATH_POLICY` | the policy, for path events; else empty |
///   | `NETPATH_RULE` | the rule that matched; empty with no rules (dispatcher mode) |
///   | `NETPATH_INTERFACE` | = argv[1]: the kernel's bytes of the name (``InterfaceName``) |
///   | `NETPATH_INTERFACE_TYPE` | `wired`, `wifi`, `cellular`, `loopback`, `other`; empty when none |
///   | `NETPATH_INTERFACE_KIND` | the link kind (`veth`, `bridge`, …), interface events only |
///   | `NETPATH_PREVIOUS_INTERFACE` | the previous primary (path) or previous name (rename) |
///   | `NETPATH_STATUS` | path: `satisfied`, `unsatisfied`, `requires-connection`; interface: the operational state (`up`, `down`, `lowerlayerdown`, …) |
///   | `NETPATH_METERED` | `1` if the path is expensive / the interface metered, else `0` |
///   | `NETPATH_CONSTRAINED` | `1` or `0` |
///   | `NETPATH_IPV4`, `NETPATH_IPV6` | `1` if the path supports the family / the interface can route it by itself, else `0` |
///   | `NETPATH_DNS` | path: `1` or `0` (a reachable DNS server); interface events: empty (unknown per interface) |
///   | `NETPATH_ADDRESSES` | interface events: its addresses as `ADDR/PREFIX`, space-separated; path events: empty |
///   | `NETPATH_GATEWAYS` | path: the primaries' gateways; interface: its default routes' gateways; space-separated |
///   | `NETPATH_STARTUP` | `1` for the state dispatched once at start, else `0` |
///   | `NETPATH_CONNECTIVITY` | the interface's (path: the path's) connectivity: `unknown`, `none`, `limited`, `portal`, `full` |
///   | `NETPATH_PREVIOUS_CONNECTIVITY` | for `connectivity-changed`: the state before; else empty |
///   | `NETPATH_PORTAL_URL` | the captive portal's URL while the connectivity is `portal`; else empty |
///   | `PATH` | `/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin` |
///   | `LANG` | `C.UTF-8` |
///
/// - **stdin**: the event as one line of JSON (``JSONCoding/line(_:)``, the `monitor --json`
///   shape) followed by `"\n"`, then end of file. (Written once the hook has been spawned:
///   ``HookInput`` says why.)
/// - **working directory** `/`; its own process group (the timeout signals the whole group);
///   no descriptor of the agent's other than stdin, stdout and stderr; default signal
///   dispositions and an empty signal mask.
/// - **stdout and stderr** are pipes to the agent: each line is logged tagged with the hook's
///   name, within ``HookOutputLimits``.
/// - **timeout**: after ``timeout`` the group gets SIGTERM, and SIGKILL after the runner's grace
///   period. What the hook leaves running gets a short grace after it exits, then SIGKILL
///   (``HookRunner``).
package struct HookInvocation: Hashable, Sendable {
    /// The fixed `PATH` a hook gets.
    package static let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    /// The fixed `LANG` a hook gets.
    package static let language = "C.UTF-8"
    /// Every variable a hook gets, in a stable order.
    package static let environmentNames = [
        "NETPATH_EVENT", "NETPATH_SCOPE", "NETPATH_POLICY", "NETPATH_RULE", "NETPATH_INTERFACE",
        "NETPATH_INTERFACE_TYPE", "NETPATH_INTERFACE_KIND", "NETPATH_PREVIOUS_INTERFACE", "NETPATH_STATUS",
        "NETPATH_METERED", "NETPATH_CONSTRAINED", "NETPATH_IPV4", "NETPATH_IPV6", "NETPATH_DNS",
        "NETPATH_ADDRESSES", "NETPATH_GATEWAYS", "NETPATH_STARTUP", "NETPATH_CONNECTIVITY",
        "NETPATH_PREVIOUS_CONNECTIVITY", "NETPATH_PORTAL_URL", "PATH", "LANG",
    ]

    /// The hook's file name in the hooks directory; the program run is that file, as checked
    /// (``OpenedHook``).
    package var hook: String
    /// The full argv, argv[0] included: `[hook, interface, event]`.
    package var arguments: [String]
    /// The complete environment.
    package var environment: [String: String] {
        get { environmentSource.variables }
        set { environmentSource = .variables(newValue) }
    }
    /// Where ``environment`` comes from; an event's hooks share its payload's entries.
    private var environmentSource: EnvironmentSource
    /// What is written to stdin before it is closed.
    package var standardInput: HookInput
    /// The working directory.
    package var workingDirectory: String
    /// How long the hook may run before its process group is terminated.
    package var timeout: Duration
    /// The variables ``environmentBytes`` writes first, in this order; the rest follow sorted.
    package var variableOrder: [String] = HookInvocation.environmentNames
    /// The variables that hold interface names, passed as the kernel's bytes.
    package var interfaceVariables: Set<String> = HookInvocation.interfaceVariables

    /// Builds the invocation of hook `hook` for `event`, matched by `rule`.
    ///
    /// Its stdin is encoded when the runner first asks for it (``HookInput``).
    package init(hook: String, event: Event, rule: String?, timeout: Duration) {
        self.init(hook: hook, payload: EventPayload(event), rule: rule, timeout: timeout)
    }

    /// What every hook of one event gets alike: its environment but `NETPATH_RULE`, and its
    /// stdin. The dispatcher computes it once per event, not once per hook.
    ///
    /// The environment is kept as the hook gets it, `NAME=VALUE` C strings in
    /// ``environmentNames`` order in one buffer (``CStringList``), split around `NETPATH_RULE`,
    /// which each hook's rule fills: built without a dictionary (hashing two dozen names into one,
    /// then looking each up again in order, was work every hook's start waited for: BENCHMARKS.md,
    /// "The hook environment built through a dictionary"), and without an allocation per entry.
    ///
    /// A class: made once and never changed, it is shared by the event's invocations, which
    /// each copied the event and both lists while it was a struct.
    package final class EventPayload: Sendable {
        /// The event (the variables, should anyone ask for them as a dictionary, derive from it).
        let event: Event
        /// The entries before `NETPATH_RULE`, and those after it.
        let beforeRule: CStringList
        let afterRule: CStringList
        let standardInput: HookInput

        var interface: String { event.interface ?? "" }
        var name: String { event.name.rawValue }

        package init(_ event: Event) {
            self.event = event
            var before = CStringList()
            var after = CStringList()
            // Room for the usual entries (their names alone are ~300 bytes), so that neither
            // list grows while it is written.
            before.reserveCapacity(128)
            after.reserveCapacity(768)
            var slot = 0
            HookInvocation.forEachVariable(for: event, rule: nil) { entry, value in
                defer { slot += 1 }
                if slot < HookInvocation.ruleSlot {
                    HookInvocation.append(slot, entry, value, to: &before)
                } else if slot > HookInvocation.ruleSlot {
                    HookInvocation.append(slot, entry, value, to: &after)
                }
            }
            beforeRule = before
            afterRule = after
            standardInput = .event(EventLine(event))
        }
    }

    /// Where an invocation's environment comes from.
    private enum EnvironmentSource: Hashable, Sendable {
        /// Any variables (another dialect's contract; a test).
        case variables([String: String])
        /// An event's shared payload, with the rule that matched.
        case event(EventPayload, rule: String)

        var variables: [String: String] {
            switch self {
            case .variables(let variables):
                return variables
            case .event(let payload, let rule):
                return HookInvocation.environment(for: payload.event, rule: rule)
            }
        }

        static func == (lhs: Self, rhs: Self) -> Bool { lhs.variables == rhs.variables }
        func hash(into hasher: inout Hasher) { hasher.combine(variables) }
    }

    /// The invocation of hook `hook` for the event of `payload`, matched by `rule`.
    package init(hook: String, payload: EventPayload, rule: String?, timeout: Duration) {
        self.hook = hook
        self.arguments = [hook, payload.interface, payload.name]
        self.environmentSource = .event(payload, rule: rule ?? "")
        self.standardInput = payload.standardInput
        self.workingDirectory = "/"
        self.timeout = timeout
    }

    /// An invocation of another dialect's contract (``NetworkManagerInvocation``): argv[1] is
    /// the interface, `interfaceVariables` hold interface names, and the environment is written
    /// in `variableOrder`.
    package init(
        hook: String,
        arguments: [String],
        environment: [String: String],
        variableOrder: [String],
        interfaceVariables: Set<String>,
        standardInput: HookInput = .bytes([]),
        timeout: Duration
    ) {
        self.hook = hook
        self.arguments = arguments
        self.environmentSource = .variables(environment)
        self.standardInput = standardInput
        self.workingDirectory = "/"
        self.timeout = timeout
        self.variableOrder = variableOrder
        self.interfaceVariables = interfaceVariables
    }

    /// argv as the hook gets it: the interface name (argv[1]) is the kernel's bytes, not its
    /// escaped string form (``InterfaceName``); everything else is UTF-8.
    package var argumentBytes: [[UInt8]] { arguments.isEmpty ? [] : argumentList.entries }

    /// ``argumentBytes`` as the spawn passes them; argv[0] alone (the hook's name) when there are
    /// no arguments.
    var argumentList: CStringList {
        var list = CStringList()
        if arguments.isEmpty { list.append([], hook) }
        for (index, argument) in arguments.enumerated() {
            // argv[1], the interface: a name without a backslash is its kernel bytes already.
            if index == 1, !InterfaceName.isVerbatim(argument) {
                list.append([], InterfaceName.kernelBytes(argument))
            } else {
                list.append([], argument)
            }
        }
        return list
    }

    /// The environment as the hook gets it, as `NAME=VALUE` entries in ``environmentNames``
    /// order: `NETPATH_INTERFACE` and `NETPATH_PREVIOUS_INTERFACE` hold the kernel's bytes of the
    /// names (``InterfaceName``), everything else UTF-8.
    package var environmentBytes: [[UInt8]] { environmentList.entries }

    /// ``environmentBytes`` as C strings, as the spawn passes them.
    var environmentList: CStringList {
        if case .event(let payload, let rule) = environmentSource, variableOrder == Self.environmentNames,
            interfaceVariables == Self.interfaceVariables
        {
            // An event's hook: its payload's entries, with its own rule.
            var list = CStringList()
            list.reserveCapacity(payload.beforeRule.byteCount + payload.afterRule.byteCount + rule.utf8.count + 16)
            list.append(contentsOf: payload.beforeRule)
            Self.append(Self.ruleSlot, "NETPATH_RULE=", rule, to: &list)
            list.append(contentsOf: payload.afterRule)
            return list
        }
        let environment = self.environment
        var list = CStringList()
        func append(_ name: String, _ value: String) {
            let prefix = Array(name.utf8) + [UInt8(ascii: "=")]
            if interfaceVariables.contains(name) {
                list.append(prefix, InterfaceName.kernelBytes(value))
            } else {
                list.append(prefix, value)
            }
        }
        for name in variableOrder {
            if let value = environment[name] { append(name, value) }
        }
        // Variables outside the order (none in netpath's own contract) follow, sorted.
        if list.count < environment.count {
            let ordered = Set(variableOrder)
            for name in environment.keys.filter({ !ordered.contains($0) }).sorted() { append(name, environment[name]!) }
        }
        return list
    }

    /// Appends the entry `NAME=value` of variable `slot` of ``environmentNames`` (`entry` is its
    /// `NAME=`): the kernel's bytes for an interface name, UTF-8 otherwise.
    private static func append(_ slot: Int, _ entry: StaticString, _ value: String, to list: inout CStringList) {
        // A name without a backslash is its kernel bytes already (InterfaceName).
        if slot == interfaceSlot || slot == previousInterfaceSlot, !InterfaceName.isVerbatim(value) {
            list.append(entry, InterfaceName.kernelBytes(value))
        } else {
            list.append(entry, value)
        }
    }
    /// Where `NETPATH_RULE`, `NETPATH_INTERFACE` and `NETPATH_PREVIOUS_INTERFACE` sit in
    /// ``environmentNames`` (HookInvocationTests holds them to it). Literals, not looked up: a
    /// lazily computed global is a `swift_once` on every use, and these are read per variable.
    package static let ruleSlot = 3
    package static let interfaceSlot = 4
    package static let previousInterfaceSlot = 7

    /// The variables that hold interface names.
    static let interfaceVariables: Set<String> = ["NETPATH_INTERFACE", "NETPATH_PREVIOUS_INTERFACE"]

    /// The environment of the table above.
    package static func environment(for event: Event, rule: String?) -> [String: String] {
        Dictionary(variables(for: event, rule: rule), uniquingKeysWith: { _, last in last })
    }

    /// The environment of the table above, in ``environmentNames`` order.
    static func variables(for event: Event, rule: String?) -> [(name: String, value: String)] {
        var variables: [(name: String, value: String)] = []
        variables.reserveCapacity(environmentNames.count)
        forEachVariable(for: event, rule: rule) { entry, value in
            let name = entry.withUTF8Buffer { String(decoding: $0.dropLast(), as: UTF8.self) }
            variables.append((name, value))
        }
        return variables
    }

    /// Calls `body` with each variable of the table above, its entry's `NAME=` and its value, in
    /// ``environmentNames`` order: the one place the values are made. (The payload writes them
    /// as they come, without a list of pairs in between; the names are literals, so that
    /// writing one is a copy of its bytes.)
    static func forEachVariable(for event: Event, rule: String?, _ body: (StaticString, String) -> Void) {
        func flag(_ value: Bool) -> String { value ? "1" : "0" }
        let state = event.interfaceState
        let path = event.path
        // Per scope: status, metered, constrained, IPv4, IPv6, DNS, addresses, gateways,
        // connectivity, portal URL. (Named values, not an array of them, and lists written into
        // one string each: both were allocations and generic code on every hook's way to its
        // spawn.)
        let connectivity: Connectivity
        let status: String
        let metered: Bool
        let constrained: Bool
        let ipv4: Bool
        let ipv6: Bool
        let dns: String
        let addresses: String
        let gateways: String
        let portalURL: String?
        switch event.scope {
        case .path:
            connectivity = event.connectivity ?? path?.connectivity ?? .unknown
            status = path?.status.rawValue ?? ""
            metered = path?.isExpensive ?? false
            constrained = path?.isConstrained ?? false
            ipv4 = path?.supportsIPv4 ?? false
            ipv6 = path?.supportsIPv6 ?? false
            dns = path.map { flag($0.supportsDNS) } ?? ""
            addresses = ""
            gateways = spaced(path?.gateways ?? []) { $0.description }
            portalURL = path?.portalURL
        default:
            // `interface`, and a scope this version does not know: its interface's values, if any.
            connectivity = event.connectivity ?? state?.connectivity ?? .unknown
            status = state?.operState.rawValue ?? ""
            metered = state?.isMetered ?? false
            constrained = state?.isConstrained ?? false
            ipv4 = state?.canRoute(.ipv4) ?? false
            ipv6 = state?.canRoute(.ipv6) ?? false
            dns = ""
            // `ADDR/PREFIX`, which is InterfaceAddress's description (HookVariablesTests holds
            // the variables to the contract's table).
            addresses = spaced(state?.addresses ?? []) { $0.description }
            gateways = spaced(state?.defaultRoutes ?? []) { $0.gateway?.description }
            portalURL = state?.portalURL
        }
        // In environmentNames order (HookInvocationTests checks the names and the order).
        body("NETPATH_EVENT=", event.name.rawValue)
        body("NETPATH_SCOPE=", event.scope.rawValue)
        body("NETPATH_POLICY=", event.policy ?? "")
        body("NETPATH_RULE=", rule ?? "")
        body("NETPATH_INTERFACE=", event.interface ?? "")
        body("NETPATH_INTERFACE_TYPE=", (event.interfaceType ?? state?.type)?.rawValue ?? "")
        body("NETPATH_INTERFACE_KIND=", state?.kind ?? "")
        body("NETPATH_PREVIOUS_INTERFACE=", event.previousInterface ?? "")
        body("NETPATH_STATUS=", status)
        body("NETPATH_METERED=", flag(metered))
        body("NETPATH_CONSTRAINED=", flag(constrained))
        body("NETPATH_IPV4=", flag(ipv4))
        body("NETPATH_IPV6=", flag(ipv6))
        body("NETPATH_DNS=", dns)
        body("NETPATH_ADDRESSES=", addresses)
        body("NETPATH_GATEWAYS=", gateways)
        body("NETPATH_STARTUP=", flag(event.startup))
        body("NETPATH_CONNECTIVITY=", connectivity.rawValue)
        body("NETPATH_PREVIOUS_CONNECTIVITY=", event.previousConnectivity?.rawValue ?? "")
        body("NETPATH_PORTAL_URL=", connectivity == .portal ? portalURL ?? "" : "")
        body("PATH=", Self.path)
        body("LANG=", Self.language)
    }

    /// The texts of `items`, space-separated, in one string; an item without one (`nil`) is left
    /// out.
    private static func spaced<Item>(_ items: [Item], _ text: (Item) -> String?) -> String {
        var result = ""
        for item in items {
            guard let part = text(item) else { continue }
            if !result.isEmpty { result.append(" ") }
            result.append(part)
        }
        return result
    }
}
