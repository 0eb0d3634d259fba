// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@testable import NetPathDispatch

/// The buffer a hook's argv and environment are spawned from.
struct CStringListTests {
    /// A list of `entries`, each appended whole.
    private func made(_ entries: [[UInt8]]) -> CStringList {
        var list = CStringList()
        for entry in entries { list.append([], entry) }
        return list
    }

    /// The C strings `list` hands to `execve`, read back through its pointers.
    private func strings(_ list: CStringList) -> [String] {
        list.withPointers { pointers in
            var out: [String] = []
            var index = 0
            while let pointer = pointers[index] {
                out.append(String(cString: pointer))
                index += 1
            }
            return out
        }
    }

    @Test("entries come back in order through the pointers, the empty one included, and the array ends with NULL")
    func entriesInOrder() {
        var list = CStringList()
        list.append([], Array("NETPATH_EVENT=up".utf8))
        list.append(Array("NETPATH_RULE=".utf8), "")
        list.append(Array("NETPATH_INTERFACE=".utf8), [0x65, 0xff])
        list.append([], "")
        #expect(list.count == 4)
        #expect(
            list.entries == [
                Array("NETPATH_EVENT=up".utf8), Array("NETPATH_RULE=".utf8),
                Array("NETPATH_INTERFACE=".utf8) + [0x65, 0xff], [],
            ]
        )
        #expect(strings(list).count == 4)
        #expect(strings(list)[0] == "NETPATH_EVENT=up")
        #expect(strings(list)[3] == "")
        #expect(strings(CStringList()) == [])
    }

    @Test("a NUL ends its entry: what follows it is dropped, never read as another entry")
    func nulEndsTheEntry() {
        var list = CStringList()
        list.append(Array("A=".utf8), "x\u{0}B=injected")
        list.append(Array("C=".utf8), [0x79, 0, 0x7a])
        list.append(Array("D\u{0}E=".utf8), "ignored")
        list.append(Array("F=".utf8), "kept")
        #expect(list.count == 4)
        #expect(strings(list) == ["A=x", "C=y", "D", "F=kept"])
        #expect(made([Array("G=1".utf8), [0x48, 0, 0x49]]).entries == [Array("G=1".utf8), [0x48]])
    }

    @Test("appending a list keeps both lists' entries, in order")
    func appendingAList() {
        var first = made([Array("A=1".utf8)])
        let second = made([Array("B=2".utf8), Array("C=3".utf8)])
        first.append(contentsOf: second)
        #expect(first.count == 3)
        #expect(strings(first) == ["A=1", "B=2", "C=3"])
        #expect(first == made([Array("A=1".utf8), Array("B=2".utf8), Array("C=3".utf8)]))
    }

    @Test("an environment value with a NUL adds no variable to a hook's environment")
    func invocationValueWithANul() {
        let invocation = HookInvocation(
            hook: "10-x",
            arguments: ["10-x", "eth0", "up"],
            environment: ["A": "x\u{0}PATH=/tmp/evil", "PATH": HookInvocation.path],
            variableOrder: ["PATH", "A"],
            interfaceVariables: [],
            timeout: .seconds(1)
        )
        #expect(strings(invocation.environmentList) == ["PATH=\(HookInvocation.path)", "A=x"])
        #expect(strings(invocation.argumentList) == ["10-x", "eth0", "up"])
    }

    @Test("a copy is a value: appending to it leaves the original as it was, and each grows past its first room")
    func copiesAreValues() {
        var original = CStringList()
        original.reserveCapacity(8)
        original.append("A=", "1")
        var copy = original
        for index in 0..<40 { copy.append("B=", String(repeating: "x", count: index)) }
        original.append("C=", Array("3".utf8))
        #expect(strings(original) == ["A=1", "C=3"])
        #expect(copy.count == 41)
        #expect(strings(copy).first == "A=1")
        #expect(strings(copy).last == "B=" + String(repeating: "x", count: 39))
        #expect(copy.byteCount == copy.bytes.count)
        #expect(copy.bytes.filter { $0 == 0 }.count == 41)
        var rebuilt = made([Array("A=1".utf8)])
        rebuilt.append(contentsOf: made([Array("C=3".utf8)]))
        #expect(rebuilt == original)
        #expect(rebuilt.hashValue == original.hashValue)
        #expect(rebuilt != copy)
        // A one-character literal may be stored as a scalar, not as bytes: it is written all the same.
        var short = CStringList()
        short.append("Z", "1")
        short.append("Y", Array("2".utf8))
        #expect(strings(short) == ["Z1", "Y2"])
    }
}
