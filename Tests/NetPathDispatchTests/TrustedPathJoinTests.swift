// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import NetPathDispatch

/// The one way a hook's path is joined from its directory and its name.
struct TrustedPathJoinTests {
    @Test("a directory and a name join with one slash, in / too, for names of any length and script")
    func joinsAsPlainConcatenationDoes() {
        #expect(TrustedPath.joined("/", "10-hook") == "/10-hook")
        #expect(TrustedPath.joined("/etc/netpath/hooks.d", "10-hook") == "/etc/netpath/hooks.d/10-hook")
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "hooks.d", "é", "🛰", "x y", String(repeating: "long", count: 20)]
        for _ in 0..<500 {
            let depth = Int.random(in: 0...4, using: &generator)
            let directory =
                "/" + (0..<depth).map { _ in pieces.randomElement(using: &generator)! }.joined(separator: "/")
            let name = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                pieces.randomElement(using: &generator)!
            }.joined()
            let expected = (directory == "/" ? "" : directory) + "/" + name
            #expect(TrustedPath.joined(directory, name) == expected)
            #expect(Array(TrustedPath.joined(directory, name).utf8) == Array(expected.utf8))
        }
    }
}
