// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials
import NetPathCore
import Testing

/// What the dispatchers order and supersede events by.
struct EventSubjectTests {
    @Test("an interface event's subject is its index, written out in full for any index; a path event's its policy")
    func subjectsAreWrittenInFull() {
        var indices: [Int32] = [0, 1, 9, 10, 11, 99, 100, 999, 1_000, 12_345, 99_999, 100_000, .max, -1, .min]
        indices += (0..<200).map { _ in Int32.random(in: 0...200_000) }
        for index in indices {
            let event = Event(
                time: Date(timeIntervalSince1970: 0),
                name: .up,
                scope: .interface,
                interface: "eth0",
                interfaceState: Interface(index: index, name: "eth0")
            )
            #expect(event.subject == "interface:" + String(index))
        }
        #expect(Event(time: Date(), name: .up, scope: .interface, interface: "eth0").subject == "interface:eth0")
        #expect(Event(time: Date(), name: .satisfied, scope: .path, policy: "uplink").subject == "policy:uplink")
    }
}
