// SPDX-License-Identifier: Apache-2.0

#if os(Linux)
    internal import NetPath

    extension NWPathMonitor: AsyncSequence {
        /// The monitor's paths.
        public typealias Element = NWPath
        /// Iterations never throw.
        public typealias Failure = Never

        /// An iteration of the monitor's paths (iOS 17, macOS 14): the current path at once, then
        /// each change. It needs no ``start(queue:)`` and is independent of it; it stops when the
        /// loop ends or its task is cancelled.
        ///
        /// ```swift
        /// for await path in NWPathMonitor(requiredInterfaceType: .wifi) {
        ///     print(path.status)
        /// }
        /// ```
        public struct Iterator: AsyncIteratorProtocol {
            var paths: MonitorUpdates<NetworkPath>.AsyncIterator

            /// The next path; `nil` once the iteration has ended (its task was cancelled, or
            /// netlink could not be used).
            ///
            /// ```swift
            /// var paths = monitor.makeAsyncIterator()
            /// let now = await paths.next()
            /// ```
            public mutating func next() async -> NWPath? {
                await paths.next().map(NWPath.init)
            }
        }

        /// A new iteration.
        ///
        /// ```swift
        /// var paths = monitor.makeAsyncIterator()
        /// ```
        public func makeAsyncIterator() -> Iterator {
            Iterator(paths: monitor.paths.makeAsyncIterator())
        }
    }
#endif
