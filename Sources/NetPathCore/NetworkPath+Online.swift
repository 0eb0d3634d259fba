// SPDX-License-Identifier: Apache-2.0

extension NetworkPath {
    /// Whether this path counts as online: satisfied and, when `required` is given, with a
    /// probe's verdict of at least `required` (`unknown` never counts: it is no verdict).
    ///
    /// The one definition of "online" that `netpathctl wait-online` and the library's
    /// `PathMonitor.waitForConnectivity(_:timeout:)` share.
    package func isOnline(requiring required: Connectivity?) -> Bool {
        guard status == .satisfied else { return false }
        guard let required else { return true }
        return connectivity != .unknown && connectivity.satisfies(required)
    }
}
