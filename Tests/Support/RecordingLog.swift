// SPDX-License-Identifier: Apache-2.0

import Logging
import Synchronization

/// Keeps every message logged, for a test to look for a component's own account.
package final class RecordingLog: Sendable {
    package let messages = Mutex<[String]>([])

    package init() {}

    package var handler: Handler { Handler(recorder: self) }

    package struct Handler: LogHandler {
        package let recorder: RecordingLog
        package var logLevel: Logger.Level = .info
        package var metadata: Logger.Metadata = [:]

        package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        package func log(event: LogEvent) {
            recorder.messages.withLock { $0.append(event.message.description) }
        }
    }

    package func contains(_ fragment: String) -> Bool {
        messages.withLock { $0.contains { $0.contains(fragment) } }
    }
}
