// SPDX-License-Identifier: Apache-2.0

/// Waits until `condition` holds, checking every 10 ms, for at most `timeout`: for state that
/// changes without announcing it (counters, files), where there is no event to await.
///
/// - Throws: a ``TestFailure`` naming `what` when the time runs out.
public func waitUntil(
    _ what: String,
    timeout: Duration = .seconds(10),
    _ condition: () throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else {
            throw TestFailure("timed out after \(timeout) waiting until \(what)")
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
