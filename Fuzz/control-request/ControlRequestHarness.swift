// SPDX-License-Identifier: Apache-2.0

import FuzzSupport
import NetPathControl
import NetPathCore

/// Fuzzes ``ControlRequest/init(line:)``, what netpathd decodes of each line a client sends.
///
/// A request that decodes, encoded as a client sends it (``JSONCoding/lineBytes(_:)``), is one
/// line that decodes to the same request.
@main
enum ControlRequestHarness {
    static func main() { Fuzzer.run(check) }

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let request = try? ControlRequest(line: bytes) else { return }
        guard let line = try? JSONCoding.lineBytes(request) else {
            return invariant(false, "a decoded request cannot be encoded: \(request)")
        }
        invariant(!line.contains(UInt8(ascii: "\n")), "an encoded request is more than one line")
        invariant((try? ControlRequest(line: line)) == request, "encoded and decoded again, \(request) differs")
    }
}
