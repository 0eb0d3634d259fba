// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore
import NetPathProbe

/// The probes running, behind the lock that also serialises the result lines of concurrent probes.
let probeOutput = ConditionLock(0)

/// Reads requests and runs each on a thread of its own; at most ``limit`` at once.
enum ProbeServer {
    static let limit = 32

    static func run(mode: String) -> Never {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(channel, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            // The agent closed its end (or exited): so does the helper.
            guard count > 0 else { exit(0) }
            pending += buffer[0..<count]
            while let newline = pending.firstIndex(of: 0x0a) {
                let line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                handle(line, mode: mode)
            }
            if pending.count >= ProbeWire.maximumLineLength {
                fail("request line longer than \(ProbeWire.maximumLineLength) bytes")
            }
        }
    }

    private static func handle(_ line: [UInt8], mode: String) {
        let request: ProbeWire.Request
        do {
            request = try ProbeWire.decodeRequest(line)
        } catch {
            fail("malformed request: \(error)")
        }
        let refusal: String?
        switch request.method {
        case .http where mode != "http", .icmp where mode != "icmp": refusal = "this helper makes \(mode) probes only"
        default: refusal = nil
        }
        let busy = probeOutput.withLock { running in
            let busy = running >= limit
            if !busy && refusal == nil { running += 1 }
            return busy
        }
        if let reason = refusal ?? (busy ? "helper busy: \(limit) probes in flight" : nil) {
            send(ProbeWire.encode(id: request.id, .init(connectivity: .unknown, evidence: Array(reason.utf8))))
            return
        }
        let work: @Sendable () -> Void = {
            let result: ProbeWire.ProbeResultFields
            switch request.method {
            case .http(let uri, let response):
                result = HTTPProbe.run(
                    interface: request.interface,
                    uri: uri,
                    expected: response,
                    timeoutMilliseconds: request.timeoutMilliseconds
                )
            case .icmp(let hosts, let count, let reliability):
                result = ICMPProbe.run(
                    interface: request.interface,
                    hosts: hosts,
                    count: count,
                    reliability: reliability,
                    timeoutMilliseconds: request.timeoutMilliseconds
                )
            }
            probeOutput.withLock { $0 -= 1 }
            send(ProbeWire.encode(id: request.id, result))
        }
        // No thread to be had: run it here (late rather than never).
        if !OSThread.detach(work) { work() }
    }
}
