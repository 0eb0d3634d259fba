// SPDX-License-Identifier: Apache-2.0

import Network

// A handler that counts updates in a captured variable.
final class UpdateCounter {
    let monitor = NWPathMonitor()

    func start() {
        var updates = 0
        monitor.pathUpdateHandler = { path in
            updates += 1
            print("counter \(updates) \(path.status)")
        }
        monitor.start(queue: DispatchQueue(label: "counter"))
    }
}
