// SPDX-License-Identifier: Apache-2.0

import Dispatch
import Foundation
import NetPath

// Custom classification from outside the package, with only the NetPath product: links named
// up* count as wired here, whatever the kernel says (a veth is `other` by default). The test runs
// it under `stdbuf -oL`.

let overrides = [InterfaceOverride(match: try Glob("up*"), type: .wired, metered: true)]
let source = KernelPathSource(options: .init(interfaces: overrides))
let monitor = PathMonitor(requiredInterfaceType: .wired, source: source)
monitor.pathUpdateHandler = { path in print("netpath \(path)") }
monitor.start(queue: DispatchQueue(label: "custom"))
dispatchMain()
