// SPDX-License-Identifier: Apache-2.0

/// Stops the run when one of a parser's invariants does not hold.
///
/// libFuzzer takes the trap like any crash: it saves the input as `crash-…` and prints the
/// message, so a broken invariant is reported, reproduced and minimized like a crash.
///
/// ```swift
/// invariant(reparsed == parsed, "re-encoding changed the value: \(parsed) → \(reparsed)")
/// ```
package func invariant(
    _ condition: @autoclosure () -> Bool,
    _ message: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line
) {
    guard !condition() else { return }
    fatalError("invariant broken: \(message())", file: file, line: line)
}
