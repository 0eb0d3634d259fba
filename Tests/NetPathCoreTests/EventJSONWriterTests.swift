// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import Testing

/// `EventJSON` writes what Foundation's encoder writes, byte for byte, and fails where it fails.
///
/// The reference is always Foundation's `JSONEncoder` as `JSONCoding.lineEncoder()` configures it
/// (`.sortedKeys, .withoutEscapingSlashes`), never `JSONCoding.line(_:)`, which may be the writer.
@Suite("Event JSON writer")
struct EventJSONWriterTests {
    let foundation = JSONCoding.lineEncoder()

    /// Foundation's line for `value`, or `nil` when it throws.
    func reference(_ value: some Encodable) -> String? {
        (try? foundation.encode(value)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The writer's line for `event`, or `nil` when it throws.
    func written(_ event: Event) -> String? {
        (try? EventJSON.lineBytes(event)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("thousands of generated events encode to Foundation's bytes, and fail where Foundation fails")
    func generatedEventsMatchFoundation() {
        // Each event has its own seed: a failure names the one to rerun with `EventGenerator(seed:)`.
        let base: UInt64 = 0x6e65_7470_6174_6831
        var failures = 0
        var thrown = 0
        for i in 0..<4000 {
            let seed = base &+ UInt64(i)
            var generator = EventGenerator(seed: seed)
            let event = generator.event()
            let expected = reference(event)
            let actual = written(event)
            if expected == nil { thrown += 1 }
            if expected != actual {
                failures += 1
                Issue.record(
                    "seed \(seed): writer and Foundation differ\n foundation: \(expected ?? "(threw)")\n writer:     \(actual ?? "(threw)")"
                )
                if failures >= 5 { break }
            }
        }
        // The generator's non-finite losses do reach both sides, but they are the exception.
        #expect((1...400).contains(thrown), "\(thrown) of 4000 events could not be encoded")
    }

    // MARK: Numbers and strings, one at a time

    @Test("doubles of every magnitude are written as Foundation writes them")
    func doublesMatchFoundation() throws {
        var samples: [Double] = [
            0, -0.0, 1, -1, 2, 0.5, 4.2, 12.5, 100, 1e15, 1e16, 1e17, 9_007_199_254_740_992, 9_007_199_254_740_994,
            123_456_789_012_345_680, 1e21, 1e22, 1e100, 1e300, -1e300, 0.1, 0.0001, 0.00001, 1e-5, 1.5e-7, 1e-300,
            .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude,
            -.greatestFiniteMagnitude, .ulpOfOne, .pi, 1 / 3, 2 / 3, 86_400_000,
        ]
        var random = SplitMix64(seed: 42)
        for _ in 0..<5000 {
            let bits = Double(bitPattern: random.next())
            if bits.isFinite { samples.append(bits) }
            samples.append(Double(Int64.random(in: -1_000_000...1_000_000, using: &random)))
            samples.append(Double.random(in: 0...1, using: &random))
            samples.append(Double.random(in: -1e6...1e6, using: &random))
        }
        for value in samples {
            var writer = JSONWriter()
            try writer.double(value, at: [])
            let expected = try #require(reference(value))
            #expect(String(decoding: writer.bytes, as: UTF8.self) == expected, "\(value.bitPattern)")
        }
    }

    @Test("NaN and the infinities throw as Foundation throws, with its coding path and message")
    func nonFiniteDoublesThrowLikeFoundation() throws {
        for value in [Double.nan, -.nan, .signalingNaN, .infinity, -.infinity] {
            var interface = Interface(index: 2, name: "eth0")
            interface.loss = value
            let interfaceEvent = Event(
                time: Sample.time,
                name: .carrierDown,
                scope: .interface,
                interface: "eth0",
                interfaceState: interface
            )
            let path = NetworkPath(status: .unsatisfied, unsatisfiedReason: .noInterface, loss: value)
            let pathEvent = Event(time: Sample.time, name: .unsatisfied, scope: .path, policy: "default", path: path)
            for event in [interfaceEvent, pathEvent] {
                let expected = try #require(throws: EncodingError.self) { try foundation.encode(event) }
                let actual = try #require(throws: EncodingError.self) { try EventJSON.lineBytes(event) }
                guard case .invalidValue(_, let expectedContext) = expected,
                    case .invalidValue(let actualValue, let actualContext) = actual
                else {
                    Issue.record("expected invalidValue errors, got \(expected) and \(actual)")
                    continue
                }
                #expect((actualValue as? Double)?.bitPattern == value.bitPattern)
                #expect(actualContext.codingPath.map(\.stringValue) == expectedContext.codingPath.map(\.stringValue))
                #expect(actualContext.debugDescription == expectedContext.debugDescription)
                // And so does the event's line on its way to a hook.
                #expect(throws: EncodingError.self) { try JSONCoding.lineBytes(event) }
            }
        }
    }

    @Test("integers at their limits are written as Foundation writes them")
    func integersMatchFoundation() throws {
        func check(_ value: some FixedWidthInteger & Encodable) throws {
            var writer = JSONWriter()
            writer.integer(value)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == (try #require(reference(value))))
        }
        for value in [Int.min, Int.min + 1, -10, -1, 0, 1, 9, 10, 99, 100, Int.max] { try check(value) }
        for value in [Int32.min, -1, 0, 1500, Int32.max] { try check(value) }
        for value in [UInt32.min, 1, 254, 65536, UInt32.max] { try check(value) }
    }

    @Test("every character below U+3000, and the notable ones above, is escaped as Foundation escapes it")
    func stringEscapingMatchesFoundation() throws {
        var scalars = (0..<0x3000).compactMap(Unicode.Scalar.init)
        scalars += [0xfeff, 0xfffd, 0xffff, 0x1_f600, 0x10_ffff].compactMap(Unicode.Scalar.init)
        for scalar in scalars {
            let text = "a" + String(Character(scalar)) + "/b"
            var writer = JSONWriter()
            writer.string(text)
            let expected = try #require(reference(text))
            #expect(String(decoding: writer.bytes, as: UTF8.self) == expected, "U+\(String(scalar.value, radix: 16))")
        }
    }

    @Test("what Foundation does to the characters that surprise: DEL, U+2028 and U+2029 stay, / is not escaped")
    func notableEscapes() throws {
        let text = "\u{7f}\u{2028}\u{2029}/\u{1}\u{1f}\u{8}\u{c}\"\\é"
        #expect(reference(text) == "\"\u{7f}\u{2028}\u{2029}/\\u0001\\u001f\\b\\f\\\"\\\\é\"")
        var writer = JSONWriter()
        writer.string(text)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == reference(text))
    }

    @Test("Foundation sorts keys by their UTF-8 bytes, which is the order the writer's keys are in")
    func foundationSortsKeysByUTF8Bytes() throws {
        // `_` (0x5F) sorts after upper case and before lower case; digits are not compared as
        // numbers; a prefix comes first; non-ASCII after ASCII.
        let keys = [
            "b", "a_b", "aB", "ab", "a10", "a2", "A", "é", "z", "interface", "interface_type", "interface_state",
        ]
        let dictionary = Dictionary(uniqueKeysWithValues: keys.map { ($0, 0) })
        let line = try #require(reference(dictionary))
        let expected = keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(
            expected == [
                "A", "a10", "a2", "aB", "a_b", "ab", "b", "interface", "interface_state", "interface_type", "z", "é",
            ]
        )
        #expect(line == "{" + expected.map { "\"\($0)\":0" }.joined(separator: ",") + "}")
    }

    // MARK: Golden lines, checked by hand

    @Test("a carrier-down interface event")
    func goldenCarrierDown() throws {
        let eth0 = Interface(
            index: 2,
            name: "eth0",
            type: .wired,
            driver: "e1000e",
            carrier: false,
            mac: "52:54:00:12:34:56",
            addresses: ["192.0.2.10/24", "fe80::5054:ff:fe12:3456/64"],
            defaultRoutes: [DefaultRoute(via: IPAddress("192.0.2.1"), metric: 100)],
            classifiedBy: ["arptype=1 (Ethernet) with a device (driver e1000e)"]
        )
        let event = Event(
            time: Sample.time.addingTimeInterval(0.5),
            name: .carrierDown,
            scope: .interface,
            interface: "eth0",
            interfaceType: .wired,
            interfaceState: eth0
        )
        let expected =
            #"{"event":"carrier-down","interface":"eth0","interface_state":{"addresses":[{"address":"192.0.2.10","family":4,"prefix_len":24,"scope":"global"},{"address":"fe80::5054:ff:fe12:3456","family":6,"prefix_len":64,"scope":"link"}],"admin_up":true,"carrier":false,"classified_by":["arptype=1 (Ethernet) with a device (driver e1000e)"],"connectivity":"unknown","constrained":false,"default_routes":[{"family":4,"gateway":"192.0.2.1","metric":100,"table":254}],"driver":"e1000e","index":2,"kind":"","loss":null,"mac":"52:54:00:12:34:56","metered":false,"metered_reason":"default","mtu":1500,"name":"eth0","oper_state":"lowerlayerdown","portal_url":null,"rtt_ms":null,"type":"wired"},"interface_type":"wired","policy":null,"previous_interface":null,"scope":"interface","startup":false,"time":"2026-11-22T03:45:00.500000Z","version":1}"#
        #expect(written(event) == expected)
        #expect(reference(event) == expected)
    }

    @Test("a satisfied path event with probed connectivity")
    func goldenPathEvent() throws {
        let wlan0 = NetworkPath.PathInterface(name: "wlan0", index: 3, type: .wifi)
        let wwan0 = NetworkPath.PathInterface(name: "wwan0", index: 4, type: .cellular, isMetered: true)
        let path = NetworkPath(
            policy: "default",
            status: .satisfied,
            primaryIPv4: wlan0,
            availableInterfaces: [wlan0, wwan0],
            supportsIPv4: true,
            supportsDNS: true,
            gateways: [IPAddress("10.0.3.1")],
            connectivity: .full,
            roundTrip: .microseconds(12_500),
            loss: 0
        )
        let event = Event(
            time: Sample.time,
            name: .satisfied,
            scope: .path,
            interface: "wlan0",
            interfaceType: .wifi,
            policy: "default",
            previousInterface: "eth0",
            path: path
        )
        let expected =
            #"{"event":"satisfied","interface":"wlan0","interface_type":"wifi","path":{"available_interfaces":["wlan0","wwan0"],"connectivity":"full","gateways":["10.0.3.1"],"interface_details":[{"index":3,"metered":false,"name":"wlan0","type":"wifi"},{"index":4,"metered":true,"name":"wwan0","type":"cellular"}],"is_constrained":false,"is_expensive":false,"loss":0,"policy":"default","portal_url":null,"primary":"wlan0","primary_ipv4":"wlan0","primary_ipv6":null,"rtt_ms":12.5,"status":"satisfied","supports_dns":true,"supports_ipv4":true,"supports_ipv6":false,"unsatisfied_reason":null},"policy":"default","previous_interface":"eth0","scope":"path","startup":false,"time":"2026-11-22T03:45:00.000000Z","version":1}"#
        #expect(written(event) == expected)
        #expect(reference(event) == expected)
    }

    @Test("an address event on a renamed interface whose name is not UTF-8, with every optional key")
    func goldenEscapes() throws {
        // The kernel's bytes `a 0xff " b`: the model writes the byte as `\xff`, JSON escapes the backslash and quote.
        let name = InterfaceName.string(fromKernel: [0x61, 0xff, 0x22, 0x62])
        #expect(name == #"a\xff"b"#)
        var state = Interface(index: 7, name: name, connectivity: .portal, portalURL: "http://portal/ä?a=1")
        state.connectivityEvidence = "HTTP 302 to http://portal/ä?a=1\tnext"
        state.loss = 1
        let address = InterfaceAddress(
            IPAddress("2001:db8::1"),
            prefixLength: 64,
            isTentative: true,
            isDADFailed: true,
            isDeprecated: true
        )
        let event = Event(
            time: Sample.time,
            name: .addressAdded,
            scope: .interface,
            interface: name,
            interfaceType: .other,
            previousInterface: "eth\u{2028}1",
            startup: true,
            interfaceState: state,
            address: address,
            changes: ["name", "default_routes"],
            connectivity: .portal,
            previousConnectivity: Connectivity.none
        )
        let expected =
            #"{"address":{"address":"2001:db8::1","dad_failed":true,"deprecated":true,"family":6,"prefix_len":64,"scope":"global","tentative":true},"changes":["name","default_routes"],"connectivity":"portal","event":"address-added","interface":"a\\xff\"b","interface_state":{"addresses":[],"admin_up":true,"carrier":true,"classified_by":[],"connectivity":"portal","connectivity_evidence":"HTTP 302 to http://portal/ä?a=1\tnext","constrained":false,"default_routes":[],"driver":"","index":7,"kind":"","loss":1,"mac":"","metered":false,"metered_reason":"default","mtu":1500,"name":"a\\xff\"b","oper_state":"up","portal_url":"http://portal/ä?a=1","rtt_ms":null,"type":"other"},"interface_type":"other","policy":null,"previous_connectivity":"none","previous_interface":"eth"#
            + "\u{2028}"
            + #"1","scope":"interface","startup":true,"time":"2026-11-22T03:45:00.000000Z","version":1}"#
        #expect(written(event) == expected)
        #expect(reference(event) == expected)
    }
}

/// A small, seeded generator (SplitMix64): the same seed gives the same events on every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// Events with every field, every enum case, `nil` and non-`nil` optionals, empty and full
/// arrays, and strings and numbers chosen to hit the encoder's special cases.
struct EventGenerator {
    var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &random) < probability }
    mutating func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
    mutating func maybe<T>(_ make: (inout Self) -> T) -> T? { chance(0.5) ? make(&self) : nil }
    mutating func array<T>(_ range: ClosedRange<Int>, _ make: (inout Self) -> T) -> [T] {
        (0..<Int.random(in: range, using: &random)).map { _ in make(&self) }
    }

    /// Pieces of strings: plain text, every JSON escape, the characters Foundation leaves alone
    /// that other encoders escape (DEL, U+2028, U+2029, `/`), C1 controls and non-ASCII.
    static let atoms: [String] =
        [
            "eth0", "a", "Z", "9", " ", "-", "_", ".", ":", "/", "//", "\"", "\\", "\\x", "é", "ü", "中", "😀", "🇩🇪",
            "e\u{301}", "\r\n",
        ]
        + (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }
        + [
            "\u{7f}", "\u{80}", "\u{85}", "\u{9f}", "\u{a0}", "\u{ad}", "\u{2028}", "\u{2029}", "\u{feff}", "\u{fffd}",
            "\u{10ffff}",
        ]

    mutating func string() -> String {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return pick(["", "eth0", "default", "HTTP 302 to http://portal.example/login?x=1&y=2"])
        default: return array(0...10) { $0.pick(Self.atoms) }.joined()
        }
    }

    /// An interface name as the model holds one: plain, or the string form of kernel bytes
    /// (escaped `\xNN` and `\\`), or any string (a name from a configuration or a decoded event).
    mutating func interfaceName() -> String {
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return pick(["eth0", "wlan0", "wwan0", "enp0s31f6", "wg0", "lo"])
        case 1: return InterfaceName.string(fromKernel: array(1...15) { UInt8.random(in: 1...255, using: &$0.random) })
        default: return string()
        }
    }

