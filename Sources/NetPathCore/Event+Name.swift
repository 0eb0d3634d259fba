// SPDX-License-Identifier: Apache-2.0
extension Event {
    /// The event names (docs/events.md).
    ///
    /// A struct with static members rather than an enum, so that a new name in a later version
    /// is not a breaking change: a `switch` over it needs a `default:`. Its raw value is the
    /// text JSON, hook variables and configuration files carry.
    public struct Name: RawRepresentable, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
        /// Interface: it appeared.
        public static let added = Self(.added)
        /// Interface: it went away.
        public static let removed = Self(.removed)
        /// Interface: it was set administratively up.
        public static let up = Self(.up)
        /// Interface: it was set administratively down.
        public static let down = Self(.down)
        /// Interface: the link detected a carrier (cable plugged, Wi-Fi associated).
        public static let carrierUp = Self(.carrierUp)
        /// Interface: the link lost its carrier.
        public static let carrierDown = Self(.carrierDown)
        /// Interface: an address was configured; see ``Event/address``.
        public static let addressAdded = Self(.addressAdded)
        /// Interface: an address was removed; see ``Event/address``.
        public static let addressRemoved = Self(.addressRemoved)
        /// Interface: type, metered, MTU, name or default routes changed. Path: a property changed while satisfied.
        public static let changed = Self(.changed)
        /// Interface: the probed connectivity changed (docs/connectivity.md). Path: the path's
        /// connectivity (its primary's) changed. ``Event/connectivity`` and
        /// ``Event/previousConnectivity`` say from what to what.
        public static let connectivityChanged = Self(.connectivityChanged)
        /// Path: the policy's path became satisfied.
        public static let satisfied = Self(.satisfied)
        /// Path: the policy's path stopped being satisfied.
        public static let unsatisfied = Self(.unsatisfied)

        /// Every name this version knows, in declaration order.
        public static let allCases: [Self] = Value.allCases.map(Self.init)

        /// The text form (`added`).
        public var rawValue: String { value.rawValue }

        /// The name whose text form is `rawValue`; `nil` for one this version does not know.
        public init?(rawValue: String) {
            guard let value = Value(rawValue: rawValue) else { return nil }
            self.value = value
        }

        /// The text form.
        public var description: String { rawValue }

        /// The scopes in which this name occurs.
        public var scopes: [Scope] {
            switch self {
            case .changed, .connectivityChanged: return [.interface, .path]
            case .satisfied, .unsatisfied: return [.path]
            default: return [.interface]
            }
        }

        private enum Value: String, CaseIterable {
            case added
            case removed
            case up
            case down
            case carrierUp = "carrier-up"
            case carrierDown = "carrier-down"
            case addressAdded = "address-added"
            case addressRemoved = "address-removed"
            case changed
            case connectivityChanged = "connectivity-changed"
            case satisfied
            case unsatisfied
        }

        private let value: Value

        private init(_ value: Value) { self.value = value }
    }

    /// Whether an event concerns one interface or one policy's path.
    ///
    /// A struct with static members rather than an enum, so that a new scope in a later version
    /// is not a breaking change: a `switch` over it needs a `default:`. Its raw value is the
    /// text JSON, hook variables and configuration files carry.
    public struct Scope: RawRepresentable, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
        /// An interface event (``Event/interface`` names it).
        public static let interface = Self(.interface)
        /// A policy's path event (``Event/policy`` names it).
        public static let path = Self(.path)

        /// Every scope this version knows, in declaration order.
        public static let allCases: [Self] = Value.allCases.map(Self.init)

        /// The text form (`interface`).
        public var rawValue: String { value.rawValue }

        /// The scope whose text form is `rawValue`; `nil` for one this version does not know.
        public init?(rawValue: String) {
            guard let value = Value(rawValue: rawValue) else { return nil }
            self.value = value
        }

        /// The Swift name (`interface`), as the enum this was printed.
        public var description: String { String(describing: value) }

        private enum Value: String, CaseIterable {
            case interface
            case path
        }

        private let value: Value

        private init(_ value: Value) { self.value = value }
    }
}
