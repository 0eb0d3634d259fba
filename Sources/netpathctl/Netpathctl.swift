import ArgumentParser

/// `netpathctl`: inspect and control netpath.
@main
struct Netpathctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netpathctl",
        abstract: "Inspect the network path and control the netpath agent.",
        discussion: """
            status, monitor and explain ask the running netpathd over its control socket; with
            --local they compute the answer from the kernel directly, without an agent.
            """,
        version: "0.1.0",
        subcommands: [Status.self, Monitor.self]
    )
}

/// Options shared by the commands that can work without the agent.
struct SourceOptions: ParsableArguments {
    @Flag(name: .long, help: "Compute from the kernel directly instead of asking netpathd.")
    var local = false

    @Option(name: .long, help: ArgumentHelp("The agent's control socket.", valueName: "PATH"))
    var socket = "/run/netpath/netpathd.sock"

    @Option(name: .long, help: ArgumentHelp("Root of the sysfs tree used for classification (with --local).", valueName: "DIR"))
    var sysfsRoot = "/sys"

    /// Fails with a clear message until the agent's control socket exists.
    func requireLocal() throws {
        guard local else {
            throw ValidationError(
                "no netpathd is answering on \(socket) (the agent's control socket is not available); use --local to compute from the kernel directly"
            )
        }
    }
}
