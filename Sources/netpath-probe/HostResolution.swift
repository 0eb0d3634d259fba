// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore

/// Resolves names through the host's resolver (getaddrinfo), each on a thread of its own, and
/// waits for them only until a deadline: glibc's resolver may try each server for 5 s, twice,
/// which must not take a probe past its timeout. A name still resolving then counts as not
/// resolved; its thread finishes in the background and its answer is dropped.
enum HostResolution {
    /// One resolved address.
    struct Address {
        var family: Int32
        var storage: sockaddr_storage
        var length: socklen_t
    }

    /// The first address of each name (nil: not resolved by `milliseconds` from now).
    static func resolve(_ names: [String], within milliseconds: Int) -> [Address?] {
        let state = ConditionLock((addresses: [Address?](repeating: nil, count: names.count), pending: names.count))
        for (index, name) in names.enumerated() {
            let started = OSThread.detach {
                let address = lookUp(name)
                state.withLock { state in
                    state.addresses[index] = address
                    state.pending -= 1
                }
                state.broadcast()
            }
            // No thread to be had: look it up here (late rather than never).
            if !started {
                let address = lookUp(name)
                state.withLock { state in
                    state.addresses[index] = address
                    state.pending -= 1
                }
            }
        }
        let deadline = MonotonicClock.nanoseconds + UInt64(milliseconds) * 1_000_000
        state.wait(until: deadline) { $0.pending == 0 }
        return state.withLock { $0.addresses }
    }

    private static func lookUp(_ name: String) -> Address? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        var address = Address(
            family: first.pointee.ai_family,
            storage: sockaddr_storage(),
            length: first.pointee.ai_addrlen
        )
        withUnsafeMutableBytes(of: &address.storage) {
            $0.copyMemory(
                from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen))
            )
        }
        return address
    }
}
