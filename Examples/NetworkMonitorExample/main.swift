// SPDX-License-Identifier: Apache-2.0
// Apple's NWPathMonitor on Linux, through the Network product: prints each path it reports, one
// line each, as an app's log would.
//
//   swift run network-monitor-example                # satisfied (Path is satisfied), interface: eth0[wired], …
//   network-monitor-example --stamp                  # each line starts with CLOCK_REALTIME ns, taken as the
//                                                    # handler is called (make bench's library phase)
//   network-monitor-example --no-monitor             # the same program idle without a monitor: the
//                                                    # baseline of make bench's "RSS a monitor adds"
//
// Each prints "started" on stderr once it is ready (for the monitor: once start(queue:) returned).
import Foundation
import Network

let arguments = Set(CommandLine.arguments.dropFirst())
let stamp = arguments.contains("--stamp")
let monitor = NWPathMonitor()
if !arguments.contains("--no-monitor") {
    monitor.pathUpdateHandler = { path in
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let line = "\(path)"
        print(stamp ? "\(Int(now.tv_sec) * 1_000_000_000 + now.tv_nsec) \(line)" : line)
        // Each line leaves at once, also when stdout is a pipe.
        fflush(nil)
    }
    monitor.start(queue: DispatchQueue(label: "network-monitor-example"))
}
FileHandle.standardError.write(Data("started\n".utf8))
dispatchMain()
