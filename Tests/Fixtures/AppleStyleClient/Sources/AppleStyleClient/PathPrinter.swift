// SPDX-License-Identifier: Apache-2.0

import Network

// The async sequence of iOS 17 / macOS 14.
func printPaths() async {
    let monitor = NWPathMonitor()
    for await path in monitor {
        print("async \(path.status) \(path.availableInterfaces.map(\.name).joined(separator: ","))")
        print("description \(path)")
    }
}
