// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore

/// Finds how each interface reaches a policy's target, with the routes the kernel answers for
/// it (``NetlinkEngine/targetRoutes(to:)``: `ip route get`, `ip rule` applied): no packet is sent
/// and no socket is connected.
///
/// A host name is resolved with `getaddrinfo`, which blocks for as long as the name servers take
/// (seconds per attempt when they do not answer): call `reachability(of:routes:)`
/// and ``resolve(_:)`` only where blocking is fine, and use a ``HostResolver`` where it is not.
/// An address literal is used as is.
package struct TargetResolver: Sendable {
    /// A resolver; it keeps no state.
    package init() {}

    /// The reachability of `target`, with `routes` answering for its address; resolves a host
    /// name on the caller's thread.
    package func reachability(
        of target: String,
        routes: (IPAddress) -> [SystemState.TargetRoute]
    ) -> SystemState.TargetReachability {
        switch lookup(target) {
        case .success(let addresses): reachability(of: addresses, routes: routes)
        case .failure(let error): .init(addresses: [], routes: [], resolution: .failed(reason: error.reason))
        }
    }

    /// The reachability of a target already resolved to `addresses` (the first one counts), with
    /// `routes` answering for that address.
    package func reachability(
        of addresses: [IPAddress],
        routes: (IPAddress) -> [SystemState.TargetRoute]
    ) -> SystemState.TargetReachability {
        guard let address = addresses.first else {
            return .init(addresses: [], routes: [], resolution: .failed(reason: "no address"))
        }
        return .init(addresses: addresses, routes: routes(address).sorted { $0.interfaceIndex < $1.interfaceIndex })
    }

    /// The addresses of `host`: itself when it is an address literal, else what `getaddrinfo`
    /// says; empty when it fails.
    package func resolve(_ host: String) -> [IPAddress] {
        (try? lookup(host).get()) ?? []
    }

    /// The addresses of `host` (itself when it is an address literal), or why there are none.
    /// Blocks while `getaddrinfo` waits for the name servers.
    package func lookup(_ host: String) -> Result<[IPAddress], HostLookupError> {
        if let literal = IPAddress(host) { return .success([literal]) }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, nil, &hints, &result)
        guard code == 0 else { return .failure(HostLookupError(host: host, code: code)) }
        defer { freeaddrinfo(result) }
        var addresses: [IPAddress] = []
        var cursor = result
        while let info = cursor {
            if let sa = info.pointee.ai_addr {
                switch Int32(sa.pointee.sa_family) {
                case AF_INET:
                    sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                        var raw = sin.pointee.sin_addr
                        let bytes = withUnsafeBytes(of: &raw) { Array($0) }
                        if let address = IPAddress(bytes: bytes) { addresses.append(address) }
                    }
                case AF_INET6:
                    sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                        var raw = sin6.pointee.sin6_addr
                        let bytes = withUnsafeBytes(of: &raw) { Array($0) }
                        if let address = IPAddress(bytes: bytes) { addresses.append(address) }
                    }
                default:
                    break
                }
            }
            cursor = info.pointee.ai_next
        }
        var unique: [IPAddress] = []
        for address in addresses where !unique.contains(address) { unique.append(address) }
        return unique.isEmpty ? .failure(HostLookupError(host: host, code: 0)) : .success(unique)
    }
}
