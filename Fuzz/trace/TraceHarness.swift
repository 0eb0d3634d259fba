// SPDX-License-Identifier: Apache-2.0

import FuzzSupport
import NetPathCore

/// Fuzzes ``Trace/parse(_:file:)``, the reader of `netpathctl simulate --trace`.
///
/// - A malformed trace fails with a line (and column) inside the input.
/// - A trace cut short names its last line, and keeps every record before it.
/// - The records of a trace that parses are in time order, and written back as a trace (as
///   ``TraceWriter`` writes them) they parse to the same records, with nothing cut short (times to
///   the microsecond, where a Date holds one: `Date.isSameMicrosecond(as:)`).
@main
enum TraceHarness {
    static func main() { Fuzzer.run(check) }

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) {
        let positions = TextPositions(bytes)
        let contents: Trace.Contents
        switch Trace.parse(bytes, file: "fuzz.trace") {
        case .failure(let error):
            invariant(positions.contains(line: error.line, column: error.column), "error outside the input: \(error)")
            return
        case .success(let parsed):
            contents = parsed
        }
        if let truncation = contents.truncation {
            invariant(bytes.last != UInt8(ascii: "\n"), "a cut-short last line that ends in a newline")
            invariant(
                truncation.line == positions.lineLengths.count,
                "cut short at \(truncation.line), not the last line"
            )
            invariant(truncation.completeRecords == contents.records.count, "truncation miscounts the records")
        }
        invariant(zip(contents.records, contents.records.dropFirst()).allSatisfy { $0.time <= $1.time }, "out of order")

        var written = Trace.header + "\n"
        for record in contents.records {
            guard let line = try? Trace.line(record) else {
                invariant(false, "a parsed record cannot be written: \(record)")
                return
            }
            written += line + "\n"
        }
        switch Trace.parse(Array(written.utf8), file: "written.trace") {
        case .failure(let error):
            invariant(false, "written back, the trace does not parse (\(error)):\n\(written)")
        case .success(let reparsed):
            invariant(reparsed.truncation == nil, "written back, the trace is cut short:\n\(written)")
            invariant(reparsed.records.count == contents.records.count, "written back, records went missing")
            for (record, again) in zip(contents.records, reparsed.records) {
                invariant(again.time.isSameMicrosecond(as: record.time), "written back, a record's time moved")
                invariant(again.state == record.state, "written back, a record's state differs:\n\(written)")
            }
        }
    }
}
