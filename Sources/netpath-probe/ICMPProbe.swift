// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore
import NetPathProbe

/// ICMP echo to each host, bound to the interface: ping sockets (SOCK_DGRAM, IPPROTO_ICMP or
/// ICMPV6) where `net.ipv4.ping_group_range` allows them, raw sockets (CAP_NET_RAW) otherwise.
enum ICMPProbe {
    /// One host's socket and what it sent and got back.
    final class Target {
        let name: String
        var address = sockaddr_storage()
        var addressLength: socklen_t = 0
        var family: Int32 = AF_INET
        var fd: Int32 = -1
        var raw = false
        var sentAt: [ContinuousClock.Instant?]
        var replies: [Duration] = []
        var resolved = false
        var sent = 0
        var error: String?

        init(name: String, count: Int) {
            self.name = name
            sentAt = Array(repeating: nil, count: count)
        }
    }

    static func run(interface: [UInt8], hosts: [[UInt8]], count: Int, reliability: Int, timeoutMilliseconds: Int)
        -> ProbeWire.ProbeResultFields
    {
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(timeoutMilliseconds)
        // Echo requests to one host are this far apart: all within the first half of the time.
        let spacing = min(Duration.seconds(1), .milliseconds(timeoutMilliseconds) / (2 * count))
        var token = [UInt8](repeating: 0, count: 16)
        for i in token.indices { token[i] = UInt8.random(in: 0...255) }
        let identifier = UInt16(token[0]) << 8 | UInt16(token[1])

        let targets = hosts.map { Target(name: InterfaceName.string(fromKernel: $0), count: count) }
        defer { for target in targets where target.fd >= 0 { close(target.fd) } }
        // Names get at most half the time; the echo requests the rest.
        let addresses = HostResolution.resolve(
            hosts.map { String(decoding: $0, as: UTF8.self) },
            within: max(1, timeoutMilliseconds / 2)
        )
        for (target, address) in zip(targets, addresses) {
            guard let address else { continue }
            target.family = address.family
            target.address = address.storage
            target.addressLength = address.length
            target.resolved = true
            open(target, interface: interface)
        }
        if let failed = targets.first(where: { $0.resolved && $0.fd < 0 }),
            targets.allSatisfy({ !$0.resolved || $0.fd < 0 })
        {
            return .init(
                connectivity: .unknown,
                evidence: Array("cannot probe \(failed.name): \(failed.error ?? "no socket")".utf8)
            )
        }

        var nextSend = 0
        var buffer = [UInt8](repeating: 0, count: 2048)
        while ContinuousClock.now < deadline {
            let now = ContinuousClock.now
            if nextSend < count && now >= start + spacing * nextSend {
                for (number, target) in targets.enumerated() where target.fd >= 0 {
                    send(target, sequence: nextSend, identifier: identifier, token: token + [UInt8(number)])
                }
                nextSend += 1
            }
            let everyReply = targets.allSatisfy { $0.fd < 0 || $0.replies.count == count }
            if everyReply && nextSend == count { break }
            let wake = nextSend < count ? min(deadline, start + spacing * nextSend) : deadline
            var fds = targets.filter { $0.fd >= 0 }.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), min(wake.pollTimeout(), 1000)) >= 0 || errno == EINTR else { break }
            // A raw socket sees every echo reply: the token's last byte says which host's it is.
            for (number, target) in targets.enumerated() where target.fd >= 0 {
                receive(target, into: &buffer, identifier: identifier, token: token + [UInt8(number)])
            }
        }
        let (state, roundTrip, loss, evidence) = ICMPVerdict.classify(
            targets.map { .init(name: $0.name, resolved: $0.resolved, sent: $0.sent, replies: $0.replies) },
            count: count,
            reliability: reliability
        )
        return .init(
            connectivity: state,
            roundTripMicroseconds: roundTrip.map { UInt64(max(0, $0.milliseconds * 1000)) },
            lossPartsPerMillion: UInt32(loss * 1_000_000),
            evidence: Array(evidence.utf8)
        )
    }

    private static func open(_ target: Target, interface: [UInt8]) {
        let proto = target.family == AF_INET6 ? Int32(IPPROTO_ICMPV6) : Int32(IPPROTO_ICMP)
        var fd = socket(
            target.family,
            Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            proto
        )
        if fd < 0 && (errno == EACCES || errno == EPERM) {
            fd = socket(
                target.family,
                Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                proto
            )
            target.raw = true
        }
        guard fd >= 0 else {
            target.error = "socket: \(String(cString: strerror(errno)))"
            return
        }
        let bound = interface.withUnsafeBufferPointer {
            setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, $0.baseAddress, socklen_t($0.count))
        }
        guard bound == 0 else {
            target.error = "SO_BINDTODEVICE: \(String(cString: strerror(errno)))"
            close(fd)
            return
        }
        target.fd = fd
    }

    private static func send(_ target: Target, sequence: Int, identifier: UInt16, token: [UInt8]) {
        let request: UInt8 = target.family == AF_INET6 ? 128 : 8
        var packet: [UInt8] =
            [request, 0, 0, 0, UInt8(identifier >> 8), UInt8(identifier & 0xff), 0, UInt8(sequence)] + token
        // The kernel sums ICMPv6 and ping sockets' packets; a raw IPv4 socket's are ours to sum.
        if target.family == AF_INET {
            let sum = checksum(packet)
            packet[2] = UInt8(sum >> 8)
            packet[3] = UInt8(sum & 0xff)
        }
        let sent = packet.withUnsafeBytes { bytes in
            withUnsafePointer(to: &target.address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(target.fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, target.addressLength)
                }
            }
        }
        if sent == packet.count {
            target.sentAt[sequence] = .now
            target.sent += 1
        }
    }

    private static func receive(_ target: Target, into buffer: inout [UInt8], identifier: UInt16, token: [UInt8]) {
        let reply: UInt8 = target.family == AF_INET6 ? 129 : 0
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(target.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { return }
            var packet = buffer[0..<count]
            // A raw IPv4 socket reads the IP header too.
            if target.raw && target.family == AF_INET {
                guard let first = packet.first else { continue }
                let headerLength = Int(first & 0x0f) * 4
                guard packet.count > headerLength else { continue }
                packet = packet.dropFirst(headerLength)
            }
            guard packet.count >= 8 + token.count, packet[packet.startIndex] == reply else { continue }
            let base = packet.startIndex
            // Ping sockets choose the identifier themselves and filter by it; raw ones see every reply.
            if target.raw && (UInt16(packet[base + 4]) << 8 | UInt16(packet[base + 5])) != identifier { continue }
            guard packet[(base + 8)..<(base + 8 + token.count)].elementsEqual(token) else { continue }
            let sequence = Int(packet[base + 7])
            guard sequence < target.sentAt.count, let sent = target.sentAt[sequence] else { continue }
            target.sentAt[sequence] = nil
            target.replies.append(.now - sent)
        }
    }

    private static func checksum(_ bytes: [UInt8]) -> UInt16 {
        var sum: UInt32 = 0
        var i = 0
        while i + 1 < bytes.count {
            sum += UInt32(bytes[i]) << 8 | UInt32(bytes[i + 1])
            i += 2
        }
        if i < bytes.count { sum += UInt32(bytes[i]) << 8 }
        while sum >> 16 != 0 { sum = (sum & 0xffff) + (sum >> 16) }
        return ~UInt16(sum)
    }
}
