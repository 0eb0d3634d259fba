// SPDX-License-Identifier: Apache-2.0

/// A privilege a plugin asks for in ``Plugin/capabilities``; the agent grants it through
/// ``PluginContext``.
///
/// A plugin without a capability cannot reach the matching API: it gets
/// ``PluginError/Code/capabilityNotGranted``, so a logging plugin can never rewrite routes.
public struct PluginCapability: Hashable, Sendable, CustomStringConvertible {
    private enum Value: String, Hashable, Sendable {
        case routeEditing = "route-editing"
    }

    private let value: Value
    private init(_ value: Value) { self.value = value }

    /// Read and change default routes through ``PluginContext/routeEditor()`` (needs root or
    /// `CAP_NET_ADMIN` in the agent).
    public static let routeEditing = PluginCapability(.routeEditing)

    public var description: String { value.rawValue }
}
