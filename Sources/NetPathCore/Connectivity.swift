// SPDX-License-Identifier: Apache-2.0

/// What a connectivity check found on one interface: whether the link reaches the internet,
/// only a captive portal, or less (docs/connectivity.md).
///
/// The states are NetworkManager's and ConnMan's; `unknown` is also the state of an interface
/// that is not probed (probing is off, or the interface is not one of `[connectivity]`'s).
///
/// A struct with static members rather than an enum, so that a new state in a later version
/// is not a breaking change: a `switch` over it needs a `default:`. Its raw value is the
/// text JSON, hook variables and configuration files carry.
public struct Connectivity: RawRepresentable, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Not probed yet, probing is disabled, or the probe helper is not answering.
    public static let unknown = Self(.unknown)
    /// No answer at all: nothing reached the endpoint (or no probed host answered).
    public static let none = Self(.none)
    /// Something answered, but not the expected answer and not a portal; or names do not resolve.
    public static let limited = Self(.limited)
    /// A captive portal answered in the endpoint's place (a redirect, or a page instead of the
    /// expected answer).
    public static let portal = Self(.portal)
    /// The expected answer came back: the link reaches the internet.
    public static let full = Self(.full)

    /// Every state this version knows, in declaration order.
    public static let allCases: [Self] = Value.allCases.map(Self.init)

    /// The text form (`unknown`).
    public var rawValue: String { value.rawValue }

    /// The state whose text form is `rawValue`; `nil` for one this version does not know.
    public init?(rawValue: String) {
        guard let value = Value(rawValue: rawValue) else { return nil }
        self.value = value
    }

    /// The text form.
    public var description: String { rawValue }

    private enum Value: String, CaseIterable {
        case unknown
        case none
        case limited
        case portal
        case full
    }

    private let value: Value

    private init(_ value: Value) { self.value = value }
}

/// How one probe is made: the part of `[connectivity]` the probe helper needs.
package enum ProbeMethod: Hashable, Sendable {
    /// An HTTP request to `uri`; `response` is the expected body (empty: expect status 204).
    case http(uri: String, response: String)
    /// ICMP echo requests: `count` to each of `hosts`; `reliability` hosts must answer.
    case icmp(hosts: [String], count: Int, reliability: Int)
}

/// One probe to make: on which interface, how, and how long it may take.
package struct ProbeRequest: Hashable, Sendable {
    /// The interface the probe's sockets are bound to (`SO_BINDTODEVICE`), as netpath writes names (escaped bytes).
    package var interface: String
    /// The interface's kernel index when the probe was asked for.
    package var index: Int32
    /// How to probe.
    package var method: ProbeMethod
    /// How long the whole probe may take before its verdict is `none`.
    package var timeout: Duration

    /// A request with these values.
    package init(interface: String, index: Int32, method: ProbeMethod, timeout: Duration) {
        self.interface = interface
        self.index = index
        self.method = method
        self.timeout = timeout
    }
}

/// What one probe found, with its evidence, before hysteresis (`up`/`down`) is applied.
package struct ProbeResult: Hashable, Sendable {
    /// The interface probed.
    package var interface: String
    /// The verdict of this one probe; never ``Connectivity/unknown`` unless the helper failed.
    package var connectivity: Connectivity
    /// The portal's URL (a redirect's target, or the URL that answered with a page), for `portal`.
    package var portalURL: String?
    /// The measured round-trip time, when anything answered.
    package var roundTrip: Duration?
    /// The fraction of probes that got no answer (0...1), for `icmp`; 0 or 1 for `http`.
    package var loss: Double?
    /// Why: a short, single-line, escaped text (`HTTP 302 to http://portal/login`,
    /// `connect: timed out after 5 s`, `2 of 3 hosts answered`) for `explain` and logs.
    package var evidence: String

    /// A result with these values.
    package init(
        interface: String,
        connectivity: Connectivity,
        portalURL: String? = nil,
        roundTrip: Duration? = nil,
        loss: Double? = nil,
        evidence: String
    ) {
        self.interface = interface
        self.connectivity = connectivity
        self.portalURL = portalURL
        self.roundTrip = roundTrip
        self.loss = loss
        self.evidence = evidence
    }
}

/// Makes connectivity probes: the seam between the agent, which decides when to probe, and the
/// sandboxed helper process that does it. Tests substitute a scripted fake.
package protocol ConnectivityProbing: Sendable {
    /// Probes once and returns what it found. Never throws: a helper that died or did not answer
    /// gives a result with ``Connectivity/unknown`` and the reason as evidence. Returns within
    /// the request's timeout plus a small grace.
    func probe(_ request: ProbeRequest) async -> ProbeResult
}
