// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore
import NetPathLinux
import Testing

/// Looking a target up without the network: literals, and what a failure says.
@Suite("TargetResolver")
struct TargetResolverTests {
    @Test("an address literal is its own answer, looked up by nobody")
    func literal() throws {
        #expect(try TargetResolver().lookup("2001:db8::7").get() == ["2001:db8::7"])
        #expect(TargetResolver().resolve("192.0.2.7") == ["192.0.2.7"])
    }

    @Test("a lookup error names the host and getaddrinfo's reason on one line, control characters escaped")
    func errorDescription() {
        let error = HostLookupError(host: "vpn\nexample.org", code: EAI_AGAIN)
        #expect(error.reason == String(cString: gai_strerror(EAI_AGAIN)))
        #expect(error.description == #"cannot resolve "vpn\nexample.org": "# + error.reason)
        #expect(HostLookupError(host: "a", code: 0).reason == "no address")
    }
}
