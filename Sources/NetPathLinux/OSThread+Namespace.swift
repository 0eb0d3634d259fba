// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore

extension OSThread {
    /// Runs `body` on a fresh thread that first enters network namespace `namespace`, waits for
    /// it, and returns its result. The thread ends with the body: nothing else ever runs in the
    /// namespace it moved to.
    package static func run<T>(in namespace: String, _ body: @escaping () throws(NetlinkError) -> T)
        throws(NetlinkError) -> T
    {
        let job = Job { () throws(NetlinkError) -> Any in
            try NetworkNamespaceEntry.enter(namespace)
            return try body()
        }
        let thread: pthread_t
        switch start({ job.execute() }) {
        case .success(let started): thread = started
        case .failure(let error): throw NetlinkError(.thread, rawValue: error.rawValue, context: "pthread_create")
        }
        pthread_join(thread, nil)
        switch job.result! {
        case .success(let value): return value as! T
        case .failure(let error): throw error
        }
    }

    private final class Job: @unchecked Sendable {
        // @unchecked: written by the one thread that runs it, read by its creator only after
        // pthread_join, which orders the two.
        let body: () throws(NetlinkError) -> Any
        var result: Result<Any, NetlinkError>?

        init(body: @escaping () throws(NetlinkError) -> Any) { self.body = body }

        func execute() {
            do throws(NetlinkError) {
                result = .success(try body())
            } catch {
                result = .failure(error)
            }
        }
    }
}
