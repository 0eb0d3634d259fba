// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@testable import NetPathConfig

/// `[[hook_dir]]`: directories of hooks written for other dispatchers.
@Suite struct HookDirectorySettingTests {
    @Test func aStringPathAndAListOfPathsLoadWithTheirDialects() throws {
        let configuration = try #require(
            ConfigurationFixtures.load(
                """
                [agent]
                hooks_dir = "/etc/netpath/hooks.d"

                [[hook_dir]]
                path = ["/etc/NetworkManager/dispatcher.d", "/usr/lib/NetworkManager/dispatcher.d"]
                dialect = "networkmanager"

                [[hook_dir]]
                path = "/srv/hooks"
                dialect = "netpath"
                """
            )
        )
        #expect(
            configuration.hookDirectories == [
                HookDirectorySetting(
                    paths: ["/etc/NetworkManager/dispatcher.d", "/usr/lib/NetworkManager/dispatcher.d"],
                    dialect: .networkmanager,
                    location: SourceLocation(line: 4, column: 1)
                ),
                HookDirectorySetting(
                    paths: ["/srv/hooks"],
                    dialect: .netpath,
                    location: SourceLocation(line: 8, column: 1)
                ),
            ]
        )
        #expect(configuration.allHookDirectories.map(\.dialect) == [.netpath, .networkmanager, .netpath])
        #expect(configuration.allHookDirectories.first?.paths == ["/etc/netpath/hooks.d"])
    }

    @Test func networkdWithoutPathSearchesNetworkdDispatchersOwnDefault() throws {
        let configuration = try #require(
            ConfigurationFixtures.load(
                "[[hook_dir]]\ndialect = \"networkd\"\n[[hook_dir]]\npath = \"/srv/nd\"\ndialect = \"networkd\""
            )
        )
        #expect(
            configuration.hookDirectories == [
                HookDirectorySetting(
                    paths: ["/etc/networkd-dispatcher", "/usr/lib/networkd-dispatcher"],
                    dialect: .networkd,
                    location: SourceLocation(line: 1, column: 1)
                ),
                HookDirectorySetting(
                    paths: ["/srv/nd"],
                    dialect: .networkd,
                    location: SourceLocation(line: 3, column: 1)
                ),
            ]
        )
    }

    @Test func noTableMeansOnlyHooksDir() throws {
        let configuration = try #require(ConfigurationFixtures.load(""))
        #expect(configuration.hookDirectories.isEmpty)
        #expect(
            configuration.allHookDirectories == [
                HookDirectorySetting(paths: ["/etc/netpath/hooks.d"], dialect: .netpath)
            ]
        )
    }

    struct Broken: CustomTestStringConvertible, Sendable {
        var text: String
        var line: Int
        var column: Int
        var message: String
        var testDescription: String { message }
    }

    static let broken: [Broken] = [
        .init(
            text: "[[hook_dir]]\ndialect = \"networkmanager\"",
            line: 1,
            column: 1,
            message: #"[[hook_dir]] is missing the required key "path""#
        ),
        .init(
            text: "[[hook_dir]]\npath = \"/etc/NetworkManager/dispatcher.d\"",
            line: 1,
            column: 1,
            message:
                #"[[hook_dir]] is missing the required key "dialect" (one of "netpath", "networkmanager", "networkd")"#
        ),
        .init(
            text: "[[hook_dir]]\npath = \"/x\"\ndialect = \"networkmanger\"",
            line: 3,
            column: 11,
            message: #"unknown dialect "networkmanger"; did you mean "networkmanager"?"#
        ),
        .init(
            text: "[[hook_dir]]\npath = \"/x\"\ndialect = \"systemd\"",
            line: 3,
            column: 11,
            message: #"unknown dialect "systemd"; expected one of "netpath", "networkmanager", "networkd""#
        ),
        .init(
            // networkd's default search path counts as listed at its table.
            text:
                "[[hook_dir]]\ndialect = \"networkd\"\n[[hook_dir]]\npath = \"/etc/networkd-dispatcher\"\ndialect = \"netpath\"",
            line: 4,
            column: 8,
            message: #"directory "/etc/networkd-dispatcher" is listed twice; first listed at 1:1"#
        ),
        .init(
            text: "[[hook_dir]]\npath = \"dispatcher.d\"\ndialect = \"netpath\"",
            line: 2,
            column: 8,
            message: #"path must hold absolute directories, found "dispatcher.d""#
        ),
        .init(
            text: "[[hook_dir]]\npath = []\ndialect = \"netpath\"",
            line: 2,
            column: 8,
            message:
                #"path = [] names no directory; expected "/etc/NetworkManager/dispatcher.d" or a list of such directories"#
        ),
        .init(
            text: "[[hook_dir]]\npath = 5\ndialect = \"netpath\"",
            line: 2,
            column: 8,
            message:
                #"path must be a directory such as "/etc/NetworkManager/dispatcher.d" or a list of such directories, found integer 5"#
        ),
        .init(
            text: "[[hook_dir]]\npath = [\"/a\", 5]\ndialect = \"netpath\"",
            line: 2,
            column: 15,
            message: "path[1] must be a string, found integer 5"
        ),
        .init(
            text: "[[hook_dir]]\npath = [\"/a\", \"/a\"]\ndialect = \"netpath\"",
            line: 2,
            column: 15,
            message: #""/a" is listed twice in path"#
        ),
        .init(
            text:
                "[[hook_dir]]\npath = \"/a\"\ndialect = \"netpath\"\n[[hook_dir]]\npath = [\"/b\", \"/a\"]\ndialect = \"netpath\"",
            line: 5,
            column: 15,
            message: #"directory "/a" is listed twice; first listed at 2:8"#
        ),
        .init(
            text: "[[hook_dir]]\npath = \"/etc/netpath/hooks.d\"\ndialect = \"networkmanager\"",
            line: 2,
            column: 8,
            message: #"directory "/etc/netpath/hooks.d" is listed twice; it is hooks_dir"#
        ),
        .init(
            text: "[[hook_dir]]\npath = \"/x\"\ndialect = \"netpath\"\norder = \"lexical\"",
            line: 4,
            column: 1,
            message: #"unknown key "order" in [[hook_dir]]; expected one of "path", "dialect""#
        ),
        .init(
            text: "hook_dir = \"/x\"",
            line: 1,
            column: 12,
            message: #"hook_dir must be an array of tables written [[hook_dir]], found string "/x""#
        ),
        .init(
            text: "[[hook_dirs]]\npath = \"/x\"",
            line: 1,
            column: 3,
            message: "unknown table [[hook_dirs]]; did you mean [[hook_dir]]?"
        ),
    ]

    @Test(arguments: broken)
    func eachMistakeIsReportedAtItsLineAndColumn(_ broken: Broken) {
        let errors = ConfigurationFixtures.errors(broken.text, file: "/etc/netpath/netpath.toml")
        #expect(errors.map(\.message) == [broken.message])
        #expect(
            errors.first?.description
                == "/etc/netpath/netpath.toml:\(broken.line):\(broken.column): error: \(broken.message)"
        )
    }

    @Test func aControlCharacterInAPathIsRefusedAndShownEscaped() {
        let errors = ConfigurationFixtures.errors("[[hook_dir]]\npath = \"/x\\u0007\"\ndialect = \"netpath\"")
        #expect(errors.count == 1)
        #expect(errors.first.map { !$0.description.containsControlCharacters } == true)
    }
}
