// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import Testing

@Suite("Event JSON")
struct EventJSONTests {
    /// The top-level keys docs/events.md promises on every event.
    static let eventKeys: Set<String> = [
        "version", "time", "event", "scope", "interface", "interface_type", "policy", "previous_interface",
        "startup",
    ]
    static let pathKeys: Set<String> = [
        "policy", "status", "unsatisfied_reason", "primary", "primary_ipv4", "primary_ipv6",
        "available_interfaces", "is_expensive", "is_constrained", "supports_ipv4", "supports_ipv6",
        "supports_dns", "gateways", "connectivity", "portal_url", "rtt_ms", "loss",
    ]
    static let interfaceKeys: Set<String> = [
        "name", "index", "type", "kind", "driver", "admin_up", "carrier", "oper_state", "mtu", "mac", "metered",
        "metered_reason", "addresses", "default_routes", "classified_by", "connectivity", "portal_url", "rtt_ms",
        "loss",
    ]

    /// Every kind of event the tracker produces for a realistic two-uplink box.
    static let events: [Event] = {
        let eth0 = Sample.uplink(2, "eth0", .wired, metric: 100, ipv6: true)
        var wlan0 = Sample.wlan0(metric: 600)
        wlan0.mac = "aa:bb:cc:dd:ee:ff"
        wlan0.driver = "iwlwifi"
        wlan0.kind = "wlan"
        wlan0.classifiedBy = ["sysfs wireless/", "DEVTYPE=wlan"]
        let wwan0 = Interface(
            index: 4,
            name: "wwan0",
            type: .cellular,
            isMetered: true,
            addresses: [InterfaceAddress("2001:db8:4::9", prefixLength: 64, isTentative: true)]
        )
        var tracker = PathTracker(policies: [.default, PathPolicy(name: "unmetered", metered: .deny)])
        var all = tracker.start(
            with: SystemState(interfaces: [Sample.loopback, eth0], dnsServers: ["127.0.0.53"]),
            at: Sample.time
        )
        var moved = eth0
        moved.defaultRoutes = [DefaultRoute(via: Sample.gateway4(2), metric: 900)]
        moved.mtu = 1400
        all += tracker.update(
            to: SystemState(interfaces: [moved, wlan0, wwan0]),
            at: Sample.time.addingTimeInterval(0.25)
        )
        all += tracker.update(to: SystemState(interfaces: []), at: Sample.time.addingTimeInterval(2))
        return all
    }()

