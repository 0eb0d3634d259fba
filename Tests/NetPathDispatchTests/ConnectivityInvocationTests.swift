// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import Testing

@testable import NetPathDispatch

/// What hooks of both dialects get for connectivity: the native variables, and NetworkManager's
/// connectivity-change.
struct ConnectivityInvocationTests {
    static func interfaceEvent(_ new: Connectivity, from old: Connectivity) -> Event {
        var eth0 = Interface(index: 2, name: "eth0", type: .wired, addresses: ["192.0.2.10/24"])
        eth0.connectivity = new
        if new == .portal { eth0.portalURL = "http://portal.test/login" }
        return Event(
            time: Date(),
            name: .connectivityChanged,
            scope: .interface,
            interface: "eth0",
            interfaceType: .wired,
            interfaceState: eth0,
            connectivity: new,
            previousConnectivity: old
        )
    }

    static func pathEvent(_ new: Connectivity, from old: Connectivity) -> Event {
        var path = NetworkPath(status: .satisfied, availableInterfaces: [.init(name: "eth0", index: 2, type: .wired)])
        path.connectivity = new
        if new == .portal { path.portalURL = "http://portal.test/login" }
        return Event(
            time: Date(),
            name: .connectivityChanged,
            scope: .path,
            interface: "eth0",
            interfaceType: .wired,
            policy: "default",
            path: path,
            connectivity: new,
            previousConnectivity: old
        )
    }

    @Test("connectivity-changed on an interface: NETPATH_CONNECTIVITY, the previous state and the portal's URL")
    func nativeInterface() throws {
        let invocation = HookInvocation(
            hook: "10-x",
            event: Self.interfaceEvent(.portal, from: .full),
            rule: nil,
            timeout: .seconds(1)
        )
        #expect(invocation.arguments == ["10-x", "eth0", "connectivity-changed"])
        #expect(invocation.environment["NETPATH_CONNECTIVITY"] == "portal")
        #expect(invocation.environment["NETPATH_PREVIOUS_CONNECTIVITY"] == "full")
        #expect(invocation.environment["NETPATH_PORTAL_URL"] == "http://portal.test/login")
    }

    @Test("other events carry the current connectivity, no previous state, and no URL unless a portal")
    func nativeOtherEvents() throws {
        var event = Self.pathEvent(.full, from: .none)
        event.name = .changed
        event.connectivity = nil
        event.previousConnectivity = nil
        let invocation = HookInvocation(hook: "10-x", event: event, rule: nil, timeout: .seconds(1))
        #expect(invocation.environment["NETPATH_CONNECTIVITY"] == "full")
        #expect(invocation.environment["NETPATH_PREVIOUS_CONNECTIVITY"] == "")
        #expect(invocation.environment["NETPATH_PORTAL_URL"] == "")
        #expect(Set(invocation.environment.keys) == Set(HookInvocation.environmentNames))
    }

    @Test(
        "NetworkManager scripts get connectivity-change for a path, with an empty interface and CONNECTIVITY_STATE only"
    )
    func networkManagerConnectivityChange() throws {
        for (state, spelled) in [
            (Connectivity.none, "NONE"), (.limited, "LIMITED"), (.portal, "PORTAL"), (.full, "FULL"),
            (.unknown, "UNKNOWN"),
        ] {
            let invocation = try #require(
                NetworkManagerInvocation.invocation(
                    script: "90-chrony",
                    event: Self.pathEvent(state, from: .full),
                    timeout: .seconds(1)
                )
            )
            #expect(invocation.arguments == ["90-chrony", "", "connectivity-change"])
            #expect(
                invocation.environment == [
                    "CONNECTIVITY_STATE": spelled, "NM_DISPATCHER_ACTION": "connectivity-change",
                    "PATH": HookInvocation.path,
                ]
            )
        }
        // The interface's own change is no NetworkManager action: connectivity is not per device there.
        #expect(NetworkManagerInvocation.Action(Self.interfaceEvent(.portal, from: .full)) == nil)
    }
}
