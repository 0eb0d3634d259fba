// SPDX-License-Identifier: Apache-2.0
extension Interface {
    /// Why an interface counts as metered or not.
    ///
    /// A struct with static members rather than an enum, so that a new reason in a later version
    /// is not a breaking change: a `switch` over it needs a `default:`. Its raw value is the
    /// text JSON, hook variables and configuration files carry.
    public struct MeteredReason: RawRepresentable, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
        /// An `[[interface]]` override in the configuration set it.
        public static let override = Self(.override)
        /// Cellular links are metered.
        public static let cellular = Self(.cellular)
        /// A USB phone-tether driver (rndis_host, cdc_ether, cdc_ncm, ipheth): guessed metered.
        public static let tether = Self(.tether)
        /// No evidence either way: not metered.
        public static let `default` = Self(.default)

        /// Every reason this version knows, in declaration order.
        public static let allCases: [Self] = Value.allCases.map(Self.init)

        /// The text form (`override`).
        public var rawValue: String { value.rawValue }

        /// The reason whose text form is `rawValue`; `nil` for one this version does not know.
        public init?(rawValue: String) {
            guard let value = Value(rawValue: rawValue) else { return nil }
            self.value = value
        }

        /// The Swift name (`override`), as the enum this was printed.
        public var description: String { String(describing: value) }

        private enum Value: String, CaseIterable {
            case override
            case cellular
            case tether
            case `default`
        }

        private let value: Value

        private init(_ value: Value) { self.value = value }
    }
}
