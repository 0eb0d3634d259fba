// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

/// Kernel names are bytes; their string form loses none of them.
struct InterfaceNameTests {
    @Test(
        "names are written as documented",
        arguments: [
            ([0x65, 0x74, 0x68, 0x30], "eth0"),
            (Array("wlp0s20f3".utf8), "wlp0s20f3"),
            (Array("lte-ü".utf8), "lte-ü"),  // valid UTF-8 stays itself
            ([0x61, 0xff, 0x62], #"a\xffb"#),  // not UTF-8
            ([0x61, 0x5c, 0x62], #"a\\b"#),  // a backslash is doubled
            ([0x61, 0x01, 0x7f], #"a\x01\x7f"#),  // control characters
            ([0x61, 0xc2, 0x85], #"a\xc2\x85"#),  // a C1 control (NEL), valid UTF-8
            ([0x61, 0xc3], #"a\xc3"#),  // a sequence cut short
            ([0xc0, 0xaf], #"\xc0\xaf"#),  // an overlong "/"
            ([0xed, 0xa0, 0x80], #"\xed\xa0\x80"#),  // a surrogate
            ([0x61, 0x00, 0x62], "a"),  // a NUL ends the name, as in the kernel's buffer
        ] as [([UInt8], String)]
    )
    func stringForm(_ bytes: [UInt8], _ expected: String) {
        #expect(InterfaceName.string(fromKernel: bytes) == expected)
    }

    @Test("every byte string round-trips, and its string form has no control character")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        var samples: [[UInt8]] = (0...255).filter { $0 != 0 }.map { [UInt8($0), 0x5c, 0x78, UInt8($0)] }
        for _ in 0..<2000 {
            samples.append((0..<Int.random(in: 1...15, using: &generator)).map { _ in UInt8.random(in: 1...255) })
        }
        for bytes in samples {
            let name = InterfaceName.string(fromKernel: bytes)
            #expect(InterfaceName.kernelBytes(name) == bytes, "\(bytes) -> \(name)")
            // Verbatim exactly when the string form's UTF-8 is the kernel's bytes.
            #expect(InterfaceName.isVerbatim(name) == (Array(name.utf8) == bytes), "\(bytes) -> \(name)")
            #expect(!name.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(name)")
        }
    }

    @Test("a hand-typed name with a lone backslash keeps it")
    func loneBackslash() {
        #expect(InterfaceName.kernelBytes(#"a\qb"#) == Array(#"a\qb"#.utf8))
        #expect(InterfaceName.kernelBytes(#"a\x4"#) == Array(#"a\x4"#.utf8))
    }
}
