// make bench: what encoding one event's JSON costs, with netpath's own line encoder and with
// Foundation's JSONEncoder configured to write the same bytes (issue 13: the hand-written encoder
// stays only if this matters for a measured target; BENCHMARKS.md compares it with the hook-start
// budget). Prints one JSON object on stdout.
import FoundationEssentials
import NetPathCore

#if canImport(Glibc)
    import Glibc
#endif

/// The events a hook most often gets: a link's carrier-up with two addresses and default routes,
/// and a path event.
let interface = Interface(
    index: 7,
    name: "eth0",
    type: .wired,
    kind: "veth",
    carrier: true,
    mtu: 1500,
    addresses: [InterfaceAddress(cidr: "192.0.2.10/24")!, InterfaceAddress(cidr: "2001:db8::10/64")!],
    defaultRoutes: [.init(via: IPAddress("192.0.2.1")), .init(via: IPAddress("2001:db8::1"))]
)
let linkEvent = Event(
    time: Date(),
    name: .carrierUp,
    scope: .interface,
    interface: "eth0",
    interfaceType: .wired,
    interfaceState: interface
)
let pathEvent = Event(
    time: Date(),
    name: .satisfied,
    scope: .path,
    interface: "eth0",
    interfaceType: .wired,
    policy: "default",
    path: NetworkPath(
        policy: "default",
        status: .satisfied,
        availableInterfaces: [NetworkPath.PathInterface(interface)]
    )
)

func nanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// Median of `rounds` rounds of `perRound` encodings each, in µs per encoding.
func measure(rounds: Int = 15, perRound: Int = 400, _ encode: () throws -> [UInt8]) rethrows -> Double {
    var perEncoding: [Double] = []
    for _ in 0..<rounds {
        let start = nanoseconds()
        for _ in 0..<perRound { _ = try encode() }
        perEncoding.append(Double(nanoseconds() - start) / Double(perRound) / 1000)
    }
    return perEncoding.sorted()[rounds / 2]
}

let foundation = JSONCoding.lineEncoder()
var results: [String: [String: Double]] = [:]
for (name, event) in [("interface", linkEvent), ("path", pathEvent)] {
    // Same bytes, or the comparison means nothing.
    let ours = try JSONCoding.lineBytes(event)
    let theirs = Array(try foundation.encode(event))
    guard ours == theirs else {
        print("netpath-json-bench: the encoders disagree on the \(name) event")
        exit(1)
    }
    results[name] = [
        "netpath_us": try measure { try JSONCoding.lineBytes(event) },
        "foundation_us": try measure { Array(try foundation.encode(event)) },
        "bytes": Double(ours.count),
    ]
}
print(String(decoding: try JSONCoding.lineBytes(results), as: UTF8.self))