    mutating func address() -> IPAddress {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return IPAddress(bytes: array(4...4) { UInt8.random(in: 0...255, using: &$0.random) })!
        case 1: return IPAddress(bytes: array(16...16) { UInt8.random(in: 0...255, using: &$0.random) })!
        case 2:
            // Runs of zero groups: RFC 5952 compression, and IPv4-mapped tails.
            var bytes = array(16...16) { $0.chance(0.6) ? 0 : UInt8.random(in: 0...255, using: &$0.random) }
            if chance(0.2) { bytes.replaceSubrange(0..<12, with: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]) }
            return IPAddress(bytes: bytes)!
        default:
            return pick(
                ["192.0.2.1", "10.0.3.1", "::", "::1", "fe80::1", "2001:db8::1", "::ffff:192.0.2.1"].map {
                    IPAddress($0)!
                }
            )
        }
    }

    /// Finite doubles of every kind Foundation formats differently: integral, tiny, huge,
    /// negative zero, subnormal, and random bits.
    mutating func double() -> Double {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return pick([0, -0.0, 1, 0.5, 1e16, 1e-5, 1e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude])
        case 1: return Double(Int64.random(in: -1_000_000_000...1_000_000_000, using: &random))
        case 2: return Double.random(in: 0...1, using: &random)
        case 3: return Double.random(in: -1e20...1e20, using: &random)
        case 4:
            return Double.random(in: 0...1, using: &random)
                * pow(10, Double(Int.random(in: -320...300, using: &random)))
        default:
            let bits = Double(bitPattern: random.next())
            return bits.isFinite ? bits : 0.25
        }
    }

    /// A loss: usually in 0...1 or `nil`, sometimes any double, rarely one JSON cannot hold.
    mutating func loss() -> Double? {
        if chance(0.01) { return pick([.nan, .infinity, -.infinity]) }
        return chance(0.3) ? nil : (chance(0.5) ? Double.random(in: 0...1, using: &random) : double())
    }

    mutating func duration() -> Duration? {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return nil
        case 1: return .microseconds(Int64.random(in: 0...10_000_000, using: &random))
        case 2: return .milliseconds(Double.random(in: 0...1000, using: &random))
        default:
            return Duration(
                secondsComponent: Int64.random(in: -1_000_000_000...1_000_000_000, using: &random),
                attosecondsComponent: Int64.random(in: 0..<1_000_000_000_000_000_000, using: &random)
            )
        }
    }

    mutating func interfaceAddress() -> InterfaceAddress {
        InterfaceAddress(
            address(),
            prefixLength: chance(0.9) ? Int.random(in: 0...128, using: &random) : pick([-1, Int.min, Int.max]),
            scope: pick([.global, .site, .link, .host, .nowhere]),
            isTentative: chance(0.3),
            isDADFailed: chance(0.3),
            isDeprecated: chance(0.3)
        )
    }

    mutating func defaultRoute() -> DefaultRoute {
        DefaultRoute(
            family: pick([.ipv4, .ipv6]),
            gateway: maybe { $0.address() },
            metric: chance(0.5)
                ? UInt32.random(in: 0...1024, using: &random) : UInt32.random(in: 0...UInt32.max, using: &random),
            table: pick([DefaultRoute.mainTable, 0, 51820, UInt32.max])
        )
    }

    mutating func index() -> Int32 {
        chance(0.8) ? Int32.random(in: 1...64, using: &random) : pick([Int32.min, -1, 0, Int32.max])
    }

    mutating func interface() -> Interface {
        Interface(
            index: index(),
            name: interfaceName(),
            type: pick(InterfaceType.allCases),
            kind: chance(0.5) ? pick(["", "veth", "wlan", "wireguard"]) : string(),
            driver: chance(0.5) ? pick(["", "e1000e", "iwlwifi"]) : string(),
            adminUp: chance(0.5),
            carrier: chance(0.5),
            operState: pick([nil, .unknown, .notpresent, .down, .lowerlayerdown, .testing, .dormant, .up]),
            mtu: pick([0, 1280, 1500, 9000, 65536, UInt32.max]),
            mac: chance(0.7) ? pick(["", "52:54:00:12:34:56"]) : string(),
            isMetered: chance(0.5),
            meteredReason: pick([nil, .override, .cellular, .tether, .default]),
            isConstrained: chance(0.5),
            addresses: array(0...4) { $0.interfaceAddress() },
            defaultRoutes: array(0...3) { $0.defaultRoute() },
            classifiedBy: array(0...3) { $0.string() },
            connectivity: pick(Connectivity.allCases),
            portalURL: maybe { $0.string() },
            roundTrip: duration(),
            loss: loss(),
            connectivityEvidence: maybe { $0.string() }
        )
    }

    mutating func pathInterface() -> NetworkPath.PathInterface {
        NetworkPath.PathInterface(
            name: interfaceName(),
            index: index(),
            type: pick(InterfaceType.allCases),
            isMetered: chance(0.5)
        )
    }

    mutating func path() -> NetworkPath {
        let available = array(0...4) { $0.pathInterface() }
        return NetworkPath(
            policy: chance(0.7) ? pick(["default", "unmetered", "vpn"]) : string(),
            status: pick([.satisfied, .unsatisfied, .requiresConnection]),
            unsatisfiedReason: pick([
                nil, .noInterface, .noRoute, .onlyProhibitedTypes, .requiredTypeAbsent, .meteredDenied,
                .targetUnreachable, .targetUnresolved, .noConnectivity,
            ]),
            primary: chance(0.2)
                ? nil : (available.isEmpty || chance(0.2) ? maybe { $0.pathInterface() } : available[0]),
            primaryIPv4: maybe { $0.pathInterface() },
            primaryIPv6: maybe { $0.pathInterface() },
            availableInterfaces: available,
            isExpensive: pick([nil, true, false]),
            isConstrained: chance(0.5),
            supportsIPv4: chance(0.5),
            supportsIPv6: chance(0.5),
            supportsDNS: chance(0.5),
            gateways: array(0...3) { $0.address() },
            origin: pick([nil, .kernel, .agent]),
            connectivity: pick(Connectivity.allCases),
            portalURL: maybe { $0.string() },
            roundTrip: duration(),
            loss: loss()
        )
    }

    mutating func time() -> Date {
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return Sample.time
        case 1:
            return Date(
                timeIntervalSince1970: Double(Int64.random(in: 0...4_000_000_000_000_000, using: &random)) / 1e6
            )
        default: return Date(timeIntervalSince1970: Double.random(in: -1e10...1e11, using: &random))
        }
    }

    mutating func event() -> Event {
        let scope = pick(Event.Scope.allCases)
        // Mostly the shapes the tracker makes; sometimes any combination, which encodes all the same.
        let shaped = chance(0.7)
        return Event(
            time: time(),
            name: pick(Event.Name.allCases),
            scope: scope,
            interface: maybe { $0.interfaceName() },
            interfaceType: maybe { $0.pick(InterfaceType.allCases) },
            policy: maybe { $0.string() },
            previousInterface: maybe { $0.interfaceName() },
            startup: chance(0.5),
            path: shaped ? (scope == .path ? path() : nil) : maybe { $0.path() },
            interfaceState: shaped ? (scope == .interface ? interface() : nil) : maybe { $0.interface() },
            address: maybe { $0.interfaceAddress() },
            changes: chance(0.5)
                ? [] : array(1...3) { $0.chance(0.5) ? $0.pick(["mtu", "default_routes", "name"]) : $0.string() },
            connectivity: maybe { $0.pick(Connectivity.allCases) },
            previousConnectivity: maybe { $0.pick(Connectivity.allCases) }
        )
    }
}
