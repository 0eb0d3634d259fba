// SPDX-License-Identifier: Apache-2.0

import FuzzSupport
import NetPathConfig

/// Fuzzes ``TOMLParser``: any text either parses, or fails with a position inside the text.
///
/// A document that parses is written back as TOML (``TOMLWriter``) and parsed again: the second
/// parse must succeed and give the same values (locations aside, as the text moved).
@main
enum TOMLHarness {
    static func main() { Fuzzer.run(check) }

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) {
        // The parser reads Strings: bytes that are not UTF-8 become U+FFFD here, as when a caller
        // decodes a file; ConfigurationLoader's own check of the bytes is the config harness's.
        let text = String(decoding: bytes, as: UTF8.self)
        let table: TOMLTable
        do {
            table = try TOMLParser.parse(text)
        } catch {
            let at = error.location
            invariant(
                TextPositions(text.utf8).contains(line: at.line, column: at.column),
                "error at \(at) outside the input: \(error)"
            )
            return
        }
        // Headers may nest one level deeper than inline tables and arrays (both limits are
        // maximumDepth), so a table that deep has no inline spelling to compare with.
        guard TOMLWriter.depth(of: table) < TOMLParser.maximumDepth - 1 else { return }
        let written = TOMLWriter.document(table)
        do {
            let reparsed = try TOMLParser.parse(written)
            invariant(
                TOMLWriter.same(.table(table), .table(reparsed)),
                "written back, the document parses to other values:\n\(written)"
            )
        } catch {
            invariant(false, "written back, the document does not parse (\(error)):\n\(written)")
        }
    }
}
