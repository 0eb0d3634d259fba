// SPDX-License-Identifier: Apache-2.0

import NetPathCore
import Testing

@testable import NetPathProbe

/// The rule from an HTTP answer to a verdict (docs/probe-helper.md), case by case.
struct HTTPVerdictTests {
    static let url = Array("http://check.example/generate_204".utf8)
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test(
        "each answer gets the documented verdict",
        arguments: [
            (HTTPVerdict.Answer(status: 204), "", Connectivity.full),
            (
                HTTPVerdict.Answer(status: 200, body: Array("NetworkManager is online\n".utf8)),
                "NetworkManager is online", .full
            ),
            (HTTPVerdict.Answer(status: 204), "NetworkManager is online", .limited),
            (HTTPVerdict.Answer(status: 200, body: Array("<html>login</html>".utf8)), "", .portal),
            (
                HTTPVerdict.Answer(
                    status: 200,
                    contentType: Array("Text/HTML; charset=utf-8".utf8),
                    body: Array("log in".utf8)
                ), "ok", .portal
            ),
            (HTTPVerdict.Answer(status: 200, body: Array("nope".utf8)), "ok", .limited),
            (HTTPVerdict.Answer(status: 200, body: Array("ok".utf8), truncated: true), "ok", .limited),
            (HTTPVerdict.Answer(status: 302, location: Array("http://portal/login".utf8)), "", .portal),
            (HTTPVerdict.Answer(status: 302), "", .limited),
            (HTTPVerdict.Answer(status: 511), "", .portal),
            (
                HTTPVerdict.Answer(status: 500, contentType: Array("text/html".utf8), body: Array("<html>".utf8)), "",
                .limited
            ),
            (HTTPVerdict.Answer(status: 404), "", .limited),
            (HTTPVerdict.Answer(status: 204, body: Array("x".utf8)), "", .limited),
            // Status codes outside 100–599, even where the expected answer would otherwise match.
            (HTTPVerdict.Answer(status: 600), "", .limited),
            (HTTPVerdict.Answer(status: 99), "", .limited),
            (HTTPVerdict.Answer(status: 999, location: Array("http://portal/login".utf8)), "", .limited),
            (HTTPVerdict.Answer(status: 0), "", .limited),
        ]
    )
    func verdicts(answer: HTTPVerdict.Answer, expected: String, verdict: Connectivity) {
        let (state, portal, evidence) = HTTPVerdict.classify(answer, url: Self.url, expected: Self.bytes(expected))
        #expect(state == verdict, "\(evidence)")
        #expect((portal != nil) == (state == .portal))
    }

    @Test("a redirect's portal URL is its Location; a page's is the probed URL")
    func portalURLs() {
        let redirect = HTTPVerdict.classify(
            .init(status: 307, location: Self.bytes("https://login.hotel/")),
            url: Self.url,
            expected: []
        )
        #expect(redirect.portalURL == Self.bytes("https://login.hotel/"))
        #expect(redirect.evidence == "HTTP 307 to https://login.hotel/")
        let page = HTTPVerdict.classify(
            .init(status: 200, body: Self.bytes(" <!doctype html>")),
            url: Self.url,
            expected: []
        )
        #expect(page.portalURL == Self.url)
    }

    @Test("evidence escapes what the server sent")
    func evidenceIsEscaped() {
        let (_, _, evidence) = HTTPVerdict.classify(
            .init(status: 302, location: [0x68, 0xff, 0x1b, 0x0a]),
            url: Self.url,
            expected: []
        )
        #expect(evidence == "HTTP 302 to h\\xff\\x1b\\x0a")
    }
}
