import Glibc

/// Resolves names through the host's resolver (getaddrinfo), each on a thread of its own, and
/// waits for them only until a deadline: glibc's resolver may try each server for 5 s, twice,
/// which must not take a probe past its timeout. A name still resolving then counts as not
/// resolved; its thread finishes in the background and its answer is dropped.
final class HostResolution: @unchecked Sendable {
    // @unchecked: every access to `addresses` and `pending` holds `mutex`.
    /// One resolved address.
    struct Address {
        var family: Int32
        var storage: sockaddr_storage
        var length: socklen_t
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var addresses: [Address?]
    private var pending: Int

    private init(count: Int) {
        addresses = Array(repeating: nil, count: count)
        pending = count
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// The first address of each name (nil: not resolved by `milliseconds` from now).
    static func resolve(_ names: [String], within milliseconds: Int) -> [Address?] {
        let resolution = HostResolution(count: names.count)
        for (index, name) in names.enumerated() {
            HelperThread.start { resolution.finish(index, lookUp(name)) }
        }
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + (milliseconds % 1000) * 1_000_000
        deadline.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(resolution.mutex)
        defer { pthread_mutex_unlock(resolution.mutex) }
        while resolution.pending > 0 {
            if pthread_cond_timedwait(resolution.condition, resolution.mutex, &deadline) == ETIMEDOUT { break }
        }
        return resolution.addresses
    }

    private func finish(_ index: Int, _ address: Address?) {
        pthread_mutex_lock(mutex)
        addresses[index] = address
        pending -= 1
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
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
