// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import FuzzSupport
import NetPathControl
import NetPathCore

/// Fuzzes what a client decodes of the agent's lines: the reply (``ControlReply/init(line:)``)
/// and, after `monitor`, the events (`Event`, as `netpathctl monitor` and the library's
/// `AgentPathSource` decode them).
///
/// - A reply that decodes can be encoded (`netpathctl status --json` prints what it decoded),
///   and its encoding is stable: decoded and encoded again, it is the same bytes.
/// - An event that decodes is written by ``EventJSON`` with the same bytes as Foundation's
///   encoder (EventJSON's promise), and those decode to the same event (its time to the
///   microsecond, where a Date holds one: `Date.isSameMicrosecond(as:)`).
@main
enum ControlReplyHarness {
    static func main() { Fuzzer.run(check) }

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let reply = try? ControlReply(line: bytes) { check(reply) }
        if let event = try? JSONDecoder().decode(Event.self, from: Data(bytes)) { check(event) }
    }

    static func check(_ reply: ControlReply) {
        guard let line = try? JSONCoding.lineBytes(reply) else {
            return invariant(false, "a decoded reply cannot be encoded")
        }
        guard let again = try? ControlReply(line: line) else {
            return invariant(false, "an encoded reply does not decode: \(String(decoding: line, as: UTF8.self))")
        }
        let second = try? JSONCoding.lineBytes(again)
        invariant(
            second == line,
            "decoded and encoded again, a reply changed: \(String(decoding: line, as: UTF8.self))"
        )
    }

    static func check(_ event: Event) {
        guard let written = try? EventJSON.lineBytes(event) else {
            return invariant(false, "a decoded event cannot be written: \(event)")
        }
        let foundation = try? JSONCoding.lineEncoder().encode(event)
        invariant(
            foundation.map(Array.init) == written,
            "EventJSON and Foundation differ:\n\(String(decoding: written, as: UTF8.self))\n"
                + String(decoding: foundation ?? Data(), as: UTF8.self)
        )
        guard var again = try? JSONDecoder().decode(Event.self, from: Data(written)) else {
            return invariant(false, "a written event does not decode: \(String(decoding: written, as: UTF8.self))")
        }
        invariant(again.time.isSameMicrosecond(as: event.time), "written and decoded again, an event's time moved")
        again.time = event.time
        invariant(again == event, "written and decoded again, an event differs: \(event)")
    }
}
