// SPDX-License-Identifier: Apache-2.0

/// A failure of the plugin machinery (not of a plugin's own work), with the plugin it concerns.
public struct PluginError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case capabilityNotGranted = "capability not granted"
            case capabilityUnavailable = "capability unavailable"
            case timedOut = "timed out"
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The plugin used a capability it did not declare in ``Plugin/capabilities``.
        public static let capabilityNotGranted = Code(.capabilityNotGranted)
        /// The plugin declared the capability, but the agent has none to give (e.g. no route
        /// editor because it runs without `CAP_NET_ADMIN`).
        public static let capabilityUnavailable = Code(.capabilityUnavailable)
        /// A lifecycle call (start, stop, reload) did not return within its timeout.
        public static let timedOut = Code(.timedOut)

        public var description: String { value.rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// The plugin's name.
    public var plugin: String
    /// What was attempted.
    public var context: String

    /// An error of plugin `plugin`, with its code and what was attempted.
    public init(_ code: Code, plugin: String, context: String) {
        self.code = code
        self.plugin = plugin
        self.context = context
    }

    public var description: String { "plugin \(plugin): \(code): \(context)" }
}
