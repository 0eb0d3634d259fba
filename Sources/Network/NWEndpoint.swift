// SPDX-License-Identifier: Apache-2.0

#if os(Linux)
    public import Foundation

    /// A network endpoint: Apple's `NWEndpoint`, as far as a path monitor uses it (a path's
    /// ``NWPath/gateways``).
    ///
    /// Linux has no `NWConnection`: nothing here connects. ``Host`` and ``Port`` parse and print
    /// like Apple's, so code that reads a path's gateways, or builds endpoints to keep beside them,
    /// compiles unchanged.
    ///
    /// ```swift
    /// for case .hostPort(let host, _) in path.gateways { print("gateway", host) }
    /// ```
    ///
    /// Apple's cases that exist on Linux: code written for Apple's framework switches over them, so
    /// this stays an enum and grows only with Apple's.
    public enum NWEndpoint: Hashable, Sendable, CustomDebugStringConvertible {
        /// A host and a port.
        case hostPort(host: NWEndpoint.Host, port: NWEndpoint.Port)
        /// A Bonjour service. Linux has no Bonjour resolver here: nothing produces one.
        case service(name: String, type: String, domain: String, interface: NWInterface?)
        /// A Unix domain socket.
        case unix(path: String)
        /// A URL.
        case url(URL)

        /// A host: a name or an address.
        ///
        /// ```swift
        /// let gateway: NWEndpoint.Host = "192.0.2.1"   // .ipv4(192.0.2.1)
        /// ```
        ///
        /// Apple's cases that exist on Linux: code written for Apple's framework switches over them, so
        /// this stays an enum and grows only with Apple's.
        public enum Host: Hashable, Sendable, CustomDebugStringConvertible, ExpressibleByStringLiteral {
            /// A host name, optionally scoped to an interface.
            case name(String, NWInterface?)
            /// An IPv4 address.
            case ipv4(IPv4Address)
            /// An IPv6 address.
            case ipv6(IPv6Address)

            /// An address when `string` is one, else a name.
            ///
            /// ```swift
            /// let host = NWEndpoint.Host("example.com")
            /// ```
            public init(_ string: String) {
                if let v4 = IPv4Address(string) {
                    self = .ipv4(v4)
                } else if let v6 = IPv6Address(string) {
                    self = .ipv6(v6)
                } else {
                    self = .name(string, nil)
                }
            }

            /// Same as ``init(_:)``.
            ///
            /// ```swift
            /// let host: NWEndpoint.Host = "fe80::1"
            /// ```
            public init(stringLiteral value: String) { self.init(value) }

            /// The interface the host is scoped to, if any.
            ///
            /// ```swift
            /// print(host.interface?.name ?? "any interface")
            /// ```
            public var interface: NWInterface? {
                switch self {
                case .name(_, let interface): interface
                case .ipv4(let address): address.interface
                case .ipv6(let address): address.interface
                }
            }

            /// The name or the address, as Apple prints it.
            ///
            /// ```swift
            /// print(host)   // 192.0.2.1
            /// ```
            public var debugDescription: String {
                switch self {
                case .name(let name, _): name
                case .ipv4(let address): address.debugDescription
                case .ipv6(let address): address.debugDescription
                }
            }
        }

        /// A port number.
        ///
        /// ```swift
        /// let port: NWEndpoint.Port = 443
        /// ```
        public struct Port: Hashable, Sendable, RawRepresentable, ExpressibleByIntegerLiteral,
            CustomDebugStringConvertible
        {
            /// The number.
            ///
            /// ```swift
            /// print(NWEndpoint.Port.https.rawValue)   // 443
            /// ```
            public let rawValue: UInt16

            /// A port with this number.
            ///
            /// ```swift
            /// let port = NWEndpoint.Port(rawValue: 8080)!
            /// ```
            public init?(rawValue: UInt16) { self.rawValue = rawValue }

            /// A port from a literal.
            ///
            /// ```swift
            /// let port: NWEndpoint.Port = 8080
            /// ```
            public init(integerLiteral value: UInt16) { rawValue = value }

            /// A port from its decimal number; `nil` for anything else.
            ///
            /// ```swift
            /// let port = NWEndpoint.Port("8080")
            /// ```
            public init?(_ string: String) {
                guard let value = UInt16(string) else { return nil }
                rawValue = value
            }

            /// Port 0: any port (what a path's gateways carry).
            public static let any: Port = 0
            /// Port 22.
            public static let ssh: Port = 22
            /// Port 25.
            public static let smtp: Port = 25
            /// Port 80.
            public static let http: Port = 80
            /// Port 110.
            public static let pop: Port = 110
            /// Port 143.
            public static let imap: Port = 143
            /// Port 443.
            public static let https: Port = 443
            /// Port 993.
            public static let imaps: Port = 993
            /// Port 1080.
            public static let socks: Port = 1080

            /// The number.
            ///
            /// ```swift
            /// print(NWEndpoint.Port.http)   // 80
            /// ```
            public var debugDescription: String { String(rawValue) }
        }

        /// The interface the endpoint is scoped to, if any.
        ///
        /// ```swift
        /// print(endpoint.interface?.name ?? "-")
        /// ```
        public var interface: NWInterface? {
            switch self {
            case .hostPort(let host, _): host.interface
            case .service(_, _, _, let interface): interface
            case .unix, .url: nil
            }
        }

        /// Host and port, as Apple prints endpoints: `192.0.2.1:443`, `[2001:db8::1]:443`.
        ///
        /// ```swift
        /// print(NWEndpoint.hostPort(host: "192.0.2.1", port: .https))   // 192.0.2.1:443
        /// ```
        public var debugDescription: String {
            switch self {
            case .hostPort(let host, let port):
                if case .ipv6 = host { return "[\(host)]:\(port)" }
                return "\(host):\(port)"
            case .service(let name, let type, let domain, _): return "\(name).\(type)\(domain)"
            case .unix(let path): return path
            case .url(let url): return url.absoluteString
            }
        }
    }
#endif
