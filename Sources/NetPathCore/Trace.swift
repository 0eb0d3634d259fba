import FoundationEssentials

/// A recording of system states over time: what `netpathd --record` and
/// `netpathctl monitor --record` write and `netpathctl simulate` replays.
///
/// The file is JSON lines: a header line `{"netpath_trace":1}`, then one ``Trace/Record`` per
/// line, in time order. Blank lines and lines starting with `#` are ignored, so traces can
/// carry comments.
public enum Trace {
    /// The format version this code reads and writes.
    public static let version = 1

    /// One state and when it was observed.
    public struct Record: Hashable, Sendable, Codable {
        public var time: Date
        public var state: SystemState

        public init(time: Date, state: SystemState) {
            self.time = time
            self.state = state
        }

        enum CodingKeys: String, CodingKey { case time, state }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let text = try c.decode(String.self, forKey: .time)
            guard let time = RFC3339.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .time,
                    in: c,
                    debugDescription: "not an RFC 3339 time: \"\(text)\""
                )
            }
            self.time = time
            state = try c.decode(SystemState.self, forKey: .state)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(RFC3339.format(time), forKey: .time)
            try c.encode(state, forKey: .state)
        }
    }

    /// A malformed trace: the file, the 1-based line, and what was wrong there.
    public struct FormatError: Error, Hashable, Sendable, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var message: String

        public var description: String { "\(file):\(line): error: \(message)" }
    }

    /// The header line.
    public static var header: String { "{\"netpath_trace\":\(version)}" }

    /// One record as a line (without the newline).
    public static func line(_ record: Record) throws -> String {
        try JSONCoding.line(record)
    }

    /// Parses a whole trace; the first malformed line ends parsing with a line-numbered error.
    public static func parse(_ text: String, file: String) -> Result<[Record], FormatError> {
        let decoder = JSONDecoder()
        var records: [Record] = []
        var sawHeader = false
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.trimmingASCIIWhitespace
            if line.isEmpty || line.hasPrefix("#") { continue }
            if !sawHeader {
                guard let object = try? decoder.decode([String: Int].self, from: Data(line.utf8)),
                    let version = object["netpath_trace"]
                else {
                    return .failure(
                        FormatError(
                            file: file,
                            line: lineNumber,
                            message: "expected the header {\"netpath_trace\":\(Self.version)}, found \(line.prefix(60))"
                        )
                    )
                }
                guard version == Self.version else {
                    return .failure(
                        FormatError(
                            file: file,
                            line: lineNumber,
                            message: "trace version \(version) is not supported (expected \(Self.version))"
                        )
                    )
                }
                sawHeader = true
                continue
            }
            do {
                let record = try decoder.decode(Record.self, from: Data(line.utf8))
                if let last = records.last, record.time < last.time {
                    return .failure(
                        FormatError(
                            file: file,
                            line: lineNumber,
                            message: "time \(RFC3339.format(record.time)) is earlier than the previous record's"
                        )
                    )
                }
                records.append(record)
            } catch let error as DecodingError {
                return .failure(FormatError(file: file, line: lineNumber, message: Self.describe(error)))
            } catch {
                return .failure(FormatError(file: file, line: lineNumber, message: "\(error)"))
            }
        }
        guard sawHeader else {
            return .failure(
                FormatError(
                    file: file,
                    line: max(1, lineNumber),
                    message: "empty trace: expected the header {\"netpath_trace\":\(version)}"
                )
            )
        }
        return .success(records)
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

extension Substring {
    fileprivate var trimmingASCIIWhitespace: Substring {
        var s = self
        while let first = s.first, first == " " || first == "\t" || first == "\r" { s = s.dropFirst() }
        while let last = s.last, last == " " || last == "\t" || last == "\r" { s = s.dropLast() }
        return s
    }
}
