// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// Left-aligned text columns, two spaces apart, like `ip -br` and `networkctl` print.
package enum TextTable {
    /// The rows as lines; the last column is not padded, so lines carry no trailing spaces.
    ///
    /// Control characters in a cell are escaped (``Swift/String/escapingControlCharacters``): cells
    /// hold names from outside (files, interfaces), and one of them must not break a row in two.
    package static func render(_ rows: [[String]]) -> String {
        let rows = rows.map { $0.map(\.escapingControlCharacters) }
        guard let columns = rows.map(\.count).max() else { return "" }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
