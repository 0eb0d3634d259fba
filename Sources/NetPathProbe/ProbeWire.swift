// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// The line format spoken over the socketpair between the agent and `netpath-probe`
/// (docs/probe-helper.md). Both sides treat what they read as untrusted input.
///
/// A message is one line of at most ``maximumLineLength`` bytes: words separated by one space,
/// ending in `\n`. Every word is escaped: the bytes `!`…`~` except `%` stand for themselves, any
/// other byte is `%XX` (upper-case hex), and the word `-` is the empty string (a literal `-` is
/// `%2D`). So a word never holds a space, a newline or a control character.
///
///     hello 1 UID GID CAPEFF MODE                       helper → agent, once, sandbox in place
///     fatal MESSAGE                                     helper → agent, setting up failed
///     probe ID IFNAME IFINDEX TIMEOUT_MS http URI RESPONSE
///     probe ID IFNAME IFINDEX TIMEOUT_MS icmp COUNT RELIABILITY HOST…
///     result ID STATE RTT_US LOSS_PPM PORTAL_URL EVIDENCE
package enum ProbeWire {
    /// The longest line either side writes or accepts, newline included.
    package static let maximumLineLength = 4096
    /// The most hosts one `icmp` request may name.
    package static let maximumHosts = 16
    /// The most echo requests per host.
    package static let maximumCount = 20
    /// The longest URL (request or portal), in bytes.
    package static let maximumURLLength = 2048
    /// The longest expected response body, in bytes.
    package static let maximumResponseLength = 1024
    /// The longest evidence text, in bytes.
    package static let maximumEvidenceLength = 512
    /// The longest a probe may take, as the wire carries it.
    package static let maximumTimeoutMilliseconds = 600_000

    /// A malformed line: what was wrong, with the offending text escaped.
    package struct Error: Swift.Error, Equatable, CustomStringConvertible {
        /// What was expected and what came instead.
        package var message: String
        package init(_ message: String) { self.message = message }
        package var description: String { message.escapingControlCharacters }
    }

    /// What the helper says once its sandbox is in place.
    package struct Hello: Equatable, Sendable {
        package var uid: UInt32
        package var gid: UInt32
        /// The effective capability set, as a bit mask (0: none).
        package var effectiveCapabilities: UInt64
        /// `http` or `icmp`: which probes this helper makes.
        package var mode: String

        package init(uid: UInt32, gid: UInt32, effectiveCapabilities: UInt64, mode: String) {
            self.uid = uid
            self.gid = gid
            self.effectiveCapabilities = effectiveCapabilities
            self.mode = mode
        }
    }

    /// One line the helper sends.
    package enum HelperMessage: Equatable, Sendable {
        case hello(Hello)
        case fatal(String)
        case result(id: UInt64, ProbeResultFields)
    }

    /// A result as the wire carries it, before the agent names the interface.
    package struct ProbeResultFields: Equatable, Sendable {
        package var connectivity: Connectivity
        package var roundTripMicroseconds: UInt64?
        /// Lost fraction in parts per million.
        package var lossPartsPerMillion: UInt32?
        package var portalURL: [UInt8]?
        package var evidence: [UInt8]

        package init(
            connectivity: Connectivity,
            roundTripMicroseconds: UInt64? = nil,
            lossPartsPerMillion: UInt32? = nil,
            portalURL: [UInt8]? = nil,
            evidence: [UInt8]
        ) {
            self.connectivity = connectivity
            self.roundTripMicroseconds = roundTripMicroseconds
            self.lossPartsPerMillion = lossPartsPerMillion
            self.portalURL = portalURL
            self.evidence = evidence
        }
    }

    /// A request as the helper reads it.
    package struct Request: Equatable, Sendable {
        package var id: UInt64
        /// The interface name's kernel bytes.
        package var interface: [UInt8]
        package var index: Int32
        package var timeoutMilliseconds: Int
        package var method: Method
    }

    /// How to probe, in bytes.
    package enum Method: Equatable, Sendable {
        case http(uri: [UInt8], response: [UInt8])
        case icmp(hosts: [[UInt8]], count: Int, reliability: Int)
    }

    // MARK: Escaping

    /// `bytes` as one word.
    package static func escape(_ bytes: some Collection<UInt8>) -> String {
        if bytes.isEmpty { return "-" }
        if bytes.count == 1, bytes.first == UInt8(ascii: "-") { return "%2D" }
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            if byte > 0x20 && byte < 0x7f && byte != UInt8(ascii: "%") {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xf)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of one word; throws on a byte that must have been escaped or a bad `%XX`.
    package static func unescape(_ word: some Collection<UInt8>, field: String) throws(Error) -> [UInt8] {
        if word.count == 1 && word.first == UInt8(ascii: "-") { return [] }
        var out: [UInt8] = []
        var iterator = word.makeIterator()
        while let byte = iterator.next() {
            guard byte > 0x20 && byte < 0x7f else { throw Error("\(field): byte \(byte) must be escaped") }
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw Error("\(field): expected two hex digits after %")
            }
            out.append(high << 4 | low)
        }
        return out
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    // MARK: Lines

    /// The words of `line` (without its newline); throws when it is too long or not words.
    package static func words(_ line: some Collection<UInt8>) throws(Error) -> [ArraySlice<UInt8>] {
        guard line.count < maximumLineLength else { throw Error("line longer than \(maximumLineLength) bytes") }
        let words = Array(line).split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard !words.contains(where: \.isEmpty) else { throw Error("empty word (two spaces, or a space at an end)") }
        return words
    }

    private static func number<T: FixedWidthInteger>(
        _ word: ArraySlice<UInt8>,
        _ field: String,
        _ range: ClosedRange<T>
    ) throws(Error) -> T {
        guard word.count <= 20, word.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let value = T(String(decoding: word, as: UTF8.self)), range.contains(value)
        else {
            throw Error(
                "\(field): expected a number in \(range.lowerBound)...\(range.upperBound), got \"\(String(decoding: word.prefix(24), as: UTF8.self))\""
            )
        }
        return value
    }

    private static func optionalNumber<T: FixedWidthInteger>(
        _ word: ArraySlice<UInt8>,
        _ field: String,
        _ range: ClosedRange<T>
    ) throws(Error) -> T? {
        if word.count == 1 && word.first == UInt8(ascii: "-") { return nil }
        return try number(word, field, range)
    }

    private static func text(_ word: ArraySlice<UInt8>) -> String { String(decoding: word, as: UTF8.self) }

    private static func bounded(
        _ word: ArraySlice<UInt8>,
        _ field: String,
        max: Int,
        nonEmpty: Bool = false
    ) throws(Error) -> [UInt8] {
        let bytes = try unescape(word, field: field)
        guard bytes.count <= max else { throw Error("\(field): longer than \(max) bytes") }
        guard !bytes.contains(0) else { throw Error("\(field): holds a NUL byte") }
        guard !nonEmpty || !bytes.isEmpty else { throw Error("\(field): empty") }
        return bytes
    }

    // MARK: Agent → helper

    /// The request line for `request`, newline included; nil when a field is over its limit.
    package static func encode(id: UInt64, _ request: ProbeRequest) -> String? {
        let name = InterfaceName.kernelBytes(request.interface)
        guard !name.isEmpty, name.count < 16 else { return nil }
        let ms =
            Int(request.timeout.components.seconds) * 1000
            + Int(request.timeout.components.attoseconds / 1_000_000_000_000_000)
        guard (1...maximumTimeoutMilliseconds).contains(ms) else { return nil }
        var words = ["probe", String(id), escape(name), String(request.index), String(ms)]
        switch request.method {
        case .http(let uri, let response):
            guard uri.utf8.count <= maximumURLLength, response.utf8.count <= maximumResponseLength else { return nil }
            words += ["http", escape(Array(uri.utf8)), escape(Array(response.utf8))]
        case .icmp(let hosts, let count, let reliability):
            guard (1...maximumHosts).contains(hosts.count), (1...maximumCount).contains(count),
                (1...hosts.count).contains(reliability), hosts.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 255 })
            else { return nil }
            words += ["icmp", String(count), String(reliability)] + hosts.map { escape(Array($0.utf8)) }
        }
        let line = words.joined(separator: " ") + "\n"
        return line.utf8.count <= maximumLineLength ? line : nil
    }

    /// Parses a request line (without its newline).
    package static func decodeRequest(_ line: some Collection<UInt8>) throws(Error) -> Request {
        let words = try words(line)
        guard words.count >= 7, text(words[0]) == "probe" else {
            throw Error("expected `probe ID IFNAME IFINDEX TIMEOUT_MS METHOD …`")
        }
        let id: UInt64 = try number(words[1], "ID", 0...UInt64.max)
        let name = try bounded(words[2], "IFNAME", max: 15, nonEmpty: true)
        guard !name.contains(UInt8(ascii: "/")) else { throw Error("IFNAME: holds a /") }
        let index: Int32 = try number(words[3], "IFINDEX", 0...Int32.max)
        let timeout: Int = try number(words[4], "TIMEOUT_MS", 1...maximumTimeoutMilliseconds)
        let method: Method
        switch text(words[5]) {
        case "http":
            guard words.count == 8 else { throw Error("http: expected URI RESPONSE") }
            method = .http(
                uri: try bounded(words[6], "URI", max: maximumURLLength, nonEmpty: true),
                response: try bounded(words[7], "RESPONSE", max: maximumResponseLength)
            )
        case "icmp":
            guard words.count >= 9, words.count - 8 <= maximumHosts else {
                throw Error("icmp: expected COUNT RELIABILITY HOST… (1 to \(maximumHosts) hosts)")
            }
            let count: Int = try number(words[6], "COUNT", 1...maximumCount)
            var hosts: [[UInt8]] = []
            for word in words[8...] { hosts.append(try bounded(word, "HOST", max: 255, nonEmpty: true)) }
            let reliability: Int = try number(words[7], "RELIABILITY", 1...hosts.count)
            method = .icmp(hosts: hosts, count: count, reliability: reliability)
        default:
            throw Error("METHOD: expected http or icmp")
        }
        return Request(id: id, interface: name, index: index, timeoutMilliseconds: timeout, method: method)
    }

    // MARK: Helper → agent

    /// The hello line, newline included.
    package static func encode(_ hello: Hello) -> String {
        "hello 1 \(hello.uid) \(hello.gid) \(String(hello.effectiveCapabilities, radix: 16)) \(escape(Array(hello.mode.utf8)))\n"
    }

    /// The fatal line, newline included (the message cut to the evidence limit).
    package static func encodeFatal(_ message: String) -> String {
        "fatal \(escape(Array(message.utf8).prefix(maximumEvidenceLength)))\n"
    }

    /// The result line, newline included; over-long URL and evidence are cut to their limits.
    package static func encode(id: UInt64, _ result: ProbeResultFields) -> String {
        let rtt = result.roundTripMicroseconds.map { String(min($0, 3_600_000_000)) } ?? "-"
        let loss = result.lossPartsPerMillion.map { String(min($0, 1_000_000)) } ?? "-"
        let portal = result.portalURL.map { escape($0.prefix(maximumURLLength)) } ?? "-"
        return
            "result \(id) \(result.connectivity.rawValue) \(rtt) \(loss) \(portal) \(escape(result.evidence.prefix(maximumEvidenceLength)))\n"
    }

    /// Parses a line from the helper (without its newline).
    package static func decodeHelperMessage(_ line: some Collection<UInt8>) throws(Error) -> HelperMessage {
        let words = try words(line)
        switch words.first.map(text) {
        case "hello":
            guard words.count == 6, text(words[1]) == "1" else { throw Error("expected `hello 1 UID GID CAPEFF MODE`") }
            guard words[4].count <= 16, let caps = UInt64(text(words[4]), radix: 16) else {
                throw Error("CAPEFF: expected a hex mask")
            }
            let mode = text(words[5])
            guard mode == "http" || mode == "icmp" else { throw Error("MODE: expected http or icmp") }
            return .hello(
                Hello(
                    uid: try number(words[2], "UID", 0...UInt32.max),
                    gid: try number(words[3], "GID", 0...UInt32.max),
                    effectiveCapabilities: caps,
                    mode: mode
                )
            )
        case "fatal":
            guard words.count == 2 else { throw Error("expected `fatal MESSAGE`") }
            let message = try bounded(words[1], "MESSAGE", max: maximumEvidenceLength)
            return .fatal(InterfaceName.string(fromKernel: message))
        case "result":
            guard words.count == 7 else {
                throw Error("expected `result ID STATE RTT_US LOSS_PPM PORTAL_URL EVIDENCE`")
            }
            let id: UInt64 = try number(words[1], "ID", 0...UInt64.max)
            // `unknown`: the helper could not make the probe (no ICMP socket, a bad URI, too busy).
            guard let state = Connectivity(rawValue: text(words[2])) else {
                throw Error("STATE: expected unknown, none, limited, portal or full")
            }
            let rtt: UInt64? = try optionalNumber(words[3], "RTT_US", 0...3_600_000_000)
            let loss: UInt32? = try optionalNumber(words[4], "LOSS_PPM", 0...1_000_000)
            let portal = try bounded(words[5], "PORTAL_URL", max: maximumURLLength)
            guard portal.isEmpty || state == .portal else { throw Error("PORTAL_URL: only a portal has one") }
            let evidence = try bounded(words[6], "EVIDENCE", max: maximumEvidenceLength, nonEmpty: true)
            return .result(
                id: id,
                ProbeResultFields(
                    connectivity: state,
                    roundTripMicroseconds: rtt,
                    lossPartsPerMillion: loss,
                    portalURL: portal.isEmpty ? nil : portal,
                    evidence: evidence
                )
            )
        default:
            throw Error("expected hello, fatal or result")
        }
    }
}
