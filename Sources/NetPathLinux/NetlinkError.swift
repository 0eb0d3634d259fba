// SPDX-License-Identifier: Apache-2.0

import CNetlink
import SystemPackage

/// A failure talking to the kernel over netlink, keeping the raw libnl or errno code.
public struct NetlinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case socket, connect, subscribe, dump, receive, namespace, thread
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Allocating or configuring a socket failed.
        public static let socket = Code(.socket)
        /// Connecting to `NETLINK_ROUTE` failed.
        public static let connect = Code(.connect)
        /// Joining a multicast group failed.
        public static let subscribe = Code(.subscribe)
        /// A dump request failed.
        public static let dump = Code(.dump)
        /// Receiving notifications failed.
        public static let receive = Code(.receive)
        /// Entering the requested network namespace failed.
        public static let namespace = Code(.namespace)
        /// Starting the engine thread failed.
        public static let thread = Code(.thread)

        public var description: String { "\(value)" }
    }

    /// Which step failed.
    public var code: Code
    /// The libnl error (`NLE_*`, positive) or errno, as the failing call reported it.
    public var rawValue: Int32
    /// Context: the operation and its argument.
    public var context: String

    /// An error for step `code`, with the raw error and what was attempted.
    public init(_ code: Code, rawValue: Int32, context: String) {
        self.code = code
        self.rawValue = rawValue
        self.context = context
    }

    /// Wraps a negative libnl return value.
    static func libnl(_ code: Code, _ result: Int32, _ context: String) -> NetlinkError {
        NetlinkError(code, rawValue: -result, context: context)
    }

    public var description: String {
        let reason: String
        if code == .namespace || code == .thread || code == .socket {
            reason = Errno(rawValue: rawValue).description
        } else {
            reason = String(cString: nl_geterror(rawValue))
        }
        return "netlink \(code) failed (\(context)): \(reason) [\(rawValue)]"
    }
}
