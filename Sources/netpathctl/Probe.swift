// SPDX-License-Identifier: Apache-2.0

import ArgumentParser
import FoundationEssentials
import NetPathControl
import NetPathCore
import NetPathProbe

extension Netpathctl {
    struct Probe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check connectivity now and print each verdict with its evidence.",
            discussion:
                "Asks netpathd to probe IFACE (default: every interface [connectivity] covers) at once, and prints what each probe found (status code, redirect target, error), the round-trip time and loss, and the interface's state after hysteresis (up/down). Needs [connectivity] in the agent's configuration (docs/connectivity.md). With --local, netpathctl probes this host's interfaces itself, through the same sandboxed helper (no hysteresis). The JSON form is {\"probes\": [{\"interface\", \"verdict\", \"connectivity\", \"portal_url\", \"rtt_ms\", \"loss\", \"evidence\"}]}."
        )

        @OptionGroup var source: SourceOptions
        @OptionGroup var config: ConfigOptions

        @Flag(name: .long, help: "Print JSON instead of text.")
        var json = false

        @Argument(help: ArgumentHelp("The interface to probe; default: every probed interface.", valueName: "IFACE"))
        var interface: String?

        func run() async throws {
            let probes: [ProbeReport]
            if source.local {
                probes = try await probeHere()
            } else {
                probes = try source.connect(config).request(.probe, interface: interface).checked().probes ?? []
            }
            if json {
                struct Document: Encodable { var probes: [ProbeReport] }
                print(String(decoding: try JSONCoding.prettyEncoder().encode(Document(probes: probes)), as: UTF8.self))
                return
            }
            print(Self.render(probes), terminator: "")
        }

        /// `--local`: the configuration's `[connectivity]`, this host's interfaces, and a probe
        /// helper of netpathctl's own (it reads the network's answers; netpathctl never does).
        /// No hysteresis: each verdict is the interface's state.
        func probeHere() async throws -> [ProbeReport] {
            let loaded = try config.load()
            guard let settings = loaded.configuration.connectivity else {
                throw LocalProbeError.noConnectivityTable(source: "\(loaded.source)")
            }
            let state = try await source.currentState(for: loaded.configuration).state
            let covered = state.interfaces.filter(settings.probes)
            let chosen = interface.map { name in covered.filter { $0.name == name } } ?? covered
            if let interface, chosen.isEmpty {
                throw LocalProbeError.notProbed(interface: interface)
            }
            let prober = SandboxedProbe()
            let reports = await withTaskGroup(of: ProbeReport.self) { group in
                for interface in chosen {
                    let request = ProbeRequest(
                        interface: interface.name,
                        index: interface.index,
                        method: settings.method,
                        timeout: settings.timeout
                    )
                    group.addTask {
                        let result = await prober.probe(request)
                        return ProbeReport(
                            interface: result.interface,
                            verdict: result.connectivity,
                            connectivity: result.connectivity,
                            portalURL: result.portalURL,
                            roundTripMilliseconds: result.roundTrip?.milliseconds,
                            loss: result.loss,
                            evidence: result.evidence
                        )
                    }
                }
                var reports: [ProbeReport] = []
                for await report in group { reports.append(report) }
                return reports.sorted { $0.interface < $1.interface }
            }
            // Before netpathctl exits: the helpers end and are reaped.
            await prober.stop()
            return reports
        }

        static func render(_ probes: [ProbeReport]) -> String {
            var rows = [["INTERFACE", "VERDICT", "STATE", "RTT", "LOSS", "EVIDENCE"]]
            for probe in probes {
                var verdict = probe.verdict.rawValue
                if let url = probe.portalURL { verdict += " (\(url.escapingControlCharacters))" }
                rows.append([
                    probe.interface.escapingControlCharacters,
                    verdict,
                    probe.connectivity.rawValue,
                    probe.roundTripMilliseconds.map { "\(Int($0.rounded())) ms" } ?? "-",
                    probe.loss.map { "\(Int(($0 * 100).rounded()))%" } ?? "-",
                    probe.evidence.escapingControlCharacters,
                ])
            }
            return TextTable.render(rows)
        }
    }
}

/// Why `netpathctl probe --local` has nothing to probe (exit status 1).
enum LocalProbeError: Error, Equatable, CustomStringConvertible {
    /// The configuration (`source` names it) has no `[connectivity]` table.
    case noConnectivityTable(source: String)
    /// `--interface` names an interface that is not probed.
    case notProbed(interface: String)

    var description: String {
        switch self {
        case .noConnectivityTable(let source):
            return "\(source) has no [connectivity] table: nothing is probed (docs/connectivity.md)"
        case .notProbed(let interface):
            return
                "\(interface.escapingControlCharacters) is not probed: it is not a candidate (connected, addressed, with a default route) or not in [connectivity] interfaces"
        }
    }
}
