// SPDX-License-Identifier: Apache-2.0

import Logging
import NetPath
import NetPathCore
import TestSupport
import Testing

/// A library monitor across a resume from suspend, simulated by boot clocks that jump: the
/// source reads the kernel's state again at once and keeps following it.
@Suite(.enabled(if: Privileges.namespaceTestsEnabled, "needs root for network namespaces"))
struct KernelPathSourceResumeTests {
    @Test(
        "boot time jumping ahead of monotonic time makes a monitor's source re-read the kernel, and changes keep flowing"
    )
    func resumeRereadsTheKernel() async throws {
        try await NetworkNamespace.with(["lresume", "peer"]) { namespaces in
            let uplink = try Uplink.make(namespaces[0], peer: namespaces[1])
            let clocks = JumpingClocks()
            let log = RecordingLog()
            var options = KernelPathSource.Options(
                namespace: uplink.namespace.name,
                logger: Logger(label: "test.library-resume") { _ in log.handler }
            )
            options.bootClocks = clocks
            options.resumeCheckInterval = .milliseconds(50)
            let source = KernelPathSource(options: options)
            let monitor = PathMonitor(policy: .default, source: source)
            let recorder = Recorder<NetworkPath>()
            await recorder.record(monitor.paths)
            defer { Task { await recorder.stop() } }

            let first = try await recorder.next("the initial path")
            #expect(first.status == .satisfied)
            #expect(!log.contains("kernel state re-read"), "nothing asked for a re-read before the resume")

            clocks.suspend(for: .seconds(600))
            try await waitUntil("the source re-read the kernel after the resume") {
                log.contains("kernel state re-read: resumed from suspend")
            }
            #expect(log.contains("resumed after a suspend of about 600 s"), "\(log.messages.withLock { $0 })")

            // The engine follows the kernel after its re-read as before it.
            try uplink.setCarrier(false)
            let down = try await recorder.next("unsatisfied after carrier loss, after the resume") {
                $0.status == .unsatisfied
            }
            #expect(down.unsatisfiedReason == .noInterface)
            await recorder.stop()
            try await NamespaceResources.waitUntil(uplink.namespace, are: .none)
            #expect(!source.isRunning, "the resume watch ends with the last subscription")
        }
    }
}
