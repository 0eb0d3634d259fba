// SPDX-License-Identifier: Apache-2.0

import NetPathConfig

/// Configuration texts shared by several test files.
enum ConfigurationFixtures {
    /// Every section and key, all valid.
    static let full = """
        [agent]
        hooks_dir = "/opt/netpath/hooks"
        hook_timeout = "1m30s"
        max_running_hooks = 4
        settle = "250ms"
        startup_events = false
        control_socket = "/tmp/netpathd.sock"
        metrics = "127.0.0.1:9479"

        [[interface]]
        match = "wwan*"
        type = "cellular"
        metered = true

        [[interface]]
        match = "usb[0-9]"
        constrained = true

        [[policy]]
        name = "uplink"
        require = ["wired", "wifi", "cellular"]
        prohibit = []
        metered = "avoid"
        prefer = ["wired", "wifi"]

        [[policy]]
        name = "probe"
        prohibit = ["cellular"]
        metered = "deny"
        target = "192.0.2.1"

        [[rule]]
        name = "backups-pause-on-metered"
        on = ["changed", "satisfied"]
        policy = "uplink"
        interface = "*"
        metered = true
        run = ["50-backups"]
        plugins = ["event-log"]
        timeout = "10s"

        [[rule]]
        name = "modem-off"
        on = ["up"]
        type = ["wired"]
        run = ["20-modem-off"]

        [[rule]]
        name = "everything"

        [plugin.event-log]
        path = "/var/log/netpath/events.jsonl"
        """

    /// Unwraps a successful load, or records the diagnostics as an issue.
    static func load(_ text: String, file: String = "netpath.toml", knownPlugins: Set<String>? = nil) -> Configuration?
    {
        switch ConfigurationLoader.load(contents: text, file: file, knownPlugins: knownPlugins) {
        case .success(let configuration): return configuration
        case .failure: return nil
        }
    }

    /// The errors of a failed load; empty when it succeeded.
    static func errors(_ text: String, file: String = "netpath.toml", knownPlugins: Set<String>? = nil) -> [Diagnostic]
    {
        switch ConfigurationLoader.load(contents: text, file: file, knownPlugins: knownPlugins) {
        case .success: return []
        case .failure(let errors): return errors.errors
        }
    }
}
