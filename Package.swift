// swift-tools-version: 6.1
// SPDX-License-Identifier: Apache-2.0
//
// Module layering: every module depends only on modules of a lower level (arrows point down).
//
//   5  netpathd, netpathctl       thin executables
//      ProbeHelper                netpath-probe, the sandboxed connectivity probe helper netpathd starts
//   4  NetPathAgent               the agent as a library: main loop, control server, notify, metrics
//      ShippedPlugins             the plugins under Plugins/, as netpathd and netpathctl register them
//      NetPathTesting             test fakes: a scriptable path source (product), a connectivity prober (package)
//      Network                    Apple's NWPathMonitor, NWPath, NWInterface names on Linux (product)
//   3  NetPath                    the library product: monitors and sources; re-exports model, plugin protocol
//      NetPathDispatch            hooks: discovery, trust, invocation contract, per-subject dispatch
//      RouteMetricsPlugin, EventLogPlugin   (Plugins/*)
//   2  NetPathPlugin              plugin protocol, configuration, registry, isolating runner
//      NetPathControl             control protocol and client, explain, config files, traces
//   1  NetPathConfig              TOML parser, configuration model and validation, rules
//      NetPathLinux               libnl engine, rules and kernel route lookups, sysfs, resolv.conf
//      NetPathProbe               the probe helper's client (SandboxedProbe), its wire format and verdict rules
//      NetPathQueues              the per-subject queues hooks and plugins are dispatched through
//   0  NetPathCore                model, classification, evaluation, tracker, settle, route-editing seam,
//                                 per-subject workers, one bounded file read, descriptors 0–2,
//                                 the monotonic clock and a condition lock for plain threads
//      CNetlink                   the libnl import
//      CLinux                     what Swift's Glibc lacks: _GNU_SOURCE calls (clone, pidfd, setns), TCP_INFO
//      CCurl, CSeccomp            the libcurl and libseccomp imports (netpath-probe only)
//
// Edges (→ depends on):
//   NetPathConfig → Core                    NetPathLinux → Core, CNetlink, CLinux
//   NetPathProbe → Core                     ProbeHelper → Core, NetPathProbe, CCurl, CSeccomp, CLinux
//   NetPathControl → Core, Config           NetPathPlugin → Core, Config, Queues
//   NetPathQueues → Core
//   NetPathDispatch → Core, Config, Control, Queues, CLinux
//   NetPath → Core, Config, Control, Linux, Plugin
//   RouteMetricsPlugin → Core, Plugin       EventLogPlugin → Core, Config, Plugin
//   NetPathAgent → Core, Config, Control, Linux, Plugin, Dispatch
//   ShippedPlugins → Plugin, RouteMetricsPlugin, EventLogPlugin
//   NetPathTesting → Core, NetPath          Network → NetPath
//   netpathctl → Core, Config, Control, Linux, Plugin, Dispatch, NetPathProbe, ShippedPlugins
//   netpathd → Core, Config, Control, Plugin, Agent, NetPathProbe, ShippedPlugins
// A test (Tests/CLITests/PackageLayeringTests.swift) checks that every edge points down, and that the edges
// are exactly the targets' dependencies below (as `swift package dump-package` reads them) and the Swift
// targets' imports.
import PackageDescription

