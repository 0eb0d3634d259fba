// SPDX-License-Identifier: Apache-2.0
// netpath-example: the NetPath library in one page.
//
//   swift run netpath-example                     follow the default path until Ctrl-C
//   swift run netpath-example 192.0.2.1 example.org   …and whether these hosts are reachable
//   swift run netpath-example --once HOST         print the current answers and exit
//   swift run netpath-example --target HOST       …and a policy that needs a route to HOST
//   netpath-example --namespace lab …             follow the network namespace `lab` (root)
//
// It uses the ways to receive paths: `currentPath` right after `start(queue:)`, a handler on a
// queue (for the hosts and the target policy), the async sequence (for the path) and, with
// --once, the one-shot query. Host names are looked up in the background: nothing here waits
// for DNS, except the one-shot query (for at most five seconds).
import Dispatch
import Foundation
import NetPath

var once = false
var namespace: String?
var hosts: [String] = []
var target: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--once": once = true
    case "--namespace":
        guard let name = arguments.popFirst() else { fatalError("--namespace needs a name") }
        namespace = name
    case "--target":
        guard let name = arguments.popFirst() else { fatalError("--target needs a host") }
        target = name
    case "-h", "--help":
        print("usage: netpath-example [--once] [--namespace NAME] [--target HOST] [HOST…]")
        exit(0)
    default: hosts.append(argument)
    }
}

func describe(_ path: NetworkPath) -> String {
    var text = "path \(path.policy): \(path.status.rawValue)"
    if let primary = path.primary { text += " via \(primary.name) (\(primary.type))" }
    if let reason = path.unsatisfiedReason { text += " (\(reason.rawValue))" }
    if path.isExpensive { text += ", expensive" }
    text += ", IPv4 \(path.supportsIPv4 ? "yes" : "no"), IPv6 \(path.supportsIPv6 ? "yes" : "no")"
    return text
}

func describe(_ reachability: HostReachability) -> String {
    var text = "host \(reachability.host): \(reachability.status.rawValue)"
    if let interface = reachability.interface {
        text += " via \(interface.name) (\(interface.type))"
        if let gateway = reachability.gateway { text += " gateway \(gateway)" }
        if reachability.isExpensive { text += ", metered" }
    }
    if let reason = reachability.unresolvedReason { text += " (\(reason))" }
    return text
}

// Unbuffered: lines reach a pipe as they happen.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let source = namespace.map { KernelPathSource(options: .init(namespace: $0)) } ?? KernelPathSource.shared
let queue = DispatchQueue(label: "netpath-example")

// Handler style, as with NWPathMonitor: the current answer is known as soon as start returns
// (for a name, possibly "looking up"; the name server's answer follows as a change).
let hostMonitors = once ? [] : hosts.map { HostMonitor(host: $0, source: source) }
for monitor in hostMonitors {
    monitor.updateHandler = { say(describe($0)) }
    monitor.start(queue: queue)
}
// One-shot queries: each waits for its name's lookup, but at most five seconds.
if once {
    for host in hosts {
        do {
            say(describe(try await HostMonitor.reachability(of: host, source: source)))
        } catch {
            say("host \(host): \(error)")
        }
    }
}

// A policy that counts only interfaces routing to a host: a handler on the queue.
let targetMonitor = target.map { PathMonitor(policy: PathPolicy(name: "target", target: $0), source: source) }
if let targetMonitor {
    if !once { targetMonitor.pathUpdateHandler = { say(describe($0)) } }
    targetMonitor.start(queue: queue)
    if once, let path = targetMonitor.currentPath { say(describe(path)) }
}

// Async sequence style: the first element is the path now, then each change.
let monitor = PathMonitor(policy: .default, source: source)
for await path in monitor.paths {
    say(describe(path))
    if once { break }
}
if let failure = monitor.failure {
    say("error: \(failure)")
    exit(1)
}
