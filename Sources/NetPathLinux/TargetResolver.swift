import Glibc
import NetPathCore

/// Finds how each interface reaches a policy's target, by reading the mirrored route table:
/// no packet is sent and no socket is connected.
///
/// A host name is resolved with `getaddrinfo`; an address literal is used as is.
public struct TargetResolver: Sendable {
    public init() {}

    /// The reachability of `target` given `table`.
    public func reachability(of target: String, in table: KernelTable) -> SystemState.TargetReachability {
        let addresses = resolve(target)
        guard let address = addresses.first else { return .init(addresses: [], routes: []) }
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

    /// The addresses of `host`: itself when it is an address literal, else what `getaddrinfo` says.
    public func resolve(_ host: String) -> [IPAddress] {
        if let literal = IPAddress(host) { return [literal] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0 else { return [] }
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
        return unique
    }
}
