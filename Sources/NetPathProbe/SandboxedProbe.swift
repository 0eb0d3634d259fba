// SPDX-License-Identifier: Apache-2.0

import Glibc
import NetPathCore

/// Makes connectivity probes in `netpath-probe`, a sandboxed helper process (docs/probe-helper.md),
/// so that nothing in the agent reads what the network answers.
///
/// One helper per method (`http`, `icmp`), started on the first probe that needs it and
/// restarted with back-off when it dies, sends something malformed or stops answering; while
/// it is down, probes return ``Connectivity/unknown`` with the reason. At most one probe is in
/// flight per interface: a request for an interface that is being probed joins that probe.
/// Every answer is checked as untrusted input. ``probe(_:)`` never throws and returns within
/// the request's timeout plus ``grace``.
package actor SandboxedProbe: ConnectivityProbing {
    /// How long past a request's timeout the helper's answer is waited for before the helper is
    /// taken for stuck (killed and restarted).
    package let grace: Duration
    /// The longest wait between two restarts of a helper that keeps failing.
    package let maximumBackOff: Duration
    private let helperPath: String?

    /// What one helper slot knows.
    private struct Slot {
        var process: HelperProcess?
        var hello: ProbeWire.Hello?
        var failures = 0
        var notBefore = ContinuousClock.Instant.now
        var lastFailure: String?
        var starts = 0
    }

    private struct InFlight {
        var request: ProbeRequest
        var mode: String
        var generation: UInt64
        var waiters: [CheckedContinuation<ProbeResult, Never>]
        var deadline: Task<Void, Never>?
    }

    private var slots: [String: Slot] = [:]
    private var inFlight: [UInt64: InFlight] = [:]
    private var idByInterface: [String: UInt64] = [:]
    private var nextID: UInt64 = 1
    private var nextGeneration: UInt64 = 1

    /// A client of the helper at `helperPath` (nil: the first that exists of netpath-probe next to the
    /// running executable, then `../libexec/netpath/`, then /usr/libexec/netpath/netpath-probe).
    package init(helperPath: String? = nil, grace: Duration = .seconds(2), maximumBackOff: Duration = .seconds(30)) {
        self.helperPath = helperPath
        self.grace = grace
        self.maximumBackOff = maximumBackOff
    }

    deinit {
        for slot in slots.values { slot.process?.kill() }
    }

    /// A helper as ``status()`` reports it.
    package struct HelperStatus: Sendable, Hashable {
        /// `http` or `icmp`.
        package var mode: String
        /// The running helper's process ID, if one runs.
        package var processID: Int32?
        /// The user and group it runs as, once it said so.
        package var uid: UInt32?
        /// The group it runs as.
        package var gid: UInt32?
        /// Its effective capabilities as it reported them (0: none).
        package var effectiveCapabilities: UInt64?
        /// How many times it was started.
        package var starts: Int
        /// Why it last failed, escaped.
        package var lastFailure: String?
    }

    /// The helpers started so far.
    package func status() -> [HelperStatus] {
        slots.sorted { $0.key < $1.key }.map { mode, slot in
            HelperStatus(
                mode: mode,
                processID: slot.process?.pid,
                uid: slot.hello?.uid,
                gid: slot.hello?.gid,
                effectiveCapabilities: slot.hello?.effectiveCapabilities,
                starts: slot.starts,
                lastFailure: slot.lastFailure
            )
        }
    }

    /// Stops every helper (probes in flight get `unknown`).
    package func stop() {
        for (mode, slot) in slots {
            slot.process?.kill()
            fail(mode: mode, "probe helper stopped")
            slots[mode]?.process = nil
        }
    }

    /// Probes `request.interface` in the helper for `request.method`; see ``ConnectivityProbing``.
    package func probe(_ request: ProbeRequest) async -> ProbeResult {
        if let id = idByInterface[request.interface], inFlight[id] != nil {
            return await withCheckedContinuation { inFlight[id]!.waiters.append($0) }
        }
        let mode: String
        switch request.method {
        case .http: mode = "http"
        case .icmp: mode = "icmp"
        }
        let id = nextID
        nextID += 1
        guard let line = ProbeWire.encode(id: id, request) else {
            return unknown(request, "request over the probe wire format's limits (name, URI, hosts or timeout)")
        }
        // A restart that comes due within the request's time is waited for; a later one is not.
        let wait = (slots[mode]?.notBefore ?? .now) - .now
        if slots[mode]?.process == nil, wait > .zero {
            guard wait <= request.timeout else {
                return unknown(
                    request,
                    "probe helper restarting in \(wait.formatted) after: \(slots[mode]?.lastFailure ?? "a failure")"
                )
            }
            try? await Task.sleep(for: wait)
            // Another request may have started it (or joined this interface) meanwhile.
            if let id = idByInterface[request.interface], inFlight[id] != nil {
                return await withCheckedContinuation { inFlight[id]!.waiters.append($0) }
            }
        }
        let process: HelperProcess
        switch running(mode) {
        case .success(let running): process = running
        case .failure(let failure):
            return unknown(request, "probe helper: \(failure.description.escapingControlCharacters)")
        }
        return await withCheckedContinuation { continuation in
            idByInterface[request.interface] = id
            inFlight[id] = InFlight(
                request: request,
                mode: mode,
                generation: process.generation,
                waiters: [continuation]
            )
            let limit = request.timeout + grace
            inFlight[id]?.deadline = Task { [weak self] in
                try? await Task.sleep(for: limit)
                guard !Task.isCancelled else { return }
                await self?.expire(id, after: limit)
            }
            if !process.send(line) {
                helperFailed(mode, process, "probe helper is not reading its requests")
            }
        }
    }

    // MARK: The helper's life

    /// The running helper for `mode`, started if need be.
    private func running(_ mode: String) -> Result<HelperProcess, HelperProcess.StartError> {
        if let process = slots[mode]?.process { return .success(process) }
        var slot = slots[mode] ?? Slot()
        let path = helperPath ?? HelperLocation.find()
        let process: HelperProcess
        do throws(HelperProcess.StartError) {
            if let refusal = HelperLocation.refusal(path) { throw refusal }
            process = try HelperProcess.start(path: path, mode: mode, generation: nextGeneration)
        } catch {
            slot.failures += 1
            slot.lastFailure = error.description.escapingControlCharacters
            slot.notBefore = .now + backOff(slot.failures)
            slots[mode] = slot
            return .failure(error)
        }
        nextGeneration += 1
        slot.process = process
        slot.hello = nil
        slot.starts += 1
        slots[mode] = slot
        let events = process.events()
        Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.handle(event, from: process, mode: mode)
            }
        }
        return .success(process)
    }

    /// No wait before the first restart, then 0.25 s doubling up to ``maximumBackOff``.
    private func backOff(_ failures: Int) -> Duration {
        guard failures > 1 else { return .zero }
        let delay = Duration.milliseconds(250) * (1 << min(failures - 2, 16))
        return min(delay, maximumBackOff)
    }

    private func handle(_ event: HelperProcess.Event, from process: HelperProcess, mode: String) {
        let current = slots[mode]?.process === process
        switch event {
        case .message(.hello(let hello)):
            guard current else { return }
            if hello.mode != mode {
                helperFailed(mode, process, "probe helper said it makes \(hello.mode) probes, not \(mode)")
            } else if geteuid() == 0 && (hello.uid == 0 || hello.gid == 0) {
                helperFailed(mode, process, "probe helper still runs as root (uid \(hello.uid), gid \(hello.gid))")
            } else {
                slots[mode]?.hello = hello
            }
        case .message(.fatal(let message)):
            guard current else { return }
            helperFailed(mode, process, "probe helper failed: \(message)")
        case .message(.result(let id, let fields)):
            guard current else { return }
            guard let entry = inFlight[id], entry.generation == process.generation else {
                helperFailed(mode, process, "probe helper answered probe \(id), which it was not asked for")
                return
            }
            if slots[mode]?.hello == nil {
                helperFailed(mode, process, "probe helper answered before it said hello")
                return
            }
            slots[mode]?.failures = 0
            finish(id, result(entry.request, fields))
        case .malformed(let reason):
            guard current else { return }
            helperFailed(mode, process, "probe helper sent a malformed line: \(reason)")
        case .exited(let how):
            guard current else { return }
            helperFailed(mode, process, "probe helper exited (\(how))")
        }
    }

    /// Takes the helper out of service: its probes get `unknown`, the next start waits for the
    /// back-off.
    private func helperFailed(_ mode: String, _ process: HelperProcess, _ reason: String) {
        guard slots[mode]?.process === process else { return }
        process.kill()
        let text = reason.escapingControlCharacters
        guard var slot = slots[mode] else { return }
        slot.process = nil
        slot.failures += 1
        slot.lastFailure = text
        slot.notBefore = .now + backOff(slot.failures)
        slots[mode] = slot
        fail(mode: mode, text)
    }

    private func fail(mode: String, _ reason: String) {
        for (id, entry) in inFlight where entry.mode == mode {
            finish(id, unknown(entry.request, reason))
        }
    }

    private func expire(_ id: UInt64, after limit: Duration) {
        guard let entry = inFlight[id] else { return }
        if let process = slots[entry.mode]?.process, process.generation == entry.generation {
            helperFailed(entry.mode, process, "probe helper did not answer within \(limit.formatted)")
        } else {
            finish(id, unknown(entry.request, "probe helper did not answer within \(limit.formatted)"))
        }
    }

    private func finish(_ id: UInt64, _ result: ProbeResult) {
        guard let entry = inFlight.removeValue(forKey: id) else { return }
        entry.deadline?.cancel()
        if idByInterface[entry.request.interface] == id { idByInterface[entry.request.interface] = nil }
        for waiter in entry.waiters { waiter.resume(returning: result) }
    }

    // MARK: Results

    private func unknown(_ request: ProbeRequest, _ reason: String) -> ProbeResult {
        ProbeResult(interface: request.interface, connectivity: .unknown, evidence: reason.escapingControlCharacters)
    }

    private func result(_ request: ProbeRequest, _ fields: ProbeWire.ProbeResultFields) -> ProbeResult {
        ProbeResult(
            interface: request.interface,
            connectivity: fields.connectivity,
            portalURL: fields.portalURL.map { InterfaceName.string(fromKernel: $0) },
            roundTrip: fields.roundTripMicroseconds.map { .microseconds($0) },
            loss: fields.lossPartsPerMillion.map { Double($0) / 1_000_000 },
            evidence: InterfaceName.string(fromKernel: fields.evidence)
        )
    }
}

extension Duration {
    /// `2.5 s`, `250 ms`.
    fileprivate var formatted: String {
        let ms = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
        return ms % 1000 == 0 ? "\(ms / 1000) s" : ms >= 1000 ? "\(Double(ms) / 1000) s" : "\(ms) ms"
    }
}
