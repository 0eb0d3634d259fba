// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// The rule that turns one HTTP answer into a verdict (docs/probe-helper.md), apart from the
/// network so that it can be tested on its own. `netpath-probe` applies it to what libcurl read.
package enum HTTPVerdict {
    /// What came back, as far as the helper read it.
    package struct Answer: Sendable {
        /// The status code.
        package var status: Int
        /// The Content-Type header's value, if any.
        package var contentType: [UInt8]?
        /// The redirect's target, if the answer had a Location header.
        package var location: [UInt8]?
        /// The body's first bytes: at most what the rule needs (``bodyLimit(expected:)``).
        package var body: [UInt8]
        /// Whether the body went on past `body` (the helper stopped reading).
        package var truncated: Bool

        package init(
            status: Int,
            contentType: [UInt8]? = nil,
            location: [UInt8]? = nil,
            body: [UInt8] = [],
            truncated: Bool = false
        ) {
            self.status = status
            self.contentType = contentType
            self.location = location
            self.body = body
            self.truncated = truncated
        }
    }

    /// How much of a body the helper reads: the expected body and a little more, enough to
    /// tell a page from it.
    package static func bodyLimit(expected: [UInt8]) -> Int { expected.count + 512 }

    /// The verdict, portal URL and evidence for `answer` to a request for `url` that expected
    /// `expected` (empty: status 204).
    ///
    /// - the expected answer (204 with no body; or 200 whose body is `expected`, ignoring
    ///   white space at both ends) → `full`;
    /// - a 3xx with a Location → `portal` at that URL; 511 (Network Authentication Required)
    ///   → `portal` at `url`;
    /// - any other 2xx that is a page (Content-Type text/html or application/xhtml+xml, or a body
    ///   that starts with `<`) → `portal` at `url`;
    /// - a status code outside 100–599 (libcurl passes any three digits) → `limited`;
    /// - everything else (a 2xx that is not a page, a 3xx without Location, 1xx, 4xx, 5xx) → `limited`.
    package static func classify(_ answer: Answer, url: [UInt8], expected: [UInt8]) -> (
        Connectivity, portalURL: [UInt8]?, evidence: String
    ) {
        let status = answer.status
        guard (100...599).contains(status) else {
            return (.limited, nil, "HTTP \(status), which is not a status code (100–599)")
        }
        if expected.isEmpty {
            if status == 204 && answer.body.isEmpty { return (.full, nil, "HTTP 204 as expected") }
        } else if status == 200 && !answer.truncated && trimmed(answer.body) == trimmed(expected) {
            return (.full, nil, "HTTP 200 with the expected body")
        }
        if (300...399).contains(status) {
            if let location = answer.location, !location.isEmpty {
                return (
                    .portal, location, "HTTP \(status) to \(InterfaceName.string(fromKernel: location.prefix(200)))"
                )
            }
            return (.limited, nil, "HTTP \(status) without a Location")
        }
        if status == 511 { return (.portal, url, "HTTP 511 Network Authentication Required") }
        if (200...299).contains(status) {
            if isPage(answer) { return (.portal, url, "HTTP \(status) with a page instead of the expected answer") }
            return (.limited, nil, "HTTP \(status) with an unexpected body that is not a page")
        }
        return (.limited, nil, "HTTP \(status)")
    }

    /// Whether the answer is an HTML page.
    package static func isPage(_ answer: Answer) -> Bool {
        if let type = answer.contentType {
            let lower = String(decoding: type, as: UTF8.self).lowercased().drop { $0 == " " }
            if lower.hasPrefix("text/html") || lower.hasPrefix("application/xhtml+xml") { return true }
        }
        return trimmed(answer.body).first == UInt8(ascii: "<")
    }

    private static func trimmed(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        let white: Set<UInt8> = [0x20, 0x09, 0x0a, 0x0d]
        var slice = bytes[...]
        while let first = slice.first, white.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, white.contains(last) { slice = slice.dropLast() }
        return slice
    }
}
