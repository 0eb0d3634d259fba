#if canImport(Glibc)
    import Glibc
#endif

/// NUL-terminated strings laid end to end in one buffer: an argv or an environment as `execve`
/// takes it, built without an allocation per string.
///
/// A hook's environment has two dozen entries. Kept as an array of arrays, each entry was an
/// allocation of its own when the event's payload was built, and every byte was copied once more
/// into the spawn's scratch buffer; together ~30 µs of the agent's way from the kernel's message
/// to the hook's fork on an idle machine (callgrind: ~45,000 instructions of ~185,000).
///
/// - Important: An entry ends at its first NUL byte, as a C string does: what follows a NUL in a
///   value is dropped, never read as another entry (a value with a NUL cannot add a variable).
struct CStringList: Hashable, Sendable {
    /// The entries, each followed by a NUL.
    private(set) var bytes: [UInt8] = []
    /// How many entries ``bytes`` holds.
    private(set) var count = 0
    /// Whether the entry being built met a NUL: its remaining parts are dropped.
    private var truncated = false

    init() {}

    /// Room for `byteCount` bytes of entries without growing.
    mutating func reserveCapacity(_ byteCount: Int) { bytes.reserveCapacity(byteCount) }

    /// Appends one entry `prefix` + `value` (UTF-8), up to the first NUL: `NAME=` and a value.
    mutating func append(_ prefix: [UInt8], _ value: String) {
        var value = value
        prefix.withUnsafeBytes { appendPart($0) }
        // A native string's UTF-8 is contiguous: one copy, no per-character loop.
        value.withUTF8 { appendPart(UnsafeRawBufferPointer($0)) }
        end()
    }

    /// Appends one entry `prefix` + `value`, up to the first NUL.
    mutating func append(_ prefix: [UInt8], _ value: [UInt8]) {
        prefix.withUnsafeBytes { appendPart($0) }
        value.withUnsafeBytes { appendPart($0) }
        end()
    }

    /// Appends every entry of `other`, in order.
    mutating func append(contentsOf other: CStringList) {
        bytes += other.bytes
        count += other.count
    }

    /// The entries, each without its NUL (tests, diagnostics).
    var entries: [[UInt8]] {
        guard count > 0 else { return [] }
        return bytes.dropLast().split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
    }

    /// Calls `body` with a NULL-terminated array of pointers to the entries, as `execve` takes
    /// argv and envp. The pointers are valid only during `body`.
    func withPointers<R>(_ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<CChar>?.self, capacity: count + 1) { pointers in
            // The C side takes `char *const[]` and never writes through it; the bytes are this
            // value's own, and a copy would be the very work this type saves.
            bytes.withUnsafeBufferPointer { buffer in
                let base = UnsafeMutableRawPointer(mutating: buffer.baseAddress)
                var start = 0
                for index in 0..<count {
                    pointers[index] = base.map { ($0 + start).assumingMemoryBound(to: CChar.self) }
                    // Every entry ends with the NUL `end()` wrote, and holds no other (appendPart).
                    start += strlen(pointers[index]!) + 1
                }
                pointers[count] = nil
                return body(UnsafePointer(pointers.baseAddress!))
            }
        }
    }

    /// Appends `part` up to its first NUL; a NUL ends the entry being built, so the rest of the
    /// entry's parts are dropped too.
    private mutating func appendPart(_ part: UnsafeRawBufferPointer) {
        guard !truncated, let base = part.baseAddress, part.count > 0 else { return }
        var length = part.count
        if let nul = memchr(base, 0, length) {
            length = base.distance(to: UnsafeRawPointer(nul))
            truncated = true
        }
        // Typed: Array appends a typed buffer with one copy, a raw one byte by byte.
        bytes.append(contentsOf: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: length))
    }

    /// Ends the entry being built.
    private mutating func end() {
        bytes.append(0)
        count += 1
        truncated = false
    }
}
