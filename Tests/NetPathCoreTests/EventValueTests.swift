// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore
import Testing

/// `Event` shares its values between copies (copy on write): it must still behave as a plain
/// value, every property on its own.
@Suite("Event as a value")
struct EventValueTests {
    static let event = makeEvent()

    /// A new value each call: two calls share nothing.
    static func makeEvent() -> Event {
        Event(
            time: Date(timeIntervalSince1970: 1_795_319_100),
            name: .changed,
            scope: .interface,
            interface: "eth0",
            interfaceType: .wired,
            changes: ["mtu"]
        )
    }

    /// One change to each property, made on a copy.
    static var changes: [(String, (inout Event) -> Void)] {
        [
            ("time", { $0.time = Date(timeIntervalSince1970: 1) }),
            ("name", { $0.name = .up }),
            ("scope", { $0.scope = .path }),
            ("interface", { $0.interface = "eth9" }),
            ("interfaceType", { $0.interfaceType = .wifi }),
            ("policy", { $0.policy = "uplink" }),
            ("previousInterface", { $0.previousInterface = "eth1" }),
            ("startup", { $0.startup = true }),
            ("path", { $0.path = NetworkPath(policy: "default", status: .unsatisfied) }),
            ("interfaceState", { $0.interfaceState = Interface(index: 2, name: "eth0") }),
            ("address", { $0.address = "192.0.2.10/24" }),
            ("changes", { $0.changes.append("type") }),
            ("connectivity", { $0.connectivity = .portal }),
            ("previousConnectivity", { $0.previousConnectivity = .full }),
        ]
    }

    @Test("values built apart are equal, and hash alike, exactly when every property is")
    func equalityAndHashFollowTheValues() {
        let again = Self.makeEvent()
        #expect(again == Self.event)
        #expect(again.hashValue == Self.event.hashValue)
        #expect(Set([again, Self.event]).count == 1)
        for (property, change) in Self.changes {
            var changed = again
            change(&changed)
            #expect(changed != Self.event, "\(property) is not compared")
            var restored = changed
            if property == "changes" { restored.changes = Self.event.changes } else { restored = Self.event }
            #expect(restored == Self.event && restored.hashValue == Self.event.hashValue, "\(property)")
        }
    }

    @Test("print and dump show the values by their names")
    func mirrorShowsTheValues() {
        let labels = Mirror(reflecting: Self.event).children.compactMap(\.label)
        #expect(labels == Self.changes.map(\.0))
        var text = ""
        dump(Self.event, to: &text)
        #expect(text.contains("interface: Optional(\"eth0\")") && !text.contains("Storage"), "\(text)")
    }
}
