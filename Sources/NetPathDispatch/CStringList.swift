// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#endif

/// NUL-terminated strings laid end to end in one buffer: an argv or an environment as `execve`
/// takes it, built without an allocation per string.
///
/// A hook's environment has two dozen entries. Kept as an array of arrays, each entry was an
/// allocation of its own when the event's payload was built, and every byte was copied once more
/// into the spawn's scratch buffer, all on the agent's way from the kernel's message to the hook's
/// fork (BENCHMARKS.md, "C strings in one buffer, `CStringList`").
///
/// The bytes live in a buffer of this type's own, copied on write, rather than in a `[UInt8]`:
/// an entry is then two `memcpy`s and a NUL, where appended to an array each part goes through
/// the array's generic `append(contentsOf:)`
/// (BENCHMARKS.md, "`CStringList` in a copy-on-write buffer of its own").
///
/// - Important: An entry ends at its first NUL byte, as a C string does: what follows a NUL in a
///   value is dropped, never read as another entry (a value with a NUL cannot add a variable).
///
/// `@unchecked Sendable`: the standard library marks `ManagedBuffer` unavailable for `Sendable`.
/// A list writes its storage only while it holds the sole reference (``makeUnique(room:)``
/// copies it otherwise), so a storage two lists share, across threads or not, is only read.
struct CStringList: Hashable, @unchecked Sendable {
    /// The entries, each followed by a NUL; `nil` while there are none and no room was asked for.
    private var storage: Storage?
    /// How many entries the list holds.
    private(set) var count = 0

    init() {}

    /// How many bytes the entries take, their NULs included.
    var byteCount: Int { storage?.withUnsafeMutablePointerToHeader { $0.pointee.used } ?? 0 }

    /// The entries, each followed by its NUL (tests, diagnostics).
    var bytes: [UInt8] {
        guard let storage else { return [] }
        return storage.withUnsafeMutablePointers { header, base in
            Array(UnsafeBufferPointer(start: base, count: header.pointee.used))
        }
    }

    /// Room for `byteCount` bytes of entries without growing.
    mutating func reserveCapacity(_ byteCount: Int) { makeUnique(room: byteCount - self.byteCount) }

    /// Appends one entry `prefix` + `value` (UTF-8), up to the first NUL: `NAME=` and a value.
    mutating func append(_ prefix: [UInt8], _ value: String) {
        var value = value
        prefix.withUnsafeBytes { prefix in
            // A native string's UTF-8 is contiguous: one copy, no per-character loop.
            value.withUTF8 { append(prefix, UnsafeRawBufferPointer($0)) }
        }
    }

    /// Appends one entry `prefix` + `value`, up to the first NUL.
    mutating func append(_ prefix: [UInt8], _ value: [UInt8]) {
        prefix.withUnsafeBytes { prefix in value.withUnsafeBytes { append(prefix, $0) } }
    }

    /// Appends one entry `prefix` + `value` (UTF-8), up to the first NUL: the contract's own
    /// names, which are literals.
    mutating func append(_ prefix: StaticString, _ value: String) {
        var value = value
        // withUTF8Buffer, not utf8Start, which traps for a one-scalar literal.
        prefix.withUTF8Buffer { prefix in
            value.withUTF8 { append(UnsafeRawBufferPointer(prefix), UnsafeRawBufferPointer($0), literalPrefix: true) }
        }
    }

    /// Appends one entry `prefix` + `value`, up to the first NUL.
    mutating func append(_ prefix: StaticString, _ value: [UInt8]) {
        prefix.withUTF8Buffer { prefix in
            value.withUnsafeBytes { append(UnsafeRawBufferPointer(prefix), $0, literalPrefix: true) }
        }
    }

