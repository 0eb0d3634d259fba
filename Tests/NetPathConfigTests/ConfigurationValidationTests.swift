// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import Testing

@testable import NetPathConfig

@Suite struct ConfigurationValidationTests {
    // MARK: - Valid files

    @Test func aFullConfigurationLoadsIntoTheExpectedModel() throws {
        let configuration = try #require(
            ConfigurationFixtures.load(ConfigurationFixtures.full, knownPlugins: ["event-log"])
        )
        #expect(
            configuration.agent
                == Configuration.Agent(
                    hooksDirectory: "/opt/netpath/hooks",
                    hookTimeout: .seconds(90),
                    maxRunningHooks: 4,
                    settle: .milliseconds(250),
                    startupEvents: false,
                    controlSocket: "/tmp/netpathd.sock",
                    metrics: "127.0.0.1:9479"
                )
        )
        #expect(
            configuration.interfaces == [
                InterfaceOverride(match: try Glob("wwan*"), type: .cellular, metered: true),
                InterfaceOverride(match: try Glob("usb[0-9]"), constrained: true),
            ]
        )
        #expect(
            configuration.policies == [
                PathPolicy(
                    name: "uplink",
                    require: [.wired, .wifi, .cellular],
                    metered: .avoid,
                    prefer: [.wired, .wifi]
                ),
                PathPolicy(name: "probe", prohibit: [.cellular], metered: .deny, target: "192.0.2.1"),
            ]
        )
        #expect(
            configuration.rules == [
                Rule(
                    name: "backups-pause-on-metered",
                    on: [.changed, .satisfied],
                    policy: "uplink",
                    interface: try Glob("*"),
                    metered: true,
                    run: ["50-backups"],
                    plugins: ["event-log"],
                    timeout: .seconds(10),
                    location: SourceLocation(line: 32, column: 1)
                ),
                Rule(
                    name: "modem-off",
                    on: [.up],
                    type: [.wired],
                    run: ["20-modem-off"],
                    location: SourceLocation(line: 42, column: 1)
                ),
                Rule(name: "everything", location: SourceLocation(line: 48, column: 1)),
            ]
        )
        #expect(configuration.plugins.keys.sorted() == ["event-log"])
        #expect(configuration.plugins["event-log"]?["path"]?.string == "/var/log/netpath/events.jsonl")
        #expect(configuration.plugins["event-log"]?.location == SourceLocation(line: 51, column: 1))
        #expect(configuration.warnings.isEmpty)
        #expect(!configuration.isDispatcherMode)
    }

    @Test func anEmptyFileGivesTheDefaults() throws {
        let configuration = try #require(ConfigurationFixtures.load(""))
        #expect(configuration == Configuration())
        #expect(configuration.policies == [PathPolicy.default])
        #expect(configuration.agent.hookTimeout == .seconds(30))
        #expect(configuration.agent.settle == .zero)
        #expect(configuration.isDispatcherMode)
    }

    @Test func arraysOfInlineTablesWorkLikeArraysOfTables() throws {
        let configuration = try #require(
            ConfigurationFixtures.load(#"policy = [{ name = "a" }, { name = "b", metered = "deny" }]"#)
        )
        #expect(configuration.policies.map(\.name) == ["a", "b"])
        #expect(configuration.policies[1].metered == .deny)
    }

    @Test func theEmbeddedDefaultIsTheRepositoryFileAndValid() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let onDisk = try Data(contentsOf: repository.appendingPathComponent("config/netpath.toml"))
        #expect(Array(onDisk) == PackageResources.netpath_toml)
        #expect(Configuration.defaultFileContents.utf8.count == onDisk.count)

        let result = ConfigurationLoader.load(
            contents: Configuration.defaultFileContents,
            file: Configuration.defaultFileName,
            knownPlugins: []
        )
        let configuration = try result.get()
        #expect(configuration.warnings.isEmpty)
        #expect(configuration.isDispatcherMode)
        #expect(configuration.agent == Configuration.Agent())
        #expect(
            configuration.policies == [
                PathPolicy(name: "default", metered: .avoid, prefer: [.wired, .wifi, .cellular])
            ]
        )
        #expect(Configuration.default == configuration)
    }

    // MARK: - Broken files

    struct Broken: CustomTestStringConvertible, Sendable {
        var text: String
        var line: Int
        var column: Int
        var message: String
        var knownPlugins: Set<String>? = nil
        var testDescription: String { message }
    }

    static let broken: [Broken] = [
        // Unknown keys, with and without a suggestion.
        .init(
            text: "[agent]\nhook_timout = \"5s\"",
            line: 2,
            column: 1,
            message: #"unknown key "hook_timout" in [agent]; did you mean "hook_timeout"?"#
        ),
        .init(
            text: "[agent]\ncolour = 1",
            line: 2,
            column: 1,
            message:
                #"unknown key "colour" in [agent]; expected one of "hooks_dir", "hook_timeout", "max_running_hooks", "settle", "startup_events", "control_socket", "control_group", "metrics", "ignore""#
        ),
        .init(
            text: "[agnet]\nsettle = \"1s\"",
            line: 1,
            column: 2,
            message: "unknown table [agnet]; did you mean [agent]?"
        ),
        .init(
            text: "[[rules]]\nname = \"x\"",
            line: 1,
            column: 3,
            message: "unknown table [[rules]]; did you mean [[rule]]?"
        ),
        .init(
            text: "verbose = true",
            line: 1,
            column: 1,
            message:
                #"unknown key "verbose" at the top level; expected [agent], [[hook_dir]], [[interface]], [[policy]], [[rule]], [connectivity] or [plugin.NAME]"#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\nevents = [\"up\"]",
            line: 3,
            column: 1,
            message:
                #"unknown key "events" in [[rule]]; expected one of "name", "on", "policy", "interface", "type", "metered", "connectivity", "run", "plugins", "timeout""#
        ),
        .init(
            text: "[[policy]]\nname = \"p\"\nprefered = []",
            line: 3,
            column: 1,
            message: #"unknown key "prefered" in [[policy]]; did you mean "prefer"?"#
        ),
        // Wrong types.
        .init(
            text: "[agent]\nhooks_dir = 5",
            line: 2,
            column: 13,
            message: "hooks_dir must be a string, found integer 5"
        ),
        .init(
            text: "[agent]\nstartup_events = \"yes\"",
            line: 2,
            column: 18,
            message: #"startup_events must be true or false, found "yes""#
        ),
        .init(
            text: "[agent]\nhook_timeout = 30",
            line: 2,
            column: 16,
            message: #"hook_timeout must be a duration such as "30s" or "1m30s", found integer 30"#
        ),
        .init(
            text: "agent = \"x\"",
            line: 1,
            column: 9,
            message: #"agent must be a table written [agent], found string "x""#
        ),
        .init(
            text: "[policy]\nname = \"p\"",
            line: 1,
            column: 1,
            message: "policy must be an array of tables written [[policy]], found table"
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\non = \"up\"",
            line: 3,
            column: 6,
            message: #"on must be an array of strings such as ["up", "down"], found string "up""#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\nrun = [1]",
            line: 3,
            column: 8,
            message: "run[0] must be a string, found integer 1"
        ),
        // Durations.
        .init(
            text: "[agent]\nhook_timeout = \"30\"",
            line: 2,
            column: 16,
            message: #"hook_timeout: invalid duration "30": a number needs a unit (ms, s, m or h), e.g. "30s""#
        ),
        .init(
            text: "[agent]\nsettle = \"5x\"",
            line: 2,
            column: 10,
            message: #"settle: invalid duration "5x": unknown unit "x" (use ms, s, m or h)"#
        ),
        .init(
            text: "[agent]\nsettle = \"-1s\"",
            line: 2,
            column: 10,
            message: #"settle: invalid duration "-1s": durations cannot be negative"#
        ),
        .init(
            text: "[agent]\nsettle = \"\"",
            line: 2,
            column: 10,
            message: #"settle: invalid duration "": it is empty; write e.g. "30s""#
        ),
        .init(
            text: "[agent]\nhook_timeout = \"0s\"",
            line: 2,
            column: 16,
            message: #"hook_timeout must be longer than zero, found "0s""#
        ),
        // Absurd durations: each key has a maximum, named in the message.
        .init(
            text: "[agent]\nhook_timeout = \"99999999999h\"",
            line: 2,
            column: 16,
            message: #"hook_timeout must be at most "24h", found "99999999999h""#
        ),
        .init(
            text: "[agent]\nsettle = \"1h1ms\"",
            line: 2,
            column: 10,
            message: #"settle must be at most "1h", found "1h1ms""#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\ntimeout = \"25h\"",
            line: 3,
            column: 11,
            message: #"timeout must be at most "24h", found "25h""#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\ntimeout = \"1.5s\"",
            line: 3,
            column: 11,
            message:
                #"timeout: invalid duration "1.5s": fractions are not supported; use a smaller unit such as "1500ms""#
        ),
        // Agent values.
        .init(
            text: "[agent]\nmax_running_hooks = 0",
            line: 2,
            column: 21,
            message: "max_running_hooks must be an integer from 1 to 1024, found integer 0"
        ),
        .init(
            text: "[agent]\nmax_running_hooks = 100000",
            line: 2,
            column: 21,
            message: "max_running_hooks must be an integer from 1 to 1024, found integer 100000"
        ),
        .init(
            text: "[agent]\nmax_running_hooks = \"8\"",
            line: 2,
            column: 21,
            message: #"max_running_hooks must be an integer from 1 to 1024, found "8""#
        ),
        .init(
            text: "[agent]\nhooks_dir = \"hooks.d\"",
            line: 2,
            column: 13,
            message: #"hooks_dir must be an absolute path, found "hooks.d""#
        ),
        .init(
            text: "[agent]\nmetrics = \"9479\"",
            line: 2,
            column: 11,
            message: #"metrics must be empty or HOST:PORT such as "127.0.0.1:9479", found "9479""#
        ),
        // A name is refused: netpathd binds numeric addresses only, so it would fail at start.
        .init(
            text: "[agent]\nmetrics = \"localhost:9479\"",
            line: 2,
            column: 11,
            message:
                #"metrics host must be an IP address, not a name (netpathd does not resolve it), found "localhost:9479"; use "127.0.0.1:9479" or "[::1]:9479""#
        ),
        .init(
            text: "[agent]\nmetrics = \"metrics.example:80\"",
            line: 2,
            column: 11,
            message:
                #"metrics host must be an IP address, not a name (netpathd does not resolve it), found "metrics.example:80"; use "127.0.0.1:80""#
        ),
        .init(
            text: "[agent]\nmetrics = \"[127.0.0.1]:9479\"",
            line: 2,
            column: 11,
            message: #"metrics host must be an IPv6 address in brackets such as "[::1]:9479", found "[127.0.0.1]:9479""#
        ),
        .init(
            text: "[agent]\ncontrol_group = \"net:path\"",
            line: 2,
            column: 17,
            message: #"control_group must be a group name such as "netpath", found "net:path""#
        ),
        .init(
            text: "[agent]\ncontrol_group = 100",
            line: 2,
            column: 17,
            message: "control_group must be a string, found integer 100"
        ),
        // Enumerations.
        .init(
            text: "[[policy]]\nname = \"p\"\nmetered = \"never\"",
            line: 3,
            column: 11,
            message: #"metered must be one of "allow", "avoid", "deny", found "never""#
        ),
        .init(
            text: "[[policy]]\nname = \"p\"\nmetered = \"alow\"",
            line: 3,
            column: 11,
            message: #"metered must be one of "allow", "avoid", "deny", found "alow"; did you mean "allow"?"#
        ),
        .init(
            text: "[[policy]]\nname = \"p\"\nmetered = true",
            line: 3,
            column: 11,
            message: #"metered must be one of "allow", "avoid", "deny", found boolean true"#
        ),
        .init(
            text: "[[policy]]\nname = \"p\"\nrequire = [\"wired\", \"lte\"]",
            line: 3,
            column: 21,
            message:
                #"unknown interface type "lte" in require; expected one of "wired", "wifi", "cellular", "loopback", "other""#
        ),
        .init(
            text: "[[interface]]\nmatch = \"wl*\"\ntype = \"wfi\"",
            line: 3,
            column: 8,
            message: #"unknown interface type "wfi" in type; did you mean "wifi"?"#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\non = [\"link-up\"]",
            line: 3,
            column: 7,
            message:
                #"unknown event "link-up" in on; expected one of "added", "removed", "up", "down", "carrier-up", "carrier-down", "address-added", "address-removed", "changed", "connectivity-changed", "satisfied", "unsatisfied""#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\non = [\"carrier_up\"]",
            line: 3,
            column: 7,
            message: #"unknown event "carrier_up" in on; did you mean "carrier-up"?"#
        ),
        // Names.
        .init(
            text: "[[policy]]\nname = \"a\"\n[[policy]]\nname = \"a\"",
            line: 4,
            column: 8,
            message: #"duplicate policy name "a"; first defined at 2:8"#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\n[[rule]]\nname = \"r\"",
            line: 4,
            column: 8,
            message: #"duplicate rule name "r"; first defined at 2:8"#
        ),
        .init(
            text: "[[rule]]\non = [\"up\"]",
            line: 1,
            column: 1,
            message: #"[[rule]] is missing the required key "name""#
        ),
        .init(text: "[[policy]]\nname = \"  \"", line: 2, column: 8, message: "name must not be empty"),
        .init(
            text: "[[interface]]\ntype = \"wired\"",
            line: 1,
            column: 1,
            message: #"[[interface]] is missing the required key "match" (an interface name glob such as "wwan*")"#
        ),
        // Cross references.
        .init(
            text: "[[policy]]\nname = \"uplink\"\n[[rule]]\nname = \"r\"\npolicy = \"uplnk\"",
            line: 5,
            column: 10,
            message: #"policy "uplnk" is not defined; did you mean "uplink"?"#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\npolicy = \"vpn\"",
            line: 3,
            column: 10,
            message: #"policy "vpn" is not defined; defined policies: "default""#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\non = []",
            line: 3,
            column: 6,
            message: #"on = [] matches no event; list event names, or remove "on" to match every event"#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\non = [\"up\", \"down\"]\npolicy = \"default\"",
            line: 4,
            column: 10,
            message:
                #"policy filters path events, but this rule fires only on interface events ("up", "down"); remove policy or add a path event"#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\non = [\"up\", \"up\"]",
            line: 3,
            column: 13,
            message: #""up" is listed twice in on"#
        ),
        // Globs.
        .init(
            text: "[[interface]]\nmatch = \"eth[0-\"",
            line: 2,
            column: 9,
            message: #"match must be a valid name glob, found "eth[0-": '[' at offset 3 is never closed with ']'"#
        ),
        // The bad characters of a rejected value are shown escaped: one error, one line.
        .init(
            text: "[[rule]]\nname = \"r\"\ninterface = \"eth[\\n-\\u0001]\"",
            line: 3,
            column: 13,
            message: #"interface must be a valid name glob, found "eth[\n-\u0001]": range \n-\u0001 is reversed"#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\ninterface = \"\"",
            line: 3,
            column: 13,
            message: #"interface must be a name glob such as "eth*", found """#
        ),
        // Policy consistency.
        .init(
            text: "[[policy]]\nname = \"p\"\nprohibit = [\"cellular\"]\nprefer = [\"wired\", \"cellular\"]",
            line: 4,
            column: 20,
            message: #"prefer names "cellular", which this policy prohibits"#
        ),
        .init(
            text: "[[policy]]\nname = \"p\"\nrequire = [\"wifi\"]\nprohibit = [\"wifi\"]",
            line: 4,
            column: 13,
            message: #"type "wifi" is both required and prohibited"#
        ),
        .init(
            text: "[[policy]]\nname = \"p\"\nrequire = [\"wifi\"]\nprefer = [\"wired\"]",
            line: 4,
            column: 11,
            message: #"prefer names "wired", which is not in require ["wifi"]"#
        ),
        .init(
            text: "[[policy]]\nname = \"p\"\nprefer = [\"wired\", \"wired\"]",
            line: 3,
            column: 20,
            message: #""wired" is listed twice in prefer"#
        ),
        .init(
            text: "[[policy]]\nname = \"p\"\ntarget = \"10.0.0.0/8\"",
            line: 3,
            column: 10,
            message: #"target must be a host name or an IP address, found "10.0.0.0/8""#
        ),
        // Hooks and plugins.
        .init(
            text: "[[rule]]\nname = \"r\"\nrun = [\"/usr/bin/backup\"]",
            line: 3,
            column: 8,
            message: #"run lists hooks by file name (in hooks_dir or a [[hook_dir]]), found "/usr/bin/backup""#
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\nplugins = [\"event-lg\"]",
            line: 3,
            column: 12,
            message: #"unknown plugin "event-lg"; did you mean "event-log"?"#,
            knownPlugins: ["event-log", "route-metrics"]
        ),
        .init(
            text: "[[rule]]\nname = \"r\"\nplugins = [\"vpn\"]",
            line: 3,
            column: 12,
            message: #"unknown plugin "vpn"; available plugins: "event-log", "route-metrics""#,
            knownPlugins: ["event-log", "route-metrics"]
        ),
        .init(
            text: "[plugin.event-lgo]\npath = \"/x\"",
            line: 1,
            column: 9,
            message: #"unknown plugin "event-lgo"; did you mean "event-log"?"#,
            knownPlugins: ["event-log"]
        ),
        .init(
            text: "[plugin]\nevent-log = 1",
            line: 2,
            column: 13,
            message: "plugin.event-log must be a table written [plugin.event-log], found integer 1"
        ),
    ]

    @Test(arguments: broken)
    func eachMistakeIsReportedWithItsPositionAndExpectation(_ broken: Broken) {
        let errors = ConfigurationFixtures.errors(
            broken.text,
            file: "/etc/netpath/netpath.toml",
            knownPlugins: broken.knownPlugins
        )
        #expect(errors.map(\.message) == [broken.message])
        #expect(errors.first?.line == broken.line)
        #expect(errors.first?.column == broken.column)
        #expect(
            errors.first?.description
                == "/etc/netpath/netpath.toml:\(broken.line):\(broken.column): error: \(broken.message)"
        )
    }

    @Test func theCorpusHasAtLeastTwentyFiveDistinctMistakes() {
        #expect(Set(Self.broken.map(\.message)).count >= 25)
    }

    @Test func allErrorsAreReportedAtOnceInFileOrder() throws {
        let text = """
            [agent]
            hook_timout = "5s"
            settle = "fast"

            [[policy]]
            name = "p"
            metered = "never"

            [[rule]]
            name = "r"
            on = ["upp"]
            policy = "q"
            """
        guard case .failure(let errors) = ConfigurationLoader.load(contents: text, file: "f.toml") else {
            Issue.record("expected errors")
            return
        }
        #expect(
            errors.description == """
                f.toml:2:1: error: unknown key "hook_timout" in [agent]; did you mean "hook_timeout"?
                f.toml:3:10: error: settle: invalid duration "fast": expected a number at "fast"
                f.toml:7:11: error: metered must be one of "allow", "avoid", "deny", found "never"
                f.toml:11:7: error: unknown event "upp" in on; did you mean "up"?
                f.toml:12:10: error: policy "q" is not defined; defined policies: "p"
                """
        )
    }

    // MARK: - Rendering

    @Test func aDiagnosticIsOneLineWhateverItsMessageAndFile() {
        let diagnostic = Diagnostic(file: "a\nb.toml", line: 1, column: 2, message: "found \"x\ny\u{1B}\"")
        #expect(diagnostic.description == #"a\nb.toml:1:2: error: found "x\ny\u001B""#)
    }

    // MARK: - Encoding

    @Test func aByteThatIsNotUTF8IsAnErrorAtItsLineAndColumn() {
        // Line 3: `hooks_dir = "/é` then the bad byte; "é" is two bytes but one column.
        let bytes = Array("[agent]\n# ok\nhooks_dir = \"/é".utf8) + [0xFF] + Array("x\"\n".utf8)
        guard case .failure(let errors) = ConfigurationLoader.load(bytes: bytes, file: "f.toml") else {
            Issue.record("expected an error")
            return
        }
        #expect(
            errors.description
                == "f.toml:3:16: error: byte 0xFF (offset 29) is not valid UTF-8; the file must be UTF-8 text"
        )
    }

    @Test func validUTF8BytesLoadLikeTheText() throws {
        let text = ConfigurationFixtures.full
        let fromBytes = try ConfigurationLoader.load(bytes: Array(text.utf8), file: "f.toml").get()
        #expect(fromBytes == (try ConfigurationLoader.load(contents: text, file: "f.toml").get()))
    }

    // MARK: - Warnings

    @Test func anInterfaceFilterOnUnsatisfiedIsAWarning() throws {
        let text = "[[rule]]\nname = \"r\"\non = [\"unsatisfied\"]\ninterface = \"eth*\""
        let configuration = try #require(ConfigurationFixtures.load(text))
        #expect(
            configuration.warnings.map(\.description) == [
                #"netpath.toml:4:13: warning: interface "eth*" never matches "unsatisfied": an unsatisfied path has no primary interface"#
            ]
        )
    }

    @Test func anInterfaceFilterOnSatisfiedIsFine() throws {
        let text = "[[rule]]\nname = \"r\"\non = [\"satisfied\", \"changed\"]\ninterface = \"eth*\"\ntype = [\"wired\"]"
        let configuration = try #require(ConfigurationFixtures.load(text))
        #expect(configuration.warnings.isEmpty)
    }

    @Test func aPluginTableNoRuleNamesIsAWarning() throws {
        let text = "[[rule]]\nname = \"r\"\n[plugin.event-log]\npath = \"/x\""
        let configuration = try #require(ConfigurationFixtures.load(text))
        #expect(
            configuration.warnings.map(\.message) == [
                #"[plugin.event-log] is configured, but no rule lists "event-log" in plugins, so it receives no events"#
            ]
        )
    }

    @Test func aRuleThatRunsNothingIsAWarning() throws {
        let configuration = try #require(ConfigurationFixtures.load("[[rule]]\nname = \"quiet\"\nrun = []"))
        #expect(
            configuration.warnings.map(\.message) == [
                #"rule "quiet" runs no hook and no plugin (run = [] and no plugins)"#
            ]
        )
        #expect(configuration.rules.first?.run == [])
    }

    // MARK: - The machine: control_group and metrics

    @Test func aControlGroupThatExistsIsKeptAndAnEmptyOneMeansNone() throws {
        let exists: @Sendable (String) -> Bool = { $0 == "netpath" }
        let named = ConfigurationLoader.load(
            contents: "[agent]\ncontrol_group = \"netpath\"",
            file: "f.toml",
            groupExists: exists
        )
        #expect(try named.get().agent.controlGroup == "netpath")
        let empty = ConfigurationLoader.load(
            contents: "[agent]\ncontrol_group = \"\"",
            file: "f.toml",
            groupExists: exists
        )
        #expect(try empty.get().agent.controlGroup == nil)
        #expect(try ConfigurationLoader.load(contents: "", file: "f.toml").get().agent.controlGroup == nil)
    }

    @Test func aControlGroupMissingOnThisMachineIsAnErrorAtItsValue() {
        let text = "[agent]\nsettle = \"1s\"\ncontrol_group = \"netpath\""
        let result = ConfigurationLoader.load(contents: text, file: "f.toml", groupExists: { _ in false })
        guard case .failure(let errors) = result else {
            Issue.record("a missing group was accepted")
            return
        }
        #expect(
            errors.description
                == #"f.toml:3:17: error: control_group: no group named "netpath" on this machine; create it (groupadd --system netpath) or remove control_group"#
        )
        // Without a way to ask the machine (the pure layer alone), the name is taken as written.
        #expect(ConfigurationFixtures.load(text)?.agent.controlGroup == "netpath")
    }

    @Test(arguments: ["127.0.0.1:9479", "0.0.0.0:80", "[::1]:9479", "[::]:9479", ":9479", "[2001:db8::1]:65535"])
    func metricsAddressesTheAgentCanBindAreAccepted(_ address: String) throws {
        let configuration = try #require(ConfigurationFixtures.load("[agent]\nmetrics = \"\(address)\""))
        #expect(configuration.agent.metrics == address)
    }

    // MARK: - Durations

    @Test(arguments: [
        ("250ms", Duration.milliseconds(250)), ("30s", .seconds(30)), ("2m", .seconds(120)), ("1h", .seconds(3600)),
        ("1m30s", .seconds(90)), ("1h2m3s4ms", .milliseconds(3_723_004)), ("0", .zero), ("0ms", .zero),
    ])
    func durationsParse(_ text: String, _ expected: Duration) throws {
        #expect(try Duration(configuration: text) == expected)
    }

    @Test func theLongestDurationsAreAccepted() throws {
        let text = "[agent]\nhook_timeout = \"24h\"\nsettle = \"1h\"\n[[rule]]\nname = \"r\"\ntimeout = \"23h59m59s\""
        let configuration = try #require(ConfigurationFixtures.load(text))
        #expect(configuration.agent.hookTimeout == .seconds(86_400))
        #expect(configuration.agent.settle == .seconds(3600))
        #expect(configuration.rules.first?.timeout == .seconds(86_399))
    }

    @Test(arguments: ["", "-5s", "5", "5x", "5 s", "s", "1s1m", "1s1s", "1.5s", "99999999999999999999h", "5S"])
    func badDurationsAreRejected(_ text: String) {
        #expect(throws: Duration.ConfigurationSyntaxError.self) { try Duration(configuration: text) }
    }

    @Test(arguments: [
        (Duration.seconds(90), "1m30s"), (.milliseconds(250), "250ms"), (.zero, "0s"), (.seconds(7200), "2h"),
    ])
    func durationsFormatBack(_ duration: Duration, _ text: String) throws {
        #expect(duration.configurationText == text)
        #expect(try Duration(configuration: text) == duration)
    }
}
