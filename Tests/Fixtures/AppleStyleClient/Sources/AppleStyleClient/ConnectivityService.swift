// SPDX-License-Identifier: Apache-2.0

import Foundation
import Network

// The monitor behind a protocol, so that tests can hand the service a mock.
protocol NetworkPathMonitoring: AnyObject {
    var pathUpdateHandler: ((NWPath) -> Void)? { get set }
    var currentPath: NWPath { get }
    func start(queue: DispatchQueue)
    func cancel()
}

extension NWPathMonitor: NetworkPathMonitoring {}

final class ConnectivityService {
    private let monitor: NetworkPathMonitoring
    private(set) var isReachable = false

    init(monitor: NetworkPathMonitoring = NWPathMonitor()) {
        self.monitor = monitor
    }

    func start() {
        monitor.pathUpdateHandler = { [weak self] path in
            self?.isReachable = path.status == .satisfied
            let interface = path.availableInterfaces.first
            let via = interface.map { " via \($0.name) (index \($0.index))" } ?? ""
            print(
                "service \(path.status)\(via) expensive=\(path.isExpensive) wired=\(path.usesInterfaceType(.wiredEthernet))"
            )
        }
        monitor.start(queue: DispatchQueue(label: "ConnectivityService"))
    }

    deinit {
        monitor.cancel()
    }
}
