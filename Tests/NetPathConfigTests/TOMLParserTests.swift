// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import NetPathConfig

@Suite struct TOMLParserTests {
    @Test func keysAndValuesCarryTheirLineAndColumn() throws {
        let root = try TOMLParser.parse(
            """
            # comment
            title = "x"

            [agent]
              settle = "2s"   # trailing comment
            [[rule]]
            name = 'a'
            [[rule]]
            name = "b"
            """
        )
        #expect(root.entry("title")?.keyLocation == SourceLocation(line: 2, column: 1))
        #expect(root["title"]?.location == SourceLocation(line: 2, column: 9))
        let agent = try #require(root["agent"]?.table)
        #expect(agent.location == SourceLocation(line: 4, column: 1))
        #expect(agent.entry("settle")?.keyLocation == SourceLocation(line: 5, column: 3))
        #expect(agent["settle"]?.location == SourceLocation(line: 5, column: 12))
        let rules = try #require(root["rule"]?.array)
        #expect(rules.map(\.location) == [SourceLocation(line: 6, column: 1), SourceLocation(line: 8, column: 1)])
        #expect(rules.compactMap { $0.table?["name"]?.string } == ["a", "b"])
        #expect(root.keys == ["title", "agent", "rule"])
    }

    @Test func columnsCountCharactersNotBytes() {
        // "é" is two bytes in UTF-8 but one column in an editor.
        #expect(
            throws: TOMLSyntaxError(
                "expected a newline after a value, found \";\"",
                at: SourceLocation(line: 1, column: 8)
            )
        ) {
            try TOMLParser.parse("k = \"é\"; x = 1")
        }
    }

    @Test func stringsDecodeEscapesAndMultilineForms() throws {
        let root = try TOMLParser.parse(
            #"""
            basic = "tab\there \"q\" \\ \u00E9 \U0001F600"
            literal = 'C:\path\n'
            ml = """
            line one
            line two\
                 continued"""
            mlq = """a""b"""""
            lit_ml = '''
            raw \n '' ok'''
            "quoted key" = 1
            'literal key' = 2
            "" = 3
            """#
        )
        #expect(root["basic"]?.string == "tab\there \"q\" \\ é 😀")
        #expect(root["literal"]?.string == #"C:\path\n"#)
        #expect(root["ml"]?.string == "line one\nline twocontinued")
        #expect(root["mlq"]?.string == "a\"\"b\"\"")
        #expect(root["lit_ml"]?.string == "raw \\n '' ok")
        #expect(root["quoted key"]?.integer == 1)
        #expect(root["literal key"]?.integer == 2)
        #expect(root[""]?.integer == 3)
    }

    @Test func numbersAndBooleans() throws {
        let root = try TOMLParser.parse(
            """
            a = 1_000
            b = -17
            c = +5
            d = 0xDEAD_beef
            e = 0o755
            f = 0b1010
            g = 3.25
            h = -1e-3
            i = 6.02E+23
            j = inf
            k = -inf
            l = nan
            m = true
            n = false
            o = 0
            p = -9223372036854775808
            q = 9_223_372_036_854_775_807
            """
        )
        #expect(root["a"]?.integer == 1000)
        #expect(root["b"]?.integer == -17)
        #expect(root["c"]?.integer == 5)
        #expect(root["d"]?.integer == 0xDEAD_BEEF)
        #expect(root["e"]?.integer == 0o755)
        #expect(root["f"]?.integer == 10)
        #expect(root["g"]?.kind == .float(3.25))
        #expect(root["h"]?.kind == .float(-0.001))
        #expect(root["i"]?.kind == .float(6.02e23))
        #expect(root["j"]?.kind == .float(.infinity))
        #expect(root["k"]?.kind == .float(-.infinity))
        if case .float(let nan)? = root["l"]?.kind { #expect(nan.isNaN) } else { Issue.record("nan") }
        #expect(root["m"]?.boolean == true)
        #expect(root["n"]?.boolean == false)
        #expect(root["o"]?.integer == 0)
        #expect(root["p"]?.integer == .min)
        #expect(root["q"]?.integer == .max)
    }

    @Test func arraysInlineTablesAndDottedKeys() throws {
        let root = try TOMLParser.parse(
            """
            list = [
              "a",   # comment
              "b",
            ]
            nested = [[1, 2], ["x"], []]
            point = { x = 1, y.z = 2 }
            a.b.c = true
            a.b.d = false
            [a.e]
            f = 1
            [x.y]
            [x]
            k = 1
            """
        )
        #expect(root["list"]?.array?.compactMap(\.string) == ["a", "b"])
        #expect(root["list"]?.array?.map(\.location.line) == [2, 3])
        #expect(root["nested"]?.array?.count == 3)
        let point = try #require(root["point"]?.table)
        #expect(point["x"]?.integer == 1)
        #expect(point["y"]?.table?["z"]?.integer == 2)
        #expect(point.location == SourceLocation(line: 6, column: 9))
        let b = try #require(root["a"]?.table?["b"]?.table)
        #expect(b.keys == ["c", "d"])
        #expect(root["a"]?.table?["e"]?.table?["f"]?.integer == 1)
        #expect(root["x"]?.table?.keys == ["y", "k"])
    }

    @Test func crlfLineEndingsAreAccepted() throws {
        let root = try TOMLParser.parse("a = 1\r\n[t]\r\nb = \"x\" # c\r\n")
        #expect(root["t"]?.table?["b"]?.location == SourceLocation(line: 3, column: 5))
    }

    struct Broken: CustomTestStringConvertible, Sendable {
        var text: String
        var line: Int
        var column: Int
        var message: String
        var testDescription: String { message }
    }

    static let broken: [Broken] = [
        .init(text: "a = ", line: 1, column: 5, message: "expected a value, found end of file"),
        .init(text: "a 1", line: 1, column: 3, message: "expected \"=\" after key \"a\", found \"1\""),
        .init(text: "= 1", line: 1, column: 1, message: "expected a key, found \"=\""),
        .init(text: "a = 1 2", line: 1, column: 7, message: "expected a newline after a value, found \"2\""),
        .init(
            text: "a = \"open\nb = 1",
            line: 1,
            column: 10,
            message: "expected \"\\\"\" to close the string, found end of line"
        ),
        .init(text: "a = 'open", line: 1, column: 10, message: "expected \"'\" to close the string, found end of file"),
        .init(
            text: "a = \"\"\"never",
            line: 1,
            column: 13,
            message: "expected \"\"\" to close the multi-line string, found end of file"
        ),
        .init(
            text: "a = \"\\q\"",
            line: 1,
            column: 6,
            message:
                "invalid escape sequence \"\\q\"; expected one of \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX"
        ),
        .init(text: "a = \"\\uD800\"", line: 1, column: 6, message: "\\uD800 is not a Unicode scalar value"),
        .init(
            text: "a = \"\\u12\"",
            line: 1,
            column: 10,
            message: "expected 4 hexadecimal digits after \"\\u\", found \"\\\"\""
        ),
        .init(text: "a = 01", line: 1, column: 5, message: "invalid number 01: leading zeros are not allowed"),
        .init(
            text: "a = 1__0",
            line: 1,
            column: 5,
            message: "invalid number 1__0: an underscore must sit between two digits"
        ),
        .init(text: "a = 0x", line: 1, column: 5, message: "invalid number 0x: expected digits"),
        .init(text: "a = 0xG1", line: 1, column: 5, message: "invalid number 0xG1: \"G\" is not a base-16 digit"),
        .init(
            text: "a = -0x10",
            line: 1,
            column: 5,
            message: "invalid number -0x10: hexadecimal, octal and binary integers cannot have a sign"
        ),
        .init(
            text: "a = 9223372036854775808",
            line: 1,
            column: 5,
            message: "invalid number 9223372036854775808: it does not fit in 64 bits"
        ),
        .init(
            text: "a = 1.",
            line: 1,
            column: 5,
            message: "invalid number 1.: expected digits after the decimal point"
        ),
        .init(text: "a = 1e", line: 1, column: 5, message: "invalid number 1e: expected digits in the exponent"),
        .init(text: "a = tru", line: 1, column: 5, message: "expected a value, found \"tru\" (strings need quotes)"),
        .init(
            text: "a = never",
            line: 1,
            column: 5,
            message: "expected a value, found \"never\" (strings need quotes)"
        ),
        .init(
            text: "d = 1979-05-27T07:32:00Z",
            line: 1,
            column: 5,
            message:
                "dates and times are not supported in netpath configuration; write 1979-05-27T07:32:00Z as a string"
        ),
        .init(
            text: "t = 07:32:00",
            line: 1,
            column: 5,
            message: "dates and times are not supported in netpath configuration; write 07:32:00 as a string"
        ),
        .init(
            text: "a = [1 2]",
            line: 1,
            column: 8,
            message: "expected \",\" or \"]\" after an array element, found \"2\""
        ),
        .init(text: "a = [1,", line: 1, column: 8, message: "expected a value, found end of file"),
        .init(text: "a = {x = 1,}", line: 1, column: 12, message: "a trailing comma is not allowed in an inline table"),
        .init(
            text: "a = {x = 1\n}",
            line: 1,
            column: 11,
            message:
                "expected \",\" or \"}\" in an inline table, found end of line (an inline table must be on one line)"
        ),
        .init(
            text: "[agent\nx = 1",
            line: 1,
            column: 7,
            message: "expected \"]\" to close the table header, found end of line"
        ),
        .init(
            text: "[[rule]\n",
            line: 1,
            column: 8,
            message: "expected \"]]\" to close the table header, found end of line"
        ),
        .init(text: "[]", line: 1, column: 2, message: "expected a key, found \"]\""),
        .init(text: "a = 1\r", line: 1, column: 6, message: "a carriage return must be followed by a line feed"),
        .init(
            text: "a = \"x\u{1}\"",
            line: 1,
            column: 7,
            message: "control character U+0001 is not allowed in a string; write it as \\u0001"
        ),
        .init(
            text: "# bell \u{7}",
            line: 1,
            column: 8,
            message: "control character U+0007 is not allowed in a comment"
        ),
        .init(text: "\"\"\"k\"\"\" = 1", line: 1, column: 1, message: "a key cannot be a multi-line string"),
        .init(
            text: "a = [" + String(repeating: "[", count: 100),
            line: 1,
            column: 69,
            message: "values are nested more than 64 levels deep"
        ),
        // Redefinitions name both positions.
        .init(
            text: "name = 1\nname = 2",
            line: 2,
            column: 1,
            message: "duplicate key \"name\"; first definition at 1:1"
        ),
        .init(
            text: "[agent]\nx = 1\n[agent]",
            line: 3,
            column: 1,
            message: "table [agent] is defined twice; first definition at 1:1"
        ),
        .init(
            text: "[a]\nb.c = 1\n[a.b]",
            line: 3,
            column: 1,
            message: "table [a.b] is already defined by a dotted key at 2:1"
        ),
        .init(
            text: "a = 1\n[a]",
            line: 2,
            column: 1,
            message: "cannot define table [a]: \"a\" is already an integer (defined at 1:1)"
        ),
        .init(
            text: "a = {x = 1}\n[a.b]",
            line: 2,
            column: 2,
            message: "cannot define table [a.b]: \"a\" is already an inline table (defined at 1:1)"
        ),
        .init(
            text: "[[a]]\n[a]",
            line: 2,
            column: 1,
            message: "table [a] is already an array of tables (defined at 1:3); use [[a]] to add an element"
        ),
        .init(
            text: "[a]\n[[a]]",
            line: 2,
            column: 1,
            message: "cannot define array of tables [[a]]: [a] is already a table (defined at 1:1)"
        ),
        .init(
            text: "a = []\n[[a]]",
            line: 2,
            column: 1,
            message: "cannot define table [[a]]: \"a\" is already an array (defined at 1:1)"
        ),
        .init(
            text: "a.b = 1\na.b.c = 2",
            line: 2,
            column: 3,
            message: "cannot use \"a.b\" as a table: it is already an integer (defined at 1:3)"
        ),
        .init(
            text: "[a.b]\n[a]\nb.c = 1",
            line: 3,
            column: 1,
            message: "cannot add to table \"b\" with a dotted key: it is defined at 1:1"
        ),
        .init(text: "p = {x = 1, x = 2}", line: 1, column: 13, message: "duplicate key \"x\"; first definition at 1:6"),
    ]

    @Test(arguments: broken)
    func syntaxErrorsSayWhereAndWhat(_ broken: Broken) {
        #expect(throws: TOMLSyntaxError(broken.message, at: SourceLocation(line: broken.line, column: broken.column))) {
            try TOMLParser.parse(broken.text)
        }
    }

    @Test func aSyntaxErrorRendersAsFileLineColumn() {
        let result = ConfigurationLoader.load(contents: "[agent]\nsettle = \n", file: "bad.toml")
        guard case .failure(let errors) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(errors.description == "bad.toml:2:10: error: expected a value, found end of line")
    }

    // MARK: - Fuzzing

    /// SplitMix64: a tiny seeded generator, so a failing case can be reproduced.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// What every load of arbitrary input must give: a configuration, or errors that each name the
    /// file, a line and column inside (or just past) the text, and fit on one line.
    private func expectWellFormed(_ result: Result<Configuration, ConfigurationErrors>, for text: String) {
        guard case .failure(let failure) = result else { return }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(!failure.errors.isEmpty, "a failure without errors for \(text.debugDescription)")
        for diagnostic in failure.errors + failure.warnings {
            #expect(diagnostic.file == "fuzz.toml")
            #expect((1...lines + 1).contains(diagnostic.line), "\(diagnostic) for \(text.debugDescription)")
            #expect(diagnostic.column >= 1, "\(diagnostic)")
            #expect(!diagnostic.description.contains("\n"), "\(diagnostic.description.debugDescription)")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func randomBytesNeverCrashOrHang() {
        var rng = SeededGenerator(state: 0x6E65_7470_6174_68)
        let alphabet = Array("[]{}=\"'#.,_-+:\\ \t\n\rabcxyz0123456789eE".utf8)
        for _ in 0..<3000 {
            let count = Int.random(in: 0..<120, using: &rng)
            let bytes: [UInt8] = (0..<count).map { _ in
                Bool.random(using: &rng)
                    ? alphabet.randomElement(using: &rng) ?? 0 : UInt8.random(in: 0...255, using: &rng)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            _ = try? TOMLParser.parse(text)
            expectWellFormed(
                ConfigurationLoader.load(contents: text, file: "fuzz.toml", knownPlugins: ["event-log"]),
                for: text
            )
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func mutatedValidConfigurationsNeverCrashOrHang() {
        var rng = SeededGenerator(state: 42)
        let seed = Array(Configuration.defaultFileContents.utf8) + Array(ConfigurationFixtures.full.utf8)
        let inserts = Array("[]{}=\"'#.,\n".utf8)
        for _ in 0..<600 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                guard !bytes.isEmpty else { break }
                let i = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes.remove(at: i)
                case 1: bytes.insert(inserts.randomElement(using: &rng) ?? 0, at: i)
                case 2: bytes[i] = UInt8.random(in: 0...255, using: &rng)
                default:
                    let j = Int.random(in: i..<min(bytes.count, i + 40), using: &rng)
                    bytes.insert(contentsOf: bytes[i...j], at: j)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            expectWellFormed(ConfigurationLoader.load(contents: text, file: "fuzz.toml", knownPlugins: []), for: text)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func largeInputsParseInLinearTime() throws {
        let longLine = "a = [" + Array(repeating: "1", count: 200_000).joined(separator: ", ") + "]"
        #expect(
            try TOMLParser.parse(longLine)["a"]?.array?.last?.location
                == SourceLocation(line: 1, column: 6 + 3 * 199_999)
        )
        let manyTables = String(repeating: "[[rule]]\nname = \"r\"\n", count: 20_000)
        #expect(try TOMLParser.parse(manyTables)["rule"]?.array?.count == 20_000)
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deepArray = "a = " + String(repeating: "[", count: 10_000)
        let deepInline = "a = " + String(repeating: "{b=", count: 10_000)
        let deepKey = String(repeating: "a.", count: 10_000) + "b = 1"
        let deepHeader = "[" + String(repeating: "a.", count: 10_000) + "b]"
        for text in [deepArray, deepInline, deepKey, deepHeader] {
            #expect(throws: TOMLSyntaxError.self) { try TOMLParser.parse(text) }
        }
    }
}
