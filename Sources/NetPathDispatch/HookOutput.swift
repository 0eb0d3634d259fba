// SPDX-License-Identifier: Apache-2.0

import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How much of a hook's stdout and stderr reaches the log.
///
/// Output is read as it comes (the hook never blocks on a full pipe) and split into lines. A
/// line longer than ``lineLength`` bytes is cut there; once a run has logged ``bytesPerRun``
/// bytes (both streams together) the rest is read, counted and dropped. Memory use is one read
/// buffer and one line per stream, whatever the hook prints.
package struct HookOutputLimits: Hashable, Sendable {
    /// The longest line logged, in bytes; the rest of a longer line is dropped.
    package var lineLength: Int
    /// The bytes one run may log, over stdout and stderr together.
    package var bytesPerRun: Int

    package init(lineLength: Int = 1024, bytesPerRun: Int = 64 * 1024) {
        self.lineLength = max(1, lineLength)
        self.bytesPerRun = max(0, bytesPerRun)
    }
}

/// The log budget shared by one run's two streams.
final class OutputBudget: Sendable {
    private let remaining: Atomic<Int>
    private let dropped = Atomic<Int>(0)
    private let exhaustedOnce = Atomic<Bool>(false)
    private let lines = Atomic<Int>(0)

    init(bytes: Int) { remaining = Atomic(bytes) }

    /// Takes up to `count` bytes from the budget; returns how many were granted.
    func take(_ count: Int) -> Int {
        while true {
            let left = remaining.load(ordering: .relaxed)
            let granted = min(left, count)
            if granted == 0 { return 0 }
            if remaining.compareExchange(expected: left, desired: left - granted, ordering: .relaxed).exchanged {
                return granted
            }
        }
    }

    func drop(_ count: Int) {
        if count > 0 { dropped.add(count, ordering: .relaxed) }
    }

    var droppedBytes: Int { dropped.load(ordering: .relaxed) }

    func countLine() { lines.add(1, ordering: .relaxed) }

    var linesLogged: Int { lines.load(ordering: .relaxed) }

    /// Nothing is left to log.
    var isEmpty: Bool { remaining.load(ordering: .relaxed) == 0 }

    /// Nothing is left and something was dropped for it.
    var isSpent: Bool { remaining.load(ordering: .relaxed) == 0 && droppedBytes > 0 }

    /// True exactly once, the first time the budget turns out to be spent.
    func markExhausted() -> Bool {
        !exhaustedOnce.exchange(true, ordering: .relaxed)
    }
}

/// Splits one stream into lines within the limits: a pure value fed with the bytes as read.
struct LineSplitter {
    let limits: HookOutputLimits
    let budget: OutputBudget
    private var line: [UInt8] = []
    /// The current line passed ``HookOutputLimits/lineLength``; its rest is being dropped.
    private var cut = false

    init(limits: HookOutputLimits, budget: OutputBudget) {
        self.limits = limits
        self.budget = budget
        line.reserveCapacity(min(limits.lineLength, 4096))
    }

    /// Consumes `bytes`; calls `emit` with each complete line (without the newline; a cut line
    /// ends with `…`) that fits in the budget.
    ///
    /// Works in segments between newlines (memchr), and only counts once the budget is spent,
    /// so a flood costs little CPU as well as no memory.
    mutating func consume(_ bytes: UnsafeRawBufferPointer, emit: (String) -> Void) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            if budget.isEmpty {
                budget.drop(bytes.count - offset + line.count)
                line.removeAll(keepingCapacity: true)
                cut = false
                return
            }
            let newline = memchr(base + offset, Int32(UInt8(ascii: "\n")), bytes.count - offset)
            let end = newline.map { base.distance(to: UnsafeRawPointer($0)) } ?? bytes.count
            let length = end - offset
            let kept = min(length, limits.lineLength - line.count)
            if kept > 0 { line.append(contentsOf: UnsafeRawBufferPointer(start: base + offset, count: kept)) }
            if length > kept {
                cut = true
                budget.drop(length - kept)
            }
            if newline == nil { return }
            flush(emit: emit)
            offset = end + 1
        }
    }

    /// Emits what is left after end of file.
    mutating func finish(emit: (String) -> Void) {
        if !line.isEmpty || cut { flush(emit: emit) }
    }

    private mutating func flush(emit: (String) -> Void) {
        defer {
            line.removeAll(keepingCapacity: true)
            cut = false
        }
        let granted = budget.take(line.count + 1)
        if granted < line.count + 1 {
            // Bytes granted for a line that cannot be logged whole are dropped with it: a line is
            // logged entirely or not at all.
            budget.drop(line.count + 1)
            return
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        emit(String(decoding: line, as: UTF8.self) + (cut ? "…" : ""))
    }
}
