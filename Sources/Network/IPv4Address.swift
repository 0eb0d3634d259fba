// SPDX-License-Identifier: Apache-2.0

#if os(Linux)
    public import Foundation
    import Glibc

    /// An IPv4 address: Apple's `IPv4Address`, for Linux.
    ///
    /// ```swift
    /// let gateway = IPv4Address("192.0.2.1")!
    /// print(gateway.rawValue.count, gateway.isLoopback)   // 4 false
    /// ```
    public struct IPv4Address: Hashable, Sendable, CustomDebugStringConvertible {
        /// The address in network byte order: four bytes.
        ///
        /// ```swift
        /// let bytes = [UInt8](address.rawValue)
        /// ```
        public let rawValue: Data
        /// The interface the address is scoped to, if any.
        ///
        /// ```swift
        /// print(address.interface?.name ?? "-")
        /// ```
        public let interface: NWInterface?

        /// Parses dotted-quad text; `nil` for anything else.
        ///
        /// ```swift
        /// let address = IPv4Address("198.51.100.7")
        /// ```
        public init?(_ string: String) {
            var address = in_addr()
            guard inet_pton(AF_INET, string, &address) == 1 else { return nil }
            rawValue = withUnsafeBytes(of: &address) { Data($0) }
            interface = nil
        }

        /// Four bytes in network order; `nil` for any other count.
        ///
        /// ```swift
        /// let address = IPv4Address(Data([192, 0, 2, 1]))
        /// ```
        public init?(_ rawValue: Data, _ interface: NWInterface? = nil) {
            guard rawValue.count == 4 else { return nil }
            self.rawValue = rawValue
            self.interface = interface
        }

        /// 0.0.0.0.
        public static let any = IPv4Address(Data([0, 0, 0, 0]))!
        /// 255.255.255.255.
        public static let broadcast = IPv4Address(Data([255, 255, 255, 255]))!
        /// 127.0.0.1.
        public static let loopback = IPv4Address(Data([127, 0, 0, 1]))!

        /// Whether the address is in 127.0.0.0/8.
        ///
        /// ```swift
        /// print(IPv4Address.loopback.isLoopback)   // true
        /// ```
        public var isLoopback: Bool { rawValue.first == 127 }

        /// Whether the address is in 169.254.0.0/16.
        ///
        /// ```swift
        /// print(IPv4Address("169.254.3.4")!.isLinkLocal)   // true
        /// ```
        public var isLinkLocal: Bool { rawValue.starts(with: [169, 254]) }

        /// Whether the address is in 224.0.0.0/4.
        ///
        /// ```swift
        /// print(IPv4Address("224.0.0.251")!.isMulticast)   // true
        /// ```
        public var isMulticast: Bool { (rawValue.first ?? 0) & 0xF0 == 0xE0 }

        /// Dotted-quad text.
        ///
        /// ```swift
        /// print(IPv4Address.loopback)   // 127.0.0.1
        /// ```
        public var debugDescription: String { rawValue.map(String.init).joined(separator: ".") }
    }

    /// An IPv6 address: Apple's `IPv6Address`, for Linux.
    ///
    /// ```swift
    /// let gateway = IPv6Address("fe80::1")!
    /// print(gateway.isLinkLocal)   // true
    /// ```
    public struct IPv6Address: Hashable, Sendable, CustomDebugStringConvertible {
        /// The address in network byte order: sixteen bytes.
        ///
        /// ```swift
        /// let bytes = [UInt8](address.rawValue)
        /// ```
        public let rawValue: Data
        /// The interface the address is scoped to, if any.
        ///
        /// ```swift
        /// print(address.interface?.name ?? "-")
        /// ```
        public let interface: NWInterface?

        /// Parses IPv6 text (a `%zone` suffix is accepted and dropped: Linux names the zone by
        /// interface, which this value does not look up); `nil` for anything else.
        ///
        /// ```swift
        /// let address = IPv6Address("2001:db8::7")
        /// ```
        public init?(_ string: String) {
            let text = string.split(separator: "%", maxSplits: 1).first.map(String.init) ?? string
            var address = in6_addr()
            guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            rawValue = withUnsafeBytes(of: &address) { Data($0) }
            interface = nil
        }

        /// Sixteen bytes in network order; `nil` for any other count.
        ///
        /// ```swift
        /// let address = IPv6Address(Data(repeating: 0, count: 16))
        /// ```
        public init?(_ rawValue: Data, _ interface: NWInterface? = nil) {
            guard rawValue.count == 16 else { return nil }
            self.rawValue = rawValue
            self.interface = interface
        }

        /// `::`.
        public static let any = IPv6Address(Data(repeating: 0, count: 16))!
        /// `::1`.
        public static let loopback = IPv6Address(Data(repeating: 0, count: 15) + [1])!

        /// Whether the address is `::1`.
        ///
        /// ```swift
        /// print(IPv6Address.loopback.isLoopback)   // true
        /// ```
        public var isLoopback: Bool { rawValue == Self.loopback.rawValue }

        /// Whether the address is in fe80::/10.
        ///
        /// ```swift
        /// print(IPv6Address("fe80::1")!.isLinkLocal)   // true
        /// ```
        public var isLinkLocal: Bool { rawValue.first == 0xFE && (rawValue.dropFirst().first ?? 0) & 0xC0 == 0x80 }

        /// Whether the address is in ff00::/8.
        ///
        /// ```swift
        /// print(IPv6Address("ff02::1")!.isMulticast)   // true
        /// ```
        public var isMulticast: Bool { rawValue.first == 0xFF }

        /// The usual compressed text (`2001:db8::7`).
        ///
        /// ```swift
        /// print(IPv6Address("2001:0db8:0:0:0:0:0:7")!)   // 2001:db8::7
        /// ```
        public var debugDescription: String {
            var address = in6_addr()
            _ = withUnsafeMutableBytes(of: &address) { rawValue.copyBytes(to: $0) }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
#endif
