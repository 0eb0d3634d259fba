import ArgumentParser
import FoundationEssentials
import Glibc
import NetPath
import NetPathLinux

extension Netpathctl {
    struct Monitor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print interface and path events as they happen, like `ip monitor` at path level.",
            discussion: "With --json, each event is one JSON object per line (the same object hooks get on stdin)."
        )

        @OptionGroup var source: SourceOptions

        @Flag(name: .long, help: "Print one JSON event per line.")
        var json = false

        func run() async throws {
            try source.requireLocal()
            let observer = SystemObserver(builder: SystemStateBuilder(sysfs: SysfsReader(root: source.sysfsRoot)))
            var tracker = PathTracker(policies: [.default])
            var first = true
            let encoder = JSONCoding.lineEncoder()
            for await update in try observer.start() {
                let events: [Event]
                if first {
                    // Adopt the current state silently: monitor reports changes, like ip monitor.
                    _ = tracker.start(with: update.state, at: update.time)
                    first = false
                    // On stderr even with --json: scripts can wait for it, and stdout stays pure JSON.
                    FileOutput.write("monitoring \(update.state.interfaces.count) interfaces; Ctrl-C to stop\n", to: 2)
                    continue
                }
                events = tracker.update(to: update.state, at: update.time)
                var out = ""
                for event in events {
                    if json {
                        out += String(decoding: try encoder.encode(event), as: UTF8.self) + "\n"
                    } else {
                        out += EventRenderer.line(event) + "\n"
                    }
                }
                // One write per batch, flushed at once: a pipe reader sees events without delay.
                if !out.isEmpty { FileOutput.write(out) }
            }
        }
    }
}

/// Unbuffered writes to stdout (Swift's `print` is block-buffered on a pipe).
enum FileOutput {
    static func write(_ text: String, to fd: Int32 = 1) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return
            }
            offset += n
        }
    }
}

/// The human form of one event.
enum EventRenderer {
    static func line(_ event: Event) -> String {
        let time = RFC3339.format(event.time)
        let clock = String(time.dropFirst(11).prefix(15))
        switch event.scope {
        case .interface:
            var text = "\(clock)  \(event.name.rawValue.padding(15))  \(event.interface ?? "-")"
            if let type = event.interfaceType { text += " (\(type))" }
            if let address = event.address { text += " \(address)" }
            if !event.changes.isEmpty { text += " [\(event.changes.joined(separator: ", "))]" }
            return text
        case .path:
            var text = "\(clock)  path \(event.name.rawValue.padding(10))  \(event.policy ?? "-"): "
            if let path = event.path {
                text += path.status.rawValue
                if let primary = path.primary { text += " via \(primary.name)" }
                if let reason = path.unsatisfiedReason { text += " (\(reason.rawValue))" }
            }
            if let previous = event.previousInterface, previous != event.interface { text += ", was \(previous)" }
            return text
        }
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