    /// Appends every entry of `other`, in order.
    mutating func append(contentsOf other: CStringList) {
        guard let source = other.storage, other.count > 0 else { return }
        source.withUnsafeMutablePointers { header, base in
            write(UnsafeRawBufferPointer(start: base, count: header.pointee.used), entries: other.count)
        }
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
            guard let storage else {
                pointers[0] = nil
                return body(UnsafePointer(pointers.baseAddress!))
            }
            // The C side takes `char *const[]` and never writes through it; the bytes are this
            // value's own, and a copy would be the very work this type saves.
            return storage.withUnsafeMutablePointers { _, base in
                var start = base
                for index in 0..<count {
                    let entry = UnsafeMutableRawPointer(start).assumingMemoryBound(to: CChar.self)
                    pointers[index] = entry
                    // Every entry ends with the NUL `append` wrote, and holds no other.
                    start += strlen(entry) + 1
                }
                pointers[count] = nil
                return body(UnsafePointer(pointers.baseAddress!))
            }
        }
    }

    static func == (lhs: CStringList, rhs: CStringList) -> Bool {
        guard lhs.count == rhs.count, lhs.byteCount == rhs.byteCount else { return false }
        if lhs.storage === rhs.storage { return true }
        return lhs.bytes == rhs.bytes
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(bytes)
    }

    /// Appends one entry: `prefix` and `value` up to the first NUL in either, and a NUL.
    /// `literalPrefix`: the prefix is one of the contract's names, which hold none.
    private mutating func append(
        _ prefix: UnsafeRawBufferPointer,
        _ value: UnsafeRawBufferPointer,
        literalPrefix: Bool = false
    ) {
        var prefix = prefix
        var value = value
        if !literalPrefix, let nul = Self.firstNUL(in: prefix) {
            prefix = UnsafeRawBufferPointer(rebasing: prefix[..<nul])
            value = UnsafeRawBufferPointer(start: nil, count: 0)
        } else if let nul = Self.firstNUL(in: value) {
            value = UnsafeRawBufferPointer(rebasing: value[..<nul])
        }
        makeUnique(room: prefix.count + value.count + 1)
        storage!.withUnsafeMutablePointers { header, base in
            var end = base + header.pointee.used
            if let start = prefix.baseAddress, prefix.count > 0 {
                memcpy(end, start, prefix.count)
                end += prefix.count
            }
            if let start = value.baseAddress, value.count > 0 {
                memcpy(end, start, value.count)
                end += value.count
            }
            end.pointee = 0
            header.pointee.used = base.distance(to: end) + 1
        }
        count += 1
    }

    /// Appends `bytes`, which hold `entries` whole entries (each with its NUL).
    private mutating func write(_ bytes: UnsafeRawBufferPointer, entries: Int) {
        makeUnique(room: bytes.count)
        storage!.withUnsafeMutablePointers { header, base in
            memcpy(base + header.pointee.used, bytes.baseAddress!, bytes.count)
            header.pointee.used += bytes.count
        }
        count += entries
    }

    /// Where the first NUL of `part` is, if it has one.
    private static func firstNUL(in part: UnsafeRawBufferPointer) -> Int? {
        guard let base = part.baseAddress, part.count > 0, let nul = memchr(base, 0, part.count) else { return nil }
        return base.distance(to: UnsafeRawPointer(nul))
    }

    /// Makes ``storage`` this value's own, with room for `room` more bytes.
    private mutating func makeUnique(room: Int) {
        let used = byteCount
        let needed = used + max(room, 0)
        // Through the pointer, not `header`: a class's stored property is checked for exclusive
        // access at run time on every use (swift_beginAccess), which cost more than the copy.
        let current = storage?.withUnsafeMutablePointerToHeader { $0.pointee.capacity } ?? 0
        // Checked before any other reference to the storage is taken, which would make it shared.
        if isKnownUniquelyReferenced(&storage), current >= needed { return }
        // Doubling when it grows, so that appending entry by entry copies each byte a bounded
        // number of times; a shared storage is copied at its own size, or what is needed.
        let capacity = max(needed, current >= needed ? current : 2 * current, 64)
        let grown = Storage.create(minimumCapacity: capacity) { _ in Header(used: used, capacity: capacity) }
        if let storage, used > 0 {
            storage.withUnsafeMutablePointers { _, old in
                grown.withUnsafeMutablePointerToElements { new in new.update(from: old, count: used) }
            }
        }
        // `create` returns a ManagedBuffer whose dynamic type is the subclass asked for.
        storage = unsafeDowncast(grown, to: Storage.self)
    }

    /// How much of ``Storage`` holds entries, and how much it can hold.
    private struct Header {
        var used: Int
        var capacity: Int
    }

    /// The bytes, after their header.
    private final class Storage: ManagedBuffer<Header, UInt8> {}
}
