import ArgumentParser
import FoundationEssentials
import NetPathControl
import NetPathCore

extension Netpathctl {
    struct Probe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check connectivity now and print each verdict with its evidence.",
            discussion:
                "Asks netpathd to probe IFACE (default: every interface [connectivity] covers) at once, and prints what each probe found (status code, redirect target, error), the round-trip time and loss, and the interface's state after hysteresis (up/down). Needs [connectivity] in the agent's configuration (docs/connectivity.md). The JSON form is {\"probes\": [{\"interface\", \"verdict\", \"connectivity\", \"portal_url\", \"rtt_ms\", \"loss\", \"evidence\"}]}."
        )

        @OptionGroup var source: SourceOptions
        @OptionGroup var config: ConfigOptions

        @Flag(name: .long, help: "Print JSON instead of text.")
        var json = false

        @Argument(help: ArgumentHelp("The interface to probe; default: every probed interface.", valueName: "IFACE"))
        var interface: String?

        func run() async throws {
            if source.local {
                // The probe reads answers from the network: only the sandboxed helper may.
                throw AgentError(message: "--local needs the probe helper; not available in this build")
            }
            let reply = try source.connect(config).request(.probe, interface: interface).checked()
            let probes = reply.probes ?? []
            if json {
                struct Document: Encodable { var probes: [ProbeReport] }
                print(String(decoding: try JSONCoding.prettyEncoder().encode(Document(probes: probes)), as: UTF8.self))
                return
            }
            print(Self.render(probes), terminator: "")
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
