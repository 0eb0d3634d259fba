// SPDX-License-Identifier: Apache-2.0

import NetPathConfig
import NetPathCore
import Testing

/// `[connectivity]`, `require_connectivity` and a rule's `connectivity`, as the validator reads them.
struct ConnectivityConfigurationTests {
    @Test("no [connectivity] table: probing is off, as in the embedded default")
    func offByDefault() throws {
        #expect(Configuration.default.connectivity == nil)
        let configuration = try #require(ConfigurationFixtures.load("[agent]\n"))
        #expect(configuration.connectivity == nil)
    }

    @Test("an empty [connectivity] table turns probing on with the documented defaults")
    func defaults() throws {
        let settings = try #require(ConfigurationFixtures.load("[connectivity]\n")?.connectivity)
        #expect(settings == ConnectivitySettings())
        #expect(settings.method == .http(uri: ConnectivitySettings.defaultURI, response: ""))
        #expect(settings.interval == .seconds(300))
        #expect(settings.timeout == .seconds(5))
        #expect(settings.up == 1 && settings.down == 1)
        #expect(settings.interfaces.isEmpty)
    }

    @Test("every key is read")
    func everyKey() throws {
        let http = try #require(
            ConfigurationFixtures.load(
                """
                [connectivity]
                method = "http"
                uri = "http://192.0.2.1/check"
                response = "OK"
                interval = "1m"
                timeout = "3s"
                interfaces = ["eth*", "wwan0"]
                up = 2
                down = 3
                max_rtt = "500ms"
                max_loss = 0.25
                """
            )?.connectivity
        )
        #expect(http.method == .http(uri: "http://192.0.2.1/check", response: "OK"))
        #expect(http.interval == .seconds(60) && http.timeout == .seconds(3))
        #expect(http.interfaces.map(\.pattern) == ["eth*", "wwan0"])
        #expect(http.up == 2 && http.down == 3)
        #expect(http.maxRoundTrip == .milliseconds(500) && http.maxLoss == 0.25)

        let icmp = try #require(
            ConfigurationFixtures.load(
                """
                [connectivity]
                method = "icmp"
                hosts = ["192.0.2.1", "gw.example.net"]
                reliability = 2
                count = 3
                """
            )?.connectivity
        )
        #expect(icmp.method == .icmp(hosts: ["192.0.2.1", "gw.example.net"], count: 3, reliability: 2))
    }

    @Test("errors point at FILE:LINE:COL and say what was expected")
    func errors() {
        let errors = ConfigurationFixtures.errors(
            """
            [connectivity]
            method = "ping"
            interval = "0s"
            up = 0
            max_loss = 1.5
            uri = "ftp://example.net/"
            """,
            file: "/etc/netpath/netpath.toml"
        ).map(\.description)
        #expect(
            errors.contains {
                $0.hasPrefix(
                    "/etc/netpath/netpath.toml:2:10: error: method must be \"http\" or \"icmp\", found \"ping\""
                )
            },
            "\(errors)"
        )
        #expect(
            errors.contains { $0.hasPrefix("/etc/netpath/netpath.toml:3:12: error: interval must be longer than zero") }
        )
        #expect(
            errors.contains {
                $0.hasPrefix("/etc/netpath/netpath.toml:4:6: error: up must be an integer from 1 to 100")
            }
        )
        #expect(errors.contains { $0.hasPrefix("/etc/netpath/netpath.toml:5:12: error: max_loss must be a fraction") })
        #expect(
            errors.contains {
                $0.hasPrefix("/etc/netpath/netpath.toml:6:7: error: uri must be an http:// or https:// URL")
            }
        )
    }

    @Test("the other method's keys, a reliability above the hosts, a timeout above the interval are errors")
    func inconsistencies() {
        let icmpKeysOnHTTP = ConfigurationFixtures.errors("[connectivity]\nhosts = [\"192.0.2.1\"]\n").map(
            \.description
        )
        #expect(
            icmpKeysOnHTTP == [
                "netpath.toml:2:1: error: hosts applies to method = \"icmp\", but method is \"http\""
            ]
        )
        let reliability = ConfigurationFixtures.errors(
            "[connectivity]\nmethod = \"icmp\"\nhosts = [\"192.0.2.1\"]\nreliability = 2\n"
        ).map(\.description)
        #expect(
            reliability.first?.hasPrefix("netpath.toml:4:15: error: reliability is 2, but hosts lists only 1") == true
        )
        let timeout = ConfigurationFixtures.errors("[connectivity]\ninterval = \"2s\"\ntimeout = \"5s\"\n").map(
            \.description
        )
        #expect(
            timeout.first?.hasPrefix("netpath.toml:3:11: error: timeout (\"5s\") must not be longer than interval")
                == true
        )
        let unknown = ConfigurationFixtures.errors("[connectivity]\nintervall = \"2s\"\n").map(\.description)
        #expect(unknown.first?.contains("did you mean \"interval\"") == true, "\(unknown)")
    }

    @Test("require_connectivity is \"full\" or \"portal\"; without [connectivity] it warns")
    func requireConnectivity() throws {
        let configuration = try #require(
            ConfigurationFixtures.load("[[policy]]\nname = \"uplink\"\nrequire_connectivity = \"full\"\n")
        )
        #expect(configuration.policies.first?.requireConnectivity == .full)
        #expect(
            configuration.warnings.map(\.description).first?.hasPrefix(
                "netpath.toml:3:24: warning: policy \"uplink\" sets require_connectivity, but there is no [connectivity] table"
            ) == true
        )
        let errors = ConfigurationFixtures.errors("[[policy]]\nname = \"uplink\"\nrequire_connectivity = \"limited\"\n")
            .map(\.description)
        #expect(
            errors == [
                "netpath.toml:3:24: error: require_connectivity must be \"full\" or \"portal\", found \"limited\""
            ]
        )
    }

    @Test("a rule's connectivity lists states; a wrong one is an error at its place")
    func ruleConnectivity() throws {
        let configuration = try #require(
            ConfigurationFixtures.load(
                "[[rule]]\nname = \"portal\"\non = [\"connectivity-changed\"]\nconnectivity = [\"portal\"]\n"
            )
        )
        #expect(configuration.rules.first?.connectivity == [.portal])
        #expect(configuration.rules.first?.on == [.connectivityChanged])
        let errors = ConfigurationFixtures.errors("[[rule]]\nname = \"x\"\nconnectivity = [\"ful\"]\n").map(
            \.description
        )
        #expect(
            errors.first?.hasPrefix(
                "netpath.toml:3:17: error: unknown connectivity \"ful\" in connectivity; did you mean \"full\"?"
            ) == true,
            "\(errors)"
        )
    }
}
