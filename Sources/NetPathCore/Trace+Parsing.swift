// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials

extension Trace {
    /// A parsed trace: its complete records and, when the last line was cut short, where.
    package struct Contents: Hashable, Sendable {
        /// The records, in time order.
        package var records: [Record]
        /// The unfinished last line, if the trace ends in one; the records before it are all here.
        package var truncation: Truncation?

        /// Creates the contents of a trace.
        package init(records: [Record], truncation: Truncation? = nil) {
            self.records = records
            self.truncation = truncation
        }
    }

    /// Parses a whole trace from its bytes.
    ///
    /// The first malformed line ends parsing with an error that names its line (and column, for
    /// a byte that is not UTF-8). The one exception is a last line with no newline after it that
    /// does not parse: that is a recording cut short, so the records before it are returned
    /// with a ``Truncation`` rather than nothing at all.
    package static func parse(_ input: some Collection<UInt8>, file: String) -> Result<Contents, FormatError> {
        let bytes = Array(input)
        let decoder = JSONDecoder()
        var records: [Record] = []
        var sawHeader = false
        var lineNumber = 0
        var start = 0
        func failure(_ message: String, column: Int? = nil) -> Result<Contents, FormatError> {
            .failure(FormatError(file: file, line: lineNumber, column: column, message: message))
        }
        while start < bytes.count {
            // Lines are split on the byte, not on Characters: Swift reads "\r\n" as one Character,
            // which made a CRLF trace one long line.
            let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
            let end = newline ?? bytes.count
            let raw = bytes[start..<end]
            let isLastAndUnterminated = newline == nil
            start = end + 1
            lineNumber += 1
            func truncated(_ reason: String) -> Result<Contents, FormatError> {
                let truncation = Truncation(
                    file: file,
                    line: lineNumber,
                    completeRecords: records.count,
                    reason: reason
                )
                return .success(Contents(records: records, truncation: truncation))
            }

            if let invalid = InvalidUTF8.first(in: raw) {
                // A recording cut inside a multi-byte character ends in the start of one.
                if isLastAndUnterminated && sawHeader && isCutOffSequence(raw[(raw.startIndex + invalid.offset)...]) {
                    return truncated("incomplete JSON")
                }
                var atFile = invalid
                atFile.offset += raw.startIndex
                return failure(atFile.description, column: invalid.column)
            }
            let line = raw.trimmingASCIIWhitespace
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            if !sawHeader {
                guard let object = try? decoder.decode([String: Int].self, from: Data(line)),
                    let version = object["netpath_trace"]
                else {
                    let found = String(decoding: line, as: UTF8.self).prefix(60)
                    return failure("expected the header \(header), found \(found)")
                }
                guard version == Self.version else {
                    return failure("trace version \(version) is not supported (expected \(Self.version))")
                }
                sawHeader = true
                continue
            }
            do {
                let record = try decoder.decode(Record.self, from: Data(line))
                if let last = records.last, record.time < last.time {
                    return failure("time \(RFC3339.format(record.time)) is earlier than the previous record's")
                }
                records.append(record)
            } catch let error as DecodingError {
                // Only a syntax error (no coding path) can be a record cut short: a complete line
                // with a wrong value is a mistake wherever it is.
                if isLastAndUnterminated, case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                    return truncated("incomplete JSON")
                }
                return failure(describe(error))
            } catch {
                return failure("\(error)")
            }
        }
        guard sawHeader else {
            lineNumber = max(1, lineNumber)
            return failure("empty trace: expected the header \(header)")
        }
        return .success(Contents(records: records))
    }

    /// Whether `tail` is the beginning of a multi-byte UTF-8 sequence and nothing else: what is
    /// left of a character when the end of the file cuts it off.
    static func isCutOffSequence(_ tail: ArraySlice<UInt8>) -> Bool {
        guard let lead = tail.first else { return false }
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return false
        }
        return tail.count < length && tail.dropFirst().allSatisfy { $0 & 0xC0 == 0x80 }
    }

    /// A decoding error in words, with the JSON path where it happened.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            let text = keys.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
            return text.isEmpty ? "the record" : String(text.drop { $0 == "." })
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(type)"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(type), found null"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): missing"
        case .dataCorrupted(let context):
            let detail = context.underlyingError.map { "\($0)" } ?? context.debugDescription
            return context.codingPath.isEmpty
                ? "not valid JSON: \(detail)" : "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}

extension ArraySlice<UInt8> {
    fileprivate var trimmingASCIIWhitespace: ArraySlice<UInt8> {
        let isBlank: (UInt8) -> Bool = {
            $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r")
        }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return []
        }
        return self[first...last]
    }
}