    private func object(_ event: Event) throws -> [String: Any] {
        let data = try JSONCoding.lineEncoder().encode(event)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func sampleCoversEveryEventName() {
        let names = Set(Self.events.map(\.name))
        #expect(names == [.up, .down, .satisfied, .unsatisfied, .changed, .added, .removed, .carrierUp, .addressAdded])
    }

    @Test(arguments: events)
    func eventSurvivesEncodeAndDecode(_ event: Event) throws {
        let data = try JSONCoding.lineEncoder().encode(event)
        let decoded = try JSONDecoder().decode(Event.self, from: data)
        #expect(decoded == event)
        // And re-encoding gives the same bytes, so relays do not rewrite events.
        #expect(try JSONCoding.lineEncoder().encode(decoded) == data)
    }

    @Test(arguments: events)
    func eventHasExactlyTheDesignKeys(_ event: Event) throws {
        let keys = Set(try object(event).keys)
        var expected = Self.eventKeys
        expected.insert(event.scope == .path ? "path" : "interface_state")
        if event.address != nil { expected.insert("address") }
        if !event.changes.isEmpty { expected.insert("changes") }
        #expect(keys == expected)
    }

    @Test(arguments: events)
    func nestedObjectsUseSnakeCaseKeys(_ event: Event) throws {
        let json = try object(event)
        if let path = json["path"] as? [String: Any] {
            #expect(Self.pathKeys.isSubset(of: path.keys))
        }
        if let state = json["interface_state"] as? [String: Any] {
            #expect(Self.interfaceKeys.isSubset(of: state.keys))
            for address in state["addresses"] as? [[String: Any]] ?? [] {
                #expect(Set(["family", "address", "prefix_len", "scope"]).isSubset(of: address.keys))
            }
            for route in state["default_routes"] as? [[String: Any]] ?? [] {
                #expect(Set(["family", "gateway", "metric", "table"]).isSubset(of: route.keys))
            }
        }
    }

    @Test func pathEventFieldsHaveTheirDesignValues() throws {
        let event = try #require(Self.events.first { $0.scope == .path && $0.name == .changed })
        let json = try object(event)
        #expect(json["version"] as? Int == 1)
        #expect(json["event"] as? String == "changed")
        #expect(json["scope"] as? String == "path")
        #expect(json["policy"] as? String == "default")
        #expect(json["interface"] as? String == "wlan0")
        #expect(json["interface_type"] as? String == "wifi")
        #expect(json["previous_interface"] as? String == "eth0")
        #expect(json["startup"] as? Bool == false)
        #expect(json["time"] as? String == "2026-11-22T03:45:00.250000Z")
        let path = try #require(json["path"] as? [String: Any])
        #expect(path["status"] as? String == "satisfied")
        #expect(path["primary"] as? String == "wlan0")
        #expect(path["available_interfaces"] as? [String] == ["wlan0", "eth0"])
        #expect(path["gateways"] as? [String] == ["10.0.3.1"])
    }

    @Test func unsatisfiedPathEventHasNullInterfaceAndReason() throws {
        let event = try #require(Self.events.last { $0.scope == .path && $0.name == .unsatisfied })
        let json = try object(event)
        #expect(json["interface"] is NSNull)
        #expect(json["interface_type"] is NSNull)
        let path = try #require(json["path"] as? [String: Any])
        #expect(path["status"] as? String == "unsatisfied")
        #expect(path["unsatisfied_reason"] as? String == "no-interface")
        #expect(path["primary"] is NSNull)
    }

    @Test func startupEventsSayStartup() throws {
        let event = try #require(Self.events.first)
        #expect(try object(event)["startup"] as? Bool == true)
    }

    @Test func interfaceEventCarriesTheInterfaceState() throws {
        let event = try #require(Self.events.first { $0.name == .added && $0.interface == "wlan0" })
        let json = try object(event)
        #expect(json["interface_type"] as? String == "wifi")
        #expect(json["policy"] is NSNull)
        let state = try #require(json["interface_state"] as? [String: Any])
        #expect(state["mac"] as? String == "aa:bb:cc:dd:ee:ff")
        #expect(state["admin_up"] as? Bool == true)
        #expect(state["oper_state"] as? String == "up")
        #expect(state["metered_reason"] as? String == "default")
        #expect(state["classified_by"] as? [String] == ["sysfs wireless/", "DEVTYPE=wlan"])
    }

    @Test func timeIsUTCWithMicroseconds() throws {
        for event in Self.events {
            let time = try #require(try object(event)["time"] as? String)
            #expect(time.wholeMatch(of: #/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z/#) != nil, "\(time)")
        }
    }

    @Test func lineEncodingIsOneLineWithSortedKeys() throws {
        for event in Self.events {
            let line = try JSONCoding.line(event)
            #expect(!line.contains("\n"))
            #expect(line.hasPrefix(#"{"changes":"#) || line.hasPrefix(#"{"address":"#) || line.hasPrefix(#"{"event":"#))
        }
    }

    @Test("a connectivity-changed event has connectivity and previous_connectivity, and survives a round trip")
    func connectivityChangedShape() throws {
        var eth0 = Sample.eth0()
        eth0.connectivity = .portal
        eth0.portalURL = "http://portal.example/login"
        eth0.roundTrip = .milliseconds(4.2)
        eth0.loss = 0
        eth0.connectivityEvidence = "HTTP 302 to http://portal.example/login"
        let event = Event(
            time: Sample.time,
            name: .connectivityChanged,
            scope: .interface,
            interface: "eth0",
            interfaceType: .wired,
            interfaceState: eth0,
            connectivity: .portal,
            previousConnectivity: .full
        )
        let json = try object(event)
        #expect(Set(json.keys) == Self.eventKeys.union(["interface_state", "connectivity", "previous_connectivity"]))
        #expect(json["connectivity"] as? String == "portal")
        #expect(json["previous_connectivity"] as? String == "full")
        let state = try #require(json["interface_state"] as? [String: Any])
        #expect(state["portal_url"] as? String == "http://portal.example/login")
        #expect(state["rtt_ms"] as? Double == 4.2)
        #expect(state["connectivity_evidence"] as? String == "HTTP 302 to http://portal.example/login")
        let data = try JSONCoding.lineEncoder().encode(event)
        #expect(try JSONDecoder().decode(Event.self, from: data) == event)
    }

    /// The ```json blocks of docs/events.md that are whole events.
    static func documentedEvents() throws -> [[String: Any]] {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/events.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        // Fragments (a `"kernel_routes": […]` member) are not whole objects: skipped.
        return text.components(separatedBy: "```json\n").dropFirst().compactMap { block in
            let body = block.components(separatedBy: "\n```").first ?? ""
            let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
            return object?["version"] == nil ? nil : object
        }
    }

    /// Every key path of a JSON value, as `a.b.c` (array elements as `a[]`).
    static func keyPaths(_ value: Any, _ prefix: String = "") -> Set<String> {
        if let object = value as? [String: Any] {
            return object.reduce(into: Set<String>()) { paths, member in
                let path = prefix.isEmpty ? member.key : "\(prefix).\(member.key)"
                paths.insert(path)
                paths.formUnion(keyPaths(member.value, path))
            }
        }
        if let array = value as? [Any] {
            return array.reduce(into: Set<String>()) { $0.formUnion(keyPaths($1, prefix + "[]")) }
        }
        return []
    }

    @Test("every event example in docs/events.md decodes, and encodes back to exactly its keys")
    func documentedShapesMatch() throws {
        let examples = try Self.documentedEvents()
        #expect(examples.count >= 3, "found \(examples.count) event examples in docs/events.md")
        for example in examples {
            let data = try JSONSerialization.data(withJSONObject: example)
            let event = try JSONDecoder().decode(Event.self, from: data)
            let encoded = try object(event)
            #expect(
                Self.keyPaths(encoded) == Self.keyPaths(example),
                "\(event.name): encoded has \(Self.keyPaths(encoded).subtracting(Self.keyPaths(example)).sorted()) more, docs have \(Self.keyPaths(example).subtracting(Self.keyPaths(encoded)).sorted()) more"
            )
        }
    }

    @Test func unsupportedVersionIsRejected() throws {
        var json = try object(Self.events[0])
        json["version"] = 2
        let data = try JSONSerialization.data(withJSONObject: json)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Event.self, from: data) }
    }

    @Test func malformedTimeIsRejected() throws {
        var json = try object(Self.events[0])
        json["time"] = "yesterday"
        let data = try JSONSerialization.data(withJSONObject: json)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Event.self, from: data) }
    }
}
