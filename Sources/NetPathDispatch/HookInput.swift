// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Synchronization

/// What a hook reads on stdin: fixed bytes, or an event's JSON line.
///
/// An event's line is encoded when it is first asked for, and the runner asks only once the hook
/// has been spawned: the hook cannot read stdin before it has been exec'd, which takes longer than
/// the encoding, so the encoding need not delay the spawn. (With Foundation's `JSONEncoder` it was
/// a large part of the spawn's preparation; `EventJSON` is far cheaper, but after the spawn is
/// still the cheaper place: BENCHMARKS.md, "The events' JSON".) The line is then kept for the
/// event's other hooks.
package struct HookInput: Hashable, Sendable {
    private enum Source: Hashable, Sendable {
        case bytes([UInt8])
        case event(EventLine)
    }

    private let source: Source

    /// Exactly `bytes` (another dialect's contract writes none).
    package static func bytes(_ bytes: [UInt8]) -> HookInput { HookInput(source: .bytes(bytes)) }

    /// `line`'s event as one line of JSON (``NetPathCore/JSONCoding/line(_:)``), then `"\n"`.
    package static func event(_ line: EventLine) -> HookInput { HookInput(source: .event(line)) }

    /// Whether the hook gets an empty stdin: end of file at once.
    package var isEmpty: Bool {
        if case .bytes(let bytes) = source { return bytes.isEmpty }
        return false
    }

    /// The bytes, encoding the event's line if no hook of its event asked for it before.
    ///
    /// - Throws: If the event cannot be encoded as JSON (a non-finite number).
    package func bytes() throws -> [UInt8] {
        switch source {
        case .bytes(let bytes): bytes
        case .event(let line): try line.bytes()
        }
    }
}

/// One event's JSON line for its hooks' stdin, encoded at most once, when first asked for.
package final class EventLine: Hashable, Sendable {
    /// The event encoded.
    package let event: Event
    /// The line, or why it cannot be encoded: either is found once per event.
    private let encoded = Mutex<Result<[UInt8], any Error>?>(nil)

    package init(_ event: Event) {
        self.event = event
    }

    /// The event's line and its `"\n"`.
    ///
    /// - Throws: If the event cannot be encoded as JSON.
    package func bytes() throws -> [UInt8] {
        if let known = encoded.withLock({ $0 }) { return try known.get() }
        // Encoded outside the lock: two hooks of one event never run at once (they run one
        // after another), so at worst a racing caller encodes the same line twice.
        let result = Result { try JSONCoding.lineBytes(event) + [UInt8(ascii: "\n")] }
        encoded.withLock { $0 = result }
        return try result.get()
    }

    package static func == (lhs: EventLine, rhs: EventLine) -> Bool { lhs.event == rhs.event }
    package func hash(into hasher: inout Hasher) { hasher.combine(event) }
}
