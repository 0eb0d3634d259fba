// SPDX-License-Identifier: Apache-2.0

extension Trace {
    /// A malformed trace: the file, the 1-based line (and column, when one byte is to blame),
    /// and what was wrong there.
    package struct FormatError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The file, as the caller named it.
        package var file: String
        /// The 1-based line.
        package var line: Int
        /// The 1-based column, in Unicode scalars; `nil` when the whole line is at fault.
        package var column: Int?
        /// What was found and what was expected.
        package var message: String

        /// Creates an error.
        package init(file: String, line: Int, column: Int? = nil, message: String) {
            self.file = file
            self.line = line
            self.column = column
            self.message = message
        }

        /// `FILE:LINE: error: MESSAGE` or `FILE:LINE:COL: error: MESSAGE`, always one line: control
        /// characters from the file are escaped.
        package var description: String {
            let position = column.map { "\(line):\($0)" } ?? "\(line)"
            return "\(file):\(position): error: \(message)".escapingControlCharacters
        }
    }

    /// A last line cut short: what a recording ends with when the disk filled up or the
    /// recorder was killed in the middle of a write.
    ///
    /// The recorder writes each record as one line ending in a newline, so a last line with no
    /// newline that does not parse is an unfinished record, not a mistake: the records before it
    /// are complete and replayable.
    package struct Truncation: Hashable, Sendable, CustomStringConvertible {
        /// The file, as the caller named it.
        package var file: String
        /// The 1-based line of the unfinished record.
        package var line: Int
        /// How many complete records came before it.
        package var completeRecords: Int
        /// Why it does not parse: `incomplete JSON`, or a byte that is not UTF-8.
        package var reason: String

        /// Creates a truncation.
        package init(file: String, line: Int, completeRecords: Int, reason: String) {
            self.file = file
            self.line = line
            self.completeRecords = completeRecords
            self.reason = reason
        }

        /// `FILE:LINE: warning: …`, one line.
        package var description: String {
            let records = completeRecords == 1 ? "the 1 complete record" : "the \(completeRecords) complete records"
            return
                "\(file):\(line): warning: the last line is cut short (\(reason), and no newline at its end), as a recording stopped by a full disk or a crash leaves it; ignored it and kept \(records) before it"
                .escapingControlCharacters
        }
    }
}
