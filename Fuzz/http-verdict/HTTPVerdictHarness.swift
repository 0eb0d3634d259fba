// SPDX-License-Identifier: Apache-2.0

import FuzzSupport
import NetPathCore
import NetPathProbe

/// Fuzzes ``HTTPVerdict/classify(_:url:expected:)``, the rule that turns what a network answered
/// into a verdict.
///
/// The input is cut into an answer: two bytes of status code (modulo 1000, as libcurl passes any
/// three digits), a byte of flags (bit 0: the body was cut short, bit 1: a Content-Type, bit 2: a
/// Location), then NUL-separated Content-Type, Location, body, requested URL and expected body.
///
/// - `full` only for the expected answer: 204 when nothing is expected, 200 otherwise.
/// - A `portal` names a non-empty portal URL (the Location, or the URL asked for); nothing else
///   names one.
/// - A status outside 100–599 is never `full` or `portal`.
/// - The evidence is one line of bounded length (it goes into logs and `netpathctl probe`).
@main
enum HTTPVerdictHarness {
    static func main() { Fuzzer.run(check) }

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count >= 3 else { return }
        let status = Int(UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 1000
        let flags = bytes[2]
        var fields = bytes.dropFirst(3).split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
        while fields.count < 5 { fields.append([]) }
        let answer = HTTPVerdict.Answer(
            status: status,
            contentType: flags & 2 != 0 ? fields[0] : nil,
            location: flags & 4 != 0 ? fields[1] : nil,
            body: fields[2],
            truncated: flags & 1 != 0
        )
        let url = fields[3]
        let expected = fields[4]
        let (verdict, portalURL, evidence) = HTTPVerdict.classify(answer, url: url, expected: expected)

        if verdict == .full { invariant(status == (expected.isEmpty ? 204 : 200), "full from HTTP \(status)") }
        if verdict == .portal {
            invariant(portalURL == answer.location || portalURL == url, "a portal at an URL nobody named")
            // The agent never asks for an empty URL; an empty one can only come back as itself.
            invariant(!(portalURL ?? []).isEmpty || url.isEmpty, "a portal without its URL")
        } else {
            invariant(portalURL == nil, "a \(verdict) verdict with a portal URL")
        }
        if !(100...599).contains(status) { invariant(verdict == .limited, "\(verdict) from HTTP \(status)") }
        invariant(!evidence.isEmpty && !evidence.contains("\n"), "evidence of more than one line, or none: \(evidence)")
        invariant(evidence.utf8.count <= 1024, "evidence of \(evidence.utf8.count) bytes")
    }
}
