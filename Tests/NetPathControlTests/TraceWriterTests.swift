// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathControl
import Testing

/// The trace recorder (`--record`) when it cannot write.
struct TraceWriterTests {
    // /dev/full accepts the open and fails every write with ENOSPC: a full disk, on demand.
    @Test("a write that fails names the trace's real path and the reason")
    func fullDisk() throws {
        try #require(FileManager.default.fileExists(atPath: "/dev/full"), "this host has no /dev/full")
        do {
            _ = try TraceWriter(path: "/dev/full")
            Issue.record("writing the header to /dev/full succeeded")
        } catch {
            #expect("\(error)" == "cannot write the trace /dev/full: No space left on device")
        }
    }

    @Test("a path that cannot be opened is named too")
    func unopenable() throws {
        let path = "/nonexistent-\(UUID().uuidString)/trace.jsonl"
        do {
            _ = try TraceWriter(path: path)
            Issue.record("opening \(path) succeeded")
        } catch {
            #expect("\(error)" == "cannot write the trace \(path): No such file or directory")
        }
    }
}
