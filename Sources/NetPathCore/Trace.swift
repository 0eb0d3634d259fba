// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials

/// A recording of system states over time: what `netpathd --record` and
/// `netpathctl monitor --record` write and `netpathctl simulate` replays.
///
/// The file is JSON lines: a header line `{"netpath_trace":1}`, then one ``Trace/Record`` per
/// line, in time order. Blank lines and lines starting with `#` are ignored, so traces can
/// carry comments. Lines may end in CRLF (a trace edited on Windows); the CR is dropped.
package enum Trace {
    /// The format version this code reads and writes.
    package static let version = 1

    /// One state and when it was observed.
    package struct Record: Hashable, Sendable, Codable {
        /// When the state was observed.
        package var time: Date
        /// The state.
        package var state: SystemState

        /// Creates a record.
        package init(time: Date, state: SystemState) {
            self.time = time
            self.state = state
        }

        enum CodingKeys: String, CodingKey { case time, state }

        package init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            time = try c.decodeRFC3339(forKey: .time)
            state = try c.decode(SystemState.self, forKey: .state)
        }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(RFC3339.format(time), forKey: .time)
            try c.encode(state, forKey: .state)
        }
    }

    /// The header line.
    package static var header: String { "{\"netpath_trace\":\(version)}" }

    /// One record as a line (without the newline).
    package static func line(_ record: Record) throws -> String {
        try JSONCoding.line(record)
    }
}
