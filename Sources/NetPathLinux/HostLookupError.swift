// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore

/// Why a host name did not resolve: `getaddrinfo(3)`'s error, kept with its code.
///
/// ```swift
/// if case .failure(let error) = TargetResolver().lookup("vpn.example.org") { print(error) }
/// // cannot resolve "vpn.example.org": Temporary failure in name resolution
/// ```
package struct HostLookupError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name that was looked up.
    package var host: String
    /// The `EAI_*` code `getaddrinfo` returned (`EAI_AGAIN`, `EAI_NONAME`, …); 0 when it returned
    /// no address without an error.
    package var code: Int32
    /// What the C library says the code means (`gai_strerror(3)`).
    package var reason: String

    package init(host: String, code: Int32, reason: String) {
        self.host = host
        self.code = code
        self.reason = reason
    }

    /// The error `getaddrinfo` reported as `code` for `host`.
    package init(host: String, code: Int32) {
        let reason =
            code == 0 ? "no address" : (gai_strerror(code).map { String(cString: $0) } ?? "getaddrinfo error \(code)")
        self.init(host: host, code: code, reason: reason)
    }

    /// One line: the host name quoted, control characters escaped.
    package var description: String {
        "cannot resolve \"\(host.escapingControlCharacters)\": \(reason.escapingControlCharacters)"
    }
}
