// SPDX-License-Identifier: Apache-2.0

/// The `[connectivity]` table: how and when the agent probes each interface (docs/connectivity.md).
///
/// ```swift
/// let settings = ConnectivitySettings(method: .http(uri: "http://192.0.2.1/generate_204", response: ""), down: 3)
/// ```
package struct ConnectivitySettings: Hashable, Sendable {
    /// The default `uri`: a plain-HTTP endpoint that answers 204 with an empty body.
    package static let defaultURI = "http://connectivity-check.ubuntu.com/"
    /// The default `hosts` for `method = "icmp"`: two public resolvers of different operators.
    package static let defaultHosts = ["1.1.1.1", "9.9.9.9"]

    /// How each probe is made.
    package var method: ProbeMethod
    /// How often a `full` interface is probed again (`interval`); the longest back-off while not full.
    package var interval: Duration
    /// How long one probe may take before its verdict is `none` (`timeout`).
    package var timeout: Duration
    /// Which interfaces are probed, by name glob (`interfaces`); empty means every candidate.
    package var interfaces: [Glob]
    /// How many consecutive better results it takes to raise an interface's state (`up`).
    package var up: Int
    /// How many consecutive worse results it takes to lower an interface's state (`down`).
    package var down: Int
    /// A `full` answer slower than this counts as a failed check (`max_rtt`); `nil`: no limit.
    package var maxRoundTrip: Duration?
    /// A `full` answer with more loss than this (0...1) counts as a failed check (`max_loss`); `nil`: no limit.
    package var maxLoss: Double?

    /// Settings with these values; the defaults are the documented ones.
    package init(
        method: ProbeMethod = .http(uri: ConnectivitySettings.defaultURI, response: ""),
        interval: Duration = .seconds(300),
        timeout: Duration = .seconds(5),
        interfaces: [Glob] = [],
        up: Int = 1,
        down: Int = 1,
        maxRoundTrip: Duration? = nil,
        maxLoss: Double? = nil
    ) {
        self.method = method
        self.interval = interval
        self.timeout = timeout
        self.interfaces = interfaces
        self.up = max(1, up)
        self.down = max(1, down)
        self.maxRoundTrip = maxRoundTrip
        self.maxLoss = maxLoss
    }

    /// Whether `interface` is probed: not loopback, usable (connected, addressed, with a default
    /// route), and named by ``interfaces`` when that is not empty.
    package func probes(_ interface: Interface) -> Bool {
        guard interface.type != .loopback, interface.isUsable else { return false }
        return interfaces.isEmpty || interfaces.contains { $0.matches(interface.name) }
    }
}
