// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import NetPathLinux
import NetPathPlugin
import TestSupport
import Testing

/// The route editor against the kernel, in a namespace.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct NetlinkRouteEditorTests {
    @Test("lists default routes and moves one to a free metric; a taken slot is refused, changing nothing")
    func changesMetrics() async throws {
        try await NetworkNamespace.with(["editor", "editorpeer"]) { namespaces in
            let (ns, peer) = (namespaces[0], namespaces[1])
            try ns.addVeth("up0", peer: "up0p", in: peer)
            try ns.addVeth("up1", peer: "up1p", in: peer)
            try ns.batch([
                "link set up0 up", "link set up1 up",
                "addr add 198.51.100.10/24 dev up0", "addr add 203.0.113.10/24 dev up1",
                "route add default via 198.51.100.1 dev up0 metric 600 onlink",
                "route add default via 203.0.113.1 dev up1 metric 100",
            ])
            let editor = try NetlinkRouteEditor(namespace: ns.name)
            let routes = try await editor.defaultRoutes()
            let up0 = try ns.index(of: "up0")
            #expect(routes.map(\.route.metric) == [100, 600])
            let wired = try #require(routes.first { $0.interfaceIndex == up0 })
            #expect(wired.route.gateway == IPAddress("198.51.100.1"))

            await #expect {
                try await editor.changeMetric(of: wired, to: 100)
            } throws: { ($0 as? RouteEditorError)?.code == .exists }
            #expect(try Routes.defaults("-4", in: ns) == ["up0": 600, "up1": 100])

            try await editor.changeMetric(of: wired, to: 50)
            #expect(try Routes.defaults("-4", in: ns) == ["up0": 50, "up1": 100])
            // Everything else about the route is kept: here the onlink flag.
            #expect(try ns.ip("route", "show", "default", "dev", "up0").contains("onlink"))

            await #expect {
                try await editor.changeMetric(of: wired, to: 70)  // still the old metric: gone
            } throws: { ($0 as? RouteEditorError)?.code == .notFound }
        }
    }

    @Test("a namespace that does not exist is a namespace error")
    func missingNamespace() throws {
        try Privileges.requireRoot()
        #expect(throws: NetlinkError.self) {
            try NetlinkRouteEditor(namespace: "np-missing-\(UInt32.random(in: 0...UInt32.max))")
        }
    }
}
