// SPDX-License-Identifier: Apache-2.0
// The harness, not part of the Apple-style code: each style prints one line per path it sees,
// and the test reads them (it runs this under `stdbuf -oL`, so each line reaches the pipe as it
// is printed).
import Foundation

let counter = UpdateCounter()
counter.start()
let service = ConnectivityService()
service.start()
Task { await printPaths() }
let viewModel = MainActor.assumeIsolated { NetworkViewModel() }
print("started")
dispatchMain()
