// SPDX-License-Identifier: Apache-2.0
// String literals for addresses make tests and examples read like `ip` output. A malformed
// literal is a programming error, like a malformed `StaticString` format.

extension IPAddress: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        guard let address = IPAddress(value) else { preconditionFailure("invalid IP address literal \"\(value)\"") }
        self = address
    }
}

extension InterfaceAddress: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        guard let address = InterfaceAddress(cidr: value) else {
            preconditionFailure("invalid address literal \"\(value)\" (expected ADDRESS/PREFIX)")
        }
        self = address
    }
}
