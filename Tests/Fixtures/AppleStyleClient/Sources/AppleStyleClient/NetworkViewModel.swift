// SPDX-License-Identifier: Apache-2.0

import Foundation
import Network

// A view model as the tutorials write one (minus SwiftUI's ObservableObject, which Linux lacks):
// the monitor's handler runs on a background queue and hops to the main queue to update state.
@MainActor
final class NetworkViewModel {
    private let monitor = NWPathMonitor()
    private let queue = DispatchQueue(label: "NetworkMonitor")

    var isConnected = false
    var connectionType: NWInterface.InterfaceType?

    init() {
        monitor.pathUpdateHandler = { [weak self] path in
            DispatchQueue.main.async {
                self?.isConnected = path.status == .satisfied
                self?.connectionType = path.availableInterfaces.first?.type
                self?.report()
            }
        }
        monitor.start(queue: queue)
    }

    private func report() {
        let type = connectionType.map { "\($0)" } ?? "none"
        print("viewmodel \(isConnected ? "connected" : "disconnected") \(type)")
    }

    deinit {
        monitor.cancel()
    }
}
