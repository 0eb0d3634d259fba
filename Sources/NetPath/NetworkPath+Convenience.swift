// SPDX-License-Identifier: Apache-2.0

import NetPathCore

extension NetworkPath {
    /// A satisfied IPv4 path through `interfaces` (the first is primary), with DNS: the common
    /// case in one line, for tests and examples.
    ///
    /// ```swift
    /// let path = NetworkPath.satisfied(via: .wired("eth0"), .wifi("wlan0"))
    /// ```
    public static func satisfied(via interfaces: PathInterface..., policy: String = PathPolicy.default.name)
        -> NetworkPath
    {
        NetworkPath(
            policy: policy,
            status: .satisfied,
            primaryIPv4: interfaces.first,
            availableInterfaces: interfaces,
            supportsIPv4: true,
            supportsDNS: true
        )
    }

    /// An unsatisfied path and why.
    ///
    /// ```swift
    /// let offline = NetworkPath.unsatisfied(.noInterface)
    /// ```
    public static func unsatisfied(_ reason: UnsatisfiedReason = .noInterface, policy: String = PathPolicy.default.name)
        -> NetworkPath
    {
        NetworkPath(policy: policy, status: .unsatisfied, unsatisfiedReason: reason)
    }
}

extension NetworkPath.PathInterface {
    /// A wired interface, e.g. `.wired("eth0")`.
    ///
    /// ```swift
    /// let eth0 = NetworkPath.PathInterface.wired("eth0", index: 2)
    /// ```
    public static func wired(_ name: String = "eth0", index: Int32 = 2, metered: Bool = false) -> Self {
        Self(name: name, index: index, type: .wired, isMetered: metered)
    }

    /// A Wi-Fi interface, e.g. `.wifi("wlan0")`.
    ///
    /// ```swift
    /// let wlan0 = NetworkPath.PathInterface.wifi()
    /// ```
    public static func wifi(_ name: String = "wlan0", index: Int32 = 3, metered: Bool = false) -> Self {
        Self(name: name, index: index, type: .wifi, isMetered: metered)
    }

    /// A cellular interface, metered unless told otherwise, e.g. `.cellular("wwan0")`.
    ///
    /// ```swift
    /// let modem = NetworkPath.PathInterface.cellular("wwan0")
    /// ```
    public static func cellular(_ name: String = "wwan0", index: Int32 = 4, metered: Bool = true) -> Self {
        Self(name: name, index: index, type: .cellular, isMetered: metered)
    }
}
