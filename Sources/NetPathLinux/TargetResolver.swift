import Glibc
import NetPathCore

/// Finds how each interface reaches a policy's target, by reading the mirrored route table:
/// no packet is sent and no socket is connected.
///
/// A host name is resolved with `getaddrinfo`, which blocks for as long as the name servers take
/// (seconds per attempt when they do not answer): call ``reachability(of:in:)`` and ``resolve(_:)``
/// only where blocking is fine, and use a ``HostResolver`` where it is not. An address literal is
/// used as is.
package struct TargetResolver: Sendable {
    package init() {}

    /// The reachability of `target` given `table`; resolves a host name on the caller's thread.
    package func reachability(of target: String, in table: KernelTable) -> SystemState.TargetReachability {
        switch lookup(target) {
        case .success(let addresses): reachability(of: addresses, in: table)
        case .failure(let error): .init(addresses: [], routes: [], resolution: .failed(reason: error.reason))
        }
    }

    /// The reachability of a target already resolved to `addresses` (the first one counts) given `table`.
    package func reachability(of addresses: [IPAddress], in table: KernelTable) -> SystemState.TargetReachability {
        guard let address = addresses.first else {
            return .init(addresses: [], routes: [], resolution: .failed(reason: "no address"))
        }
        let routes = table.routesCovering(address).map { index, route in
            SystemState.TargetRoute(
                interfaceIndex: index,
                prefixLength: route.destinationLength,
                metric: route.metric,
                gateway: route.nexthops.first { $0.interfaceIndex == index }?.gateway
            )
        }
        return .init(addresses: addresses, routes: routes.sorted { $0.interfaceIndex < $1.interfaceIndex })
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
