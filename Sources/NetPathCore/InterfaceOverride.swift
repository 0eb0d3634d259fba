// SPDX-License-Identifier: Apache-2.0

/// A configuration override for interfaces whose name matches a glob (`[[interface]]` in config).
///
/// Every matching override applies, in order; a later one wins for each field it sets.
public struct InterfaceOverride: Hashable, Sendable {
    /// The name pattern.
    public var match: Glob
    /// Forces the interface type.
    public var type: InterfaceType?
    /// Forces the metered flag.
    public var metered: Bool?
    /// Marks the interface constrained (low-data mode).
    public var constrained: Bool?

    /// An override for names matching `match`; a `nil` field leaves that value as classified.
    public init(match: Glob, type: InterfaceType? = nil, metered: Bool? = nil, constrained: Bool? = nil) {
        self.match = match
        self.type = type
        self.metered = metered
        self.constrained = constrained
    }
}