let package = Package(
    name: "netpath",
    // No `platforms:`: SwiftPM has no entry for Linux, and netpath builds on Linux only (netlink
    // through libnl, sysfs, /proc, Glibc). Apple platforms are not supported.
    products: [
        .library(name: "NetPath", targets: ["NetPath"]),
        .library(name: "NetPathTesting", targets: ["NetPathTesting"]),
        // Code written for Apple's Network framework (NWPathMonitor) builds unchanged on Linux. On
        // Apple platforms it is empty: depend on it with `condition: .when(platforms: [.linux])`,
        // so that `import Network` finds Apple's framework there.
        .library(name: "Network", targets: ["Network"]),
        .executable(name: "netpathd", targets: ["netpathd"]),
        .executable(name: "netpathctl", targets: ["netpathctl"]),
        .executable(name: "netpath-probe", targets: ["ProbeHelper"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.14.0"),
        // Errno's descriptions instead of strerror, FileDescriptor for plain file reads and writeAll.
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CNetlink",
            pkgConfig: "libnl-route-3.0",
            providers: [.apt(["libnl-3-dev", "libnl-route-3-dev", "pkg-config"])]
        ),
        // C, compiled with _GNU_SOURCE: include/CLinux.h says why it is not part of CNetlink's shim.
        .target(name: "CLinux"),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev", "pkg-config"])]
        ),
        .systemLibrary(
            name: "CSeccomp",
            pkgConfig: "libseccomp",
            providers: [.apt(["libseccomp-dev", "pkg-config"])]
        ),
        .target(name: "NetPathCore", dependencies: [.product(name: "SystemPackage", package: "swift-system")]),
        // The client of netpath-probe: starts it, speaks its wire format, checks its answers.
        .target(name: "NetPathProbe", dependencies: ["NetPathCore"]),
        // The sandboxed helper that reads the network's answers to connectivity probes
        // (docs/probe-helper.md). No Foundation: it stays small.
        .executableTarget(
            name: "ProbeHelper",
            dependencies: [
                "NetPathCore", "NetPathProbe", "CCurl", "CSeccomp", "CLinux",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Sources/netpath-probe"
        ),
        .target(
            name: "NetPathConfig",
            dependencies: ["NetPathCore"],
            // A symlink to config/netpath.toml: the default configuration is compiled in.
            resources: [.embedInCode("netpath.toml")]
        ),
        .target(
            name: "NetPathLinux",
            dependencies: [
                .product(name: "SystemPackage", package: "swift-system"),
                "NetPathCore",
                "CNetlink",
                "CLinux",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The per-subject queues, public for the dispatchers in other modules to specialize
        // (Sources/NetPathQueues/SubjectQueues.swift says why); not re-exported by NetPath.
        .target(name: "NetPathQueues", dependencies: ["NetPathCore"]),
        // The plugin protocol, its context and configuration, the registry and the isolating runner.
        .target(
            name: "NetPathPlugin",
            dependencies: [
                "NetPathCore",
                "NetPathConfig",
                "NetPathQueues",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The plugins shipped with netpathd (Plugins/README.md).
        .target(
            name: "RouteMetricsPlugin",
            dependencies: ["NetPathPlugin", "NetPathCore", .product(name: "Logging", package: "swift-log")],
            path: "Plugins/RouteMetrics"
        ),
        .target(
            name: "EventLogPlugin",
            dependencies: [
                "NetPathPlugin", "NetPathCore", "NetPathConfig",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Plugins/EventLog"
        ),
        .target(
            name: "NetPathDispatch",
            dependencies: [
                "CLinux",
                .product(name: "SystemPackage", package: "swift-system"),
                "NetPathCore",
                "NetPathConfig",
                "NetPathControl",
                "NetPathQueues",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Configuration files, the control-socket protocol and client, explain and traces: what the
        // agent and netpathctl share. Foundation-free on purpose (FoundationEssentials only), so
        // the executables do not load full Foundation; NetPath re-exports it.
        .target(
            name: "NetPathControl",
            dependencies: [
                "NetPathCore", "NetPathConfig", .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(
            name: "NetPath",
            dependencies: [
                "NetPathCore", "NetPathConfig", "NetPathControl", "NetPathLinux", "NetPathPlugin",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NetPathAgent",
            dependencies: [
                .product(name: "SystemPackage", package: "swift-system"),
                "NetPathCore",
                "NetPathConfig",
                "NetPathControl",
                "NetPathLinux",
                "NetPathPlugin",
                "NetPathDispatch",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .target(
            name: "NetPathTesting",
            dependencies: ["NetPathCore", "NetPath"]
        ),
        .target(name: "Network", dependencies: ["NetPath"]),
        .executableTarget(
            name: "netpathctl",
            dependencies: [
                "NetPathProbe",
                "NetPathCore",
                "NetPathConfig",
                "NetPathControl",
                "NetPathLinux",
                "NetPathPlugin",
                "ShippedPlugins",
                "NetPathDispatch",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "netpathd",
            dependencies: [
                "NetPathProbe",
                "NetPathCore",
                "NetPathConfig",
                "NetPathControl",
                "NetPathPlugin",
                "NetPathAgent",
                "ShippedPlugins",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // PluginRegistry.shipped: the plugins above, as netpathd and netpathctl register them.
        .target(
            name: "ShippedPlugins",
            dependencies: ["NetPathPlugin", "RouteMetricsPlugin", "EventLogPlugin"],
            path: "Plugins/Shipped"
        ),
        // A runnable PathMonitor / HostMonitor example: `swift run netpath-example`.
        .executableTarget(
            name: "netpath-example",
            dependencies: ["NetPath"],
            path: "Examples/PathMonitorExample"
        ),
        // Apple's NWPathMonitor through the Network product: `swift run network-monitor-example`;
        // `make bench` measures its latency and the memory a monitor adds (bench/library.py).
        .executableTarget(
            name: "network-monitor-example",
            dependencies: ["Network"],
            path: "Examples/NetworkMonitorExample"
        ),
        // Namespaces, processes and bounded waits shared by the integration tests.
        .target(
            name: "TestSupport",
            dependencies: ["NetPathCore", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Support"
        ),
        .testTarget(name: "NetPathCoreTests", dependencies: ["NetPathCore"]),
        .testTarget(name: "NetPathQueuesTests", dependencies: ["NetPathQueues", "NetPathCore"]),
        .testTarget(name: "NetPathConfigTests", dependencies: ["NetPathConfig", "NetPathCore"]),
        .testTarget(name: "NetPathControlTests", dependencies: ["NetPathControl", "TestSupport"]),
        .testTarget(name: "NetPathLinuxTests", dependencies: ["NetPathLinux", "NetPathCore", "TestSupport"]),
        .testTarget(
            name: "NetPathDispatchTests",
            dependencies: [
                "NetPathDispatch", "NetPathCore", "NetPathQueues", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "NetPathPluginTests",
            dependencies: [
                "NetPathPlugin", "NetPathLinux", "NetPathConfig", "NetPathCore", "RouteMetricsPlugin", "EventLogPlugin",
                "TestSupport", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "NetPathTests",
            dependencies: [
                "NetPath", "NetPathTesting", "NetPathLinux", "NetPathCore", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "NetPathAgentTests",
            dependencies: [
                "NetPathAgent", "NetPath", "NetPathCore", "NetPathControl", "NetPathPlugin", "NetPathTesting",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(name: "NetPathProbeTests", dependencies: ["NetPathProbe", "NetPathCore", "TestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["NetPathCore", "TestSupport"]),
        .testTarget(name: "NetworkTests", dependencies: ["Network", "NetPathTesting", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// The libFuzzer harnesses (Fuzz/, docs/fuzzing.md), one executable per parser of outside input.
// They link only with `-sanitize=fuzzer` (their `main` hands over to libFuzzer's driver:
// Fuzz/Support/Fuzzer.swift), so they exist only when NETPATH_FUZZ=1 (`make fuzz`, `make
// fuzz-smoke`): `swift build`, `make test`'s build and the Debian package never see them. They
// are targets of this package rather than of a package beside it because they call `package`
// APIs, which another package cannot see.
if Context.environment["NETPATH_FUZZ"] == "1" {
    // What the harnesses share: the check that fails a run, and input positions.
    package.targets += [
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Fuzz/Support"),
    ]
    // Each harness's directory: its source, its seed corpus, and its libFuzzer dictionary if any.
    let harnesses: [(name: String, dependencies: [Target.Dependency], dictionary: Bool)] = [
        ("toml", ["NetPathConfig"], true),
        ("config", ["NetPathConfig"], true),
        ("trace", ["NetPathCore"], true),
        ("control-request", ["NetPathControl", "NetPathCore"], true),
        ("control-reply", ["NetPathControl", "NetPathCore"], true),
        ("netlink", ["NetPathLinux", "NetPathCore"], false),
        ("probe-wire", ["NetPathProbe", "NetPathCore"], true),
        ("http-verdict", ["NetPathProbe", "NetPathCore"], false),
    ]
    for harness in harnesses {
        package.targets.append(
            .executableTarget(
                name: "fuzz-\(harness.name)",
                dependencies: ["FuzzSupport"] + harness.dependencies,
                path: "Fuzz/\(harness.name)",
                exclude: ["corpus"] + (harness.dictionary ? ["\(harness.name).dict"] : [])
            )
        )
    }
}
