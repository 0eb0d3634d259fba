// SPDX-License-Identifier: Apache-2.0

import NetPathConfig
import NetPathCore
import Testing

/// `[agent] ignore`: its default, its entries, its mistakes, and the names the rest of the file keeps.
struct IgnoreConfigurationTests {
    @Test func noIgnoreKeyGivesTheContainerRuntimesDefaults() throws {
        let configuration = try #require(ConfigurationFixtures.load(""))
        #expect(configuration.agent.ignore == LinkIgnoreList.containerDefaults)
        #expect(configuration.linkIgnoreList.entries.map(\.description).contains("veth*"))
        #expect(configuration.linkIgnoreList.entries.map(\.description).contains("udev:NM_UNMANAGED=1"))
    }

    @Test func anEmptyListClearsIt() throws {
        let configuration = try #require(ConfigurationFixtures.load("[agent]\nignore = []\n"))
        #expect(configuration.agent.ignore.isEmpty)
        #expect(configuration.linkIgnoreList.isEmpty)
    }

    @Test func globsKindsAndUdevPropertiesParseInFileOrder() throws {
        let configuration = try #require(
            ConfigurationFixtures.load(
                #"[agent]"# + "\n" + #"ignore = ["pod*", "kind:bridge", "udev:ID_NET_DRIVER=veth"]"#
            )
        )
        let expected: [LinkIgnoreList.Entry] = [
            .name(try Glob("pod*")), .kind("bridge"), .udev(property: "ID_NET_DRIVER", value: "veth"),
        ]
        #expect(configuration.agent.ignore == expected)
    }

    struct Mistake: CustomTestStringConvertible, Sendable {
        var value: String
        var column: Int
        var message: String
        var testDescription: String { message }
    }

    static let mistakes: [Mistake] = [
        .init(
            value: #"["veth[0-9"]"#,
            column: 11,
            message: #"ignore: "veth[0-9": not a valid name glob: '[' at offset 4 is never closed with ']'"#
        ),
        .init(
            value: #"["type:veth"]"#,
            column: 11,
            message:
                #"ignore: "type:veth": an entry is a name glob (names never contain ':'), "kind:KIND" or "udev:PROPERTY=VALUE""#
        ),
        .init(
            value: #"["kind:"]"#,
            column: 11,
            message:
                #"ignore: "kind:": a link kind after "kind:" is lower-case letters, digits, - or _, e.g. "kind:vxlan""#
        ),
        .init(
            value: #"["udev:NM_UNMANAGED"]"#,
            column: 11,
            message: #"ignore: "udev:NM_UNMANAGED": a udev entry is "udev:PROPERTY=VALUE", e.g. "udev:NM_UNMANAGED=1""#
        ),
        .init(value: #"[""]"#, column: 11, message: #"ignore: "": an entry must not be empty"#),
        .init(value: #"["cali*", "cali*"]"#, column: 20, message: #""cali*" is listed twice in ignore"#),
        .init(
            value: #""veth*""#,
            column: 10,
            message: #"ignore must be an array of strings such as ["veth*", "kind:vxlan"], found string "veth*""#
        ),
        .init(value: "[1]", column: 11, message: "ignore[0] must be a string, found integer 1"),
    ]

    @Test(arguments: mistakes)
    func eachMistakeIsAnErrorAtItsValue(_ mistake: Mistake) {
        let errors = ConfigurationFixtures.errors(
            "[agent]\nignore = \(mistake.value)\n",
            file: "/etc/netpath/netpath.toml"
        )
        #expect(errors.map(\.message) == [mistake.message])
        #expect(
            errors.first?.description == "/etc/netpath/netpath.toml:2:\(mistake.column): error: \(mistake.message)"
        )
    }

    @Test func linksNamedByAnInterfaceOverrideOrARuleAreKept() throws {
        let configuration = try #require(
            ConfigurationFixtures.load(
                """
                [[interface]]
                match = "veth-uplink"
                type = "wired"

                [[rule]]
                name = "pods"
                interface = "cali0*"

                [[rule]]
                name = "all"
                interface = "*"
                """
            )
        )
        let list = configuration.linkIgnoreList
        #expect(list.kept.map(\.pattern) == ["veth-uplink", "cali0*"])
        let noUdev: (String, String) -> Bool = { _, _ in false }
        #expect(list.match(name: "veth-uplink", kind: "veth", udev: noUdev) == nil)
        #expect(list.match(name: "cali0abc", kind: "veth", udev: noUdev) == nil)
        #expect(list.match(name: "cali1abc", kind: "veth", udev: noUdev) != nil)
        #expect(list.match(name: "veth1234567", kind: "veth", udev: noUdev) != nil)
    }
}
