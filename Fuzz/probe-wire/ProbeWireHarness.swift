// SPDX-License-Identifier: Apache-2.0

import FuzzSupport
import NetPathCore
import NetPathProbe

/// Fuzzes ``ProbeWire``, the line format between netpathd and `netpath-probe`, both ways: each
/// input is read as a request (what the helper reads) and as a helper's message (what the agent
/// reads).
///
/// What decodes, encoded again by the side that writes it, is one line within
/// ``ProbeWire/maximumLineLength`` that decodes to the same value: a request through
/// ``ProbeWire/encode(id:_:)-(_,ProbeRequest)``, `hello` and `result` through their encoders,
/// and `fatal` to a `fatal` again.
@main
enum ProbeWireHarness {
    static func main() { Fuzzer.run(check) }

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let request = try? ProbeWire.decodeRequest(bytes) { check(request) }
        if let message = try? ProbeWire.decodeHelperMessage(bytes) { check(message) }
    }

    static func check(_ request: ProbeWire.Request) {
        // The agent's requests hold Strings: a request whose URI, body or hosts are not UTF-8
        // has no ProbeRequest to encode it from (the interface name has, escaped).
        let method: ProbeMethod
        switch request.method {
        case .http(let uri, let response):
            guard let uri = String(validating: uri, as: UTF8.self),
                let response = String(validating: response, as: UTF8.self)
            else { return }
            method = .http(uri: uri, response: response)
        case .icmp(let hosts, let count, let reliability):
            let names = hosts.compactMap { String(validating: $0, as: UTF8.self) }
            guard names.count == hosts.count else { return }
            method = .icmp(hosts: names, count: count, reliability: reliability)
        }
        let probe = ProbeRequest(
            interface: InterfaceName.string(fromKernel: request.interface),
            index: request.index,
            method: method,
            timeout: .milliseconds(request.timeoutMilliseconds)
        )
        guard let line = ProbeWire.encode(id: request.id, probe) else {
            return invariant(false, "a request the helper accepts cannot be encoded: \(request)")
        }
        let again = try? ProbeWire.decodeRequest(Self.line(line))
        invariant(again == request, "encoded and decoded again, a request changed: \(line)")
    }

    static func check(_ message: ProbeWire.HelperMessage) {
        let line: String
        switch message {
        case .hello(let hello): line = ProbeWire.encode(hello)
        case .result(let id, let fields): line = ProbeWire.encode(id: id, fields)
        case .fatal(let text):
            let again = try? ProbeWire.decodeHelperMessage(self.line(ProbeWire.encodeFatal(text)))
            guard case .fatal? = again else { return invariant(false, "a fatal message does not read back") }
            return
        }
        let again = try? ProbeWire.decodeHelperMessage(self.line(line))
        invariant(again == message, "encoded and decoded again, a message changed: \(line)")
    }

    /// An encoded line's bytes without its newline, checked to be one line within the limit.
    static func line(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        invariant(bytes.count <= ProbeWire.maximumLineLength, "an encoded line is too long: \(text)")
        invariant(bytes.last == UInt8(ascii: "\n"), "an encoded line does not end in a newline: \(text)")
        invariant(bytes.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") }, "an encoded line is two lines: \(text)")
        return Array(bytes.dropLast())
    }
}
