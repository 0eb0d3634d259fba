// SPDX-License-Identifier: Apache-2.0

import Logging
import NetPathConfig
import NetPathControl
import NetPathCore

/// How to run the agent: where its configuration and inputs come from.
package struct AgentOptions: Sendable {
    /// The configuration file; `nil` means `/etc/netpath/netpath.toml` if it exists, else the
    /// embedded default.
    package var configPath: String?
    /// Also write every observed state to this trace file (`netpathd --record`).
    package var recordPath: String?
    /// The sysfs tree classification reads.
    package var sysfsRoot: String
    /// Where DNS servers come from.
    package var resolvConfPath: String
    /// Follow this named network namespace instead of the agent's own (tests, containers): only
    /// the engine's netlink sockets are opened there; hooks and the control socket stay in the
    /// agent's namespace.
    package var namespace: String?
    /// The process environment: `NOTIFY_SOCKET`, `WATCHDOG_USEC`, `WATCHDOG_PID`.
    package var environment: [String: String]
    /// Overrides the configuration's control socket path (tests run several agents).
    package var controlSocketPath: String?
    /// How long `READY=1` may wait for the startup events' hooks before it is sent anyway.
    package var readyWaitLimit: Duration
    /// How long stopping waits for the hooks of the events already dispatched, those settle held
    /// included, before what is still queued is dropped. Hooks running then keep their own
    /// timeout, so a stop takes at most this plus the longest `hook_timeout` and the kill grace.
    /// (Plugins drain within their runner's own `drainTimeout`.)
    package var stopWaitLimit: Duration
    package var logger: Logger
    /// Makes the connectivity prober, once, when a configuration with `[connectivity]` is first
    /// in force (docs/connectivity.md). `nil`: probing is unavailable; `[connectivity]` then
    /// only logs a warning and every interface's connectivity stays `unknown`. netpathd passes
    /// the sandboxed probe helper's client; tests pass a scripted fake.
    package var connectivityProber: (@Sendable () -> any ConnectivityProbing)?
    /// The clocks a resume from suspend is told by (``ResumeDetector``); tests pass ones that jump.
    package var bootClocks: any BootClocks
    /// How often the clocks are compared. The wait runs on `ContinuousClock` (`CLOCK_BOOTTIME`),
    /// so a check due during a suspend is due at once on resume.
    package var resumeCheckInterval: Duration

    package init(
        configPath: String? = nil,
        recordPath: String? = nil,
        sysfsRoot: String = "/sys",
        resolvConfPath: String = "/etc/resolv.conf",
        namespace: String? = nil,
        environment: [String: String] = [:],
        controlSocketPath: String? = nil,
        readyWaitLimit: Duration = .seconds(45),
        stopWaitLimit: Duration = .seconds(30),
        logger: Logger = Logger(label: "netpathd"),
        connectivityProber: (@Sendable () -> any ConnectivityProbing)? = nil,
        bootClocks: any BootClocks = SystemBootClocks(),
        resumeCheckInterval: Duration = .seconds(10)
    ) {
        self.configPath = configPath
        self.recordPath = recordPath
        self.sysfsRoot = sysfsRoot
        self.resolvConfPath = resolvConfPath
        self.namespace = namespace
        self.environment = environment
        self.controlSocketPath = controlSocketPath
        self.readyWaitLimit = readyWaitLimit
        self.stopWaitLimit = stopWaitLimit
        self.logger = logger
        self.connectivityProber = connectivityProber
        self.bootClocks = bootClocks
        self.resumeCheckInterval = resumeCheckInterval
    }
}
