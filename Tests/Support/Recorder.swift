// SPDX-License-Identifier: Apache-2.0

/// Records every element of an async sequence as it arrives, so a test can await "the next
/// element that satisfies X" with a deadline, any number of times, without re-iterating.
///
/// Waiting is event-driven: a waiter is resumed when an element arrives, or when its deadline
/// passes, in which case the failure names what was awaited and what was seen last.
public actor Recorder<Element: Sendable> {
    private var elements: [Element] = []
    private var cursor = 0
    private var finished = false
    private var waiter: CheckedContinuation<Void, Never>?
    private var pump: Task<Void, Never>?

    public init() {}

    /// Starts consuming `sequence` in the background.
    public func record<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        pump = Task { [weak self] in
            do {
                for try await element in sequence {
                    guard let self else { return }
                    await self.append(element)
                }
            } catch {}
            await self?.finish()
        }
    }

    /// Stops consuming.
    public func stop() {
        pump?.cancel()
        pump = nil
    }

    /// Everything recorded so far.
    public var all: [Element] { elements }

    /// Marks everything recorded so far as seen.
    public func skipAll() { cursor = elements.count }

    /// The next unseen element satisfying `predicate`; elements passed over are marked seen.
    public func next(
        _ what: String,
        timeout: Duration = .seconds(10),
        where predicate: (Element) -> Bool = { _ in true }
    ) async throws -> Element {
        let deadline = ContinuousClock.now + timeout
        while true {
            while cursor < elements.count {
                let element = elements[cursor]
                cursor += 1
                if predicate(element) { return element }
            }
            if finished { throw TestFailure("the sequence ended while waiting for \(what); last seen: \(lastSeen)") }
            if ContinuousClock.now >= deadline {
                throw TestFailure("timed out after \(timeout) waiting for \(what); last seen: \(lastSeen)")
            }
            let timer = Task { [weak self] in
                try? await Task.sleep(until: deadline, clock: .continuous)
                await self?.wake()
            }
            await withCheckedContinuation { waiter = $0 }
            timer.cancel()
        }
    }

    private var lastSeen: String {
        elements.last.map { String(describing: $0).prefix(2000).description } ?? "nothing"
    }

    private func append(_ element: Element) {
        elements.append(element)
        wake()
    }

    private func finish() {
        finished = true
        wake()
    }

    private func wake() {
        waiter?.resume()
        waiter = nil
    }
}
