// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore
import Testing

/// Which later event makes a queued one obsolete (``Event/supersedes(_:)``), the table both
/// dispatchers drop by.
struct EventObsolescenceTests {
    static func interface(_ name: Event.Name, _ interface: String, index: Int32 = 7) -> Event {
        Event(
            time: Date(timeIntervalSince1970: 0),
            name: name,
            scope: .interface,
            interface: interface,
            interfaceType: .wired,
            interfaceState: Interface(index: index, name: interface, type: .wired)
        )
    }

    static func path(_ name: Event.Name, policy: String = "default", primary: String?) -> Event {
        Event(
            time: Date(timeIntervalSince1970: 0),
            name: name,
            scope: .path,
            interface: primary,
            policy: policy,
            path: NetworkPath(
                policy: policy,
                status: primary == nil ? .unsatisfied : .satisfied,
                availableInterfaces: primary.map { [.init(name: $0, index: 3, type: .wifi)] } ?? []
            )
        )
    }

    @Test("a later up/down supersedes a queued up/down of the same interface, never another's")
    func supersession() {
        let up = Self.interface(.up, "eth0")
        let down = Self.interface(.down, "eth0")
        #expect(down.supersedes(up))
        #expect(up.supersedes(down))
        #expect(!down.supersedes(Self.interface(.up, "eth1", index: 8)))
        #expect(Self.interface(.carrierUp, "eth0").supersedes(Self.interface(.carrierDown, "eth0")))
        #expect(!Self.interface(.carrierUp, "eth0").supersedes(down))
        #expect(!Self.interface(.removed, "eth0").supersedes(Self.interface(.added, "eth0")))
        #expect(!Self.interface(.up, "eth0").supersedes(Self.interface(.addressAdded, "eth0")))
        let satisfied = Self.path(.satisfied, primary: "eth0")
        let unsatisfied = Self.path(.unsatisfied, primary: nil)
        #expect(unsatisfied.supersedes(satisfied))
        #expect(!Self.path(.changed, primary: "wlan0").supersedes(satisfied), "a rule on satisfied must not lose it")
        #expect(unsatisfied.supersedes(Self.path(.changed, primary: "wlan0")))
        #expect(!unsatisfied.supersedes(Self.path(.satisfied, policy: "other", primary: "eth0")))
    }
}
