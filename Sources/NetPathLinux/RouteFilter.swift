// SPDX-License-Identifier: Apache-2.0

import CNetlink
import Glibc
import NetPathCore

/// The classic BPF program the engine attaches to its event socket (one notification per
/// datagram): the kernel drops the route
/// notifications the engine would drop unparsed (`np_walk`) before it queues them, so routes
/// the agent does not keep cost it no wake-up, no read and no receive-buffer space.
///
/// Passed on:
/// - every message that is not `RTM_NEWROUTE` or `RTM_DELROUTE`;
/// - default routes (destination length 0), whatever their table;
/// - IPv4 and IPv6 routes whose destination prefix covers a watched address: the internet
///   probes (the routes the engine keeps) and the addresses asked about since routing last
///   changed (``KernelQueries/targetRoutes(to:through:generation:)``), as `np_route_covers`
///   decides;
/// - any route message whose destination the program cannot read where today's kernels put it
///   (the first attribute, or the one after an 8-byte `RTA_TABLE`): the attribute order is not
///   ABI, so those are left to the engine's own walk.
///
/// Dropped: IPv4 and IPv6 routes longer than their family allows or covering no watched address,
/// and route messages of other families, all of which `np_walk` drops too. The engine still
/// walks what passes with the same rules, so the program only ever saves work.
package struct RouteFilter {
    /// The program's instructions.
    package private(set) var instructions: [sock_filter] = []

    /// At most this many watched addresses go into a program, the internet probes among them (an
    /// IPv6 address costs 25 instructions): past it, ``attach(to:)`` removes the filter instead,
    /// and the engine sees every route again. Targets and library hosts are a handful in practice.
    package static let maximumAddresses = 64

    /// Whether the program passes every message, so that no filter is attached: too many
    /// addresses, or a big-endian host (the program reads netlink's host-endian fields as
    /// little-endian bytes).
    package var passesEverything: Bool { instructions.isEmpty }

    /// The program for the default routes and the routes covering `watched`.
    package init(watching watched: [IPAddress]) {
        #if _endian(little)
            guard watched.count <= Self.maximumAddresses else { return }
            var program = Assembler()
            program.assemble(watched)
            // An over-long jump (never with the limit above) leaves no program rather than a wrong one.
            if !program.failed { instructions = program.instructions }
        #endif
    }

    /// Attaches the program to `socket` (replacing the one before, atomically), or removes the
    /// filter when ``passesEverything``. Returns 0, or the errno of `setsockopt`. A program the
    /// kernel refuses leaves no filter at all: an old program, which may lack an address now
    /// watched, must not stay.
    package func attach(to socket: Int32) -> Int32 {
        if passesEverything { return Self.detach(from: socket) }
        let refused = instructions.withUnsafeBufferPointer { buffer in
            // The kernel only reads the program.
            var program = sock_fprog(
                len: UInt16(buffer.count),
                filter: UnsafeMutablePointer(mutating: buffer.baseAddress)
            )
            let size = socklen_t(MemoryLayout<sock_fprog>.size)
            if setsockopt(socket, SOL_SOCKET, SO_ATTACH_FILTER, &program, size) == 0 { return Int32(0) }
            // A replacement is charged to the socket's option memory (net.core.optmem_max) before
            // the program it replaces is freed: without the old one, it may fit.
            guard errno == ENOMEM, Self.detach(from: socket) == 0 else { return errno }
            return setsockopt(socket, SOL_SOCKET, SO_ATTACH_FILTER, &program, size) == 0 ? 0 : errno
        }
        if refused != 0 { _ = Self.detach(from: socket) }
        return refused
    }
}

extension RouteFilter {
    /// Removes any filter from `socket`: the kernel passes every message again. Returns 0, or
    /// the errno of `setsockopt`.
    package static func detach(from socket: Int32) -> Int32 {
        var unused: Int32 = 0
        let result = setsockopt(socket, SOL_SOCKET, SO_DETACH_FILTER, &unused, socklen_t(MemoryLayout<Int32>.size))
        // ENOENT: there was none.
        return result == 0 || errno == ENOENT ? 0 : errno
    }
}

/// Writes the program. Conditional jumps reach at most 255 instructions ahead, so every
/// decision returns where it is made (`ret` right after the test), conditional jumps go to
/// labels a few dozen instructions away at most, and farther ones are `BPF_JA`, whose reach is
/// 32 bits.
private struct Assembler {
    var instructions: [sock_filter] = []
    /// Set when a conditional jump would have been too long: the program is not to be used.
    private(set) var failed = false
    /// Jumps waiting for a label: (instruction index, true branch?) by label.
    private var pending: [Int: [(index: Int, isTrue: Bool)]] = [:]
    private var labels = 0

    // Offsets in the message: nlmsghdr (16 bytes), then rtmsg (12), then the attributes.
    private static let typeLow: UInt32 = 4, typeHigh: UInt32 = 5, flagsLow: UInt32 = 6
    private static let family: UInt32 = 16, destinationLength: UInt32 = 17
    private static let firstAttribute: UInt32 = 28
    // Scratch memory: the destination's offset, then per 32-bit word its mask and masked value.
    private static let offsetSlot: UInt32 = 0
    private static func maskSlot(_ word: Int) -> UInt32 { UInt32(1 + word) }
    private static func valueSlot(_ word: Int) -> UInt32 { UInt32(5 + word) }

    private static let accept: UInt32 = 0xFFFF_FFFF  // the whole message
    private static let drop: UInt32 = 0

    mutating func assemble(_ watched: [IPAddress]) {
        // Not a route message: passed. (The type is host-endian, little-endian here, and read a
        // byte at a time: BPF's wider loads are big-endian.)
        loadByte(Self.typeHigh)
        returnUnless(BPF_JEQ, 0, Self.accept)
        loadByte(Self.typeLow)
        let route = label()
        jump(BPF_JEQ, UInt32(RTM_NEWROUTE), ifTrue: route)
        jump(BPF_JEQ, UInt32(RTM_DELROUTE), ifTrue: route)
        ret(Self.accept)
        place(route)
        // Part of a dump (NLM_F_MULTI): a datagram of many messages, judged by its first one.
        // Dumps go over the other socket; should one come here, it is passed whole.
        loadByte(Self.flagsLow)
        returnIf(BPF_JSET, UInt32(NLM_F_MULTI), Self.accept)
        // Shorter than a route header: the engine's walk decides.
        emit(UInt16(BPF_LD | BPF_W | BPF_LEN), 0)
        returnUnless(BPF_JGE, Self.firstAttribute, Self.accept)
        // A default route: passed.
        loadByte(Self.destinationLength)
        returnIf(BPF_JEQ, 0, Self.accept)
        loadByte(Self.family)
        let ipv4 = label(), ipv6 = label()
        jump(BPF_JEQ, UInt32(AF_INET), ifTrue: ipv4)
        returnUnless(BPF_JEQ, UInt32(AF_INET6), Self.drop)
        jump(always: ipv6)  // past all of IPv4's code: too far for a conditional jump
        place(ipv4)
        family(width: 4, watched.filter { $0.family == .ipv4 })
        place(ipv6)
        family(width: 16, watched.filter { $0.family == .ipv6 })
    }

    /// An IPv4 or IPv6 route that is not a default route: its destination found, masked to its
    /// length, and compared with each watched address masked the same way.
    private mutating func family(width: Int, _ watched: [IPAddress]) {
        let bits = UInt32(width * 8)
        loadByte(Self.destinationLength)
        returnIf(BPF_JGT, bits, Self.drop)  // np_route_covers: not a route of the family
        findDestination(attributeLength: UInt32(4 + width))
        // Per word: mask = ones shifted left by (32 - bits of the prefix in this word), or all
        // ones, or none; then the destination's word masked with it.
        for word in 0..<(width / 4) {
            let low = UInt32(word * 32)
            let full = label(), none = label(), store = label()
            loadByte(Self.destinationLength)
            jump(BPF_JGE, low + 32, ifTrue: full)
            jump(BPF_JGT, low, ifFalse: none)
            // 1 to 31 bits of the prefix fall in this word.
            emit(UInt16(BPF_ALU | BPF_SUB | BPF_K), low)
            emit(UInt16(BPF_ALU | BPF_NEG), 0)
            emit(UInt16(BPF_ALU | BPF_ADD | BPF_K), 32)
            emit(UInt16(BPF_MISC | BPF_TAX), 0)
            emit(UInt16(BPF_LD | BPF_IMM), 0xFFFF_FFFF)
            emit(UInt16(BPF_ALU | BPF_LSH | BPF_X), 0)
            jump(always: store)
            place(none)
            emit(UInt16(BPF_LD | BPF_IMM), 0)
            jump(always: store)
            place(full)
            emit(UInt16(BPF_LD | BPF_IMM), 0xFFFF_FFFF)
            place(store)
            emit(UInt16(BPF_ST), Self.maskSlot(word))
            emit(UInt16(BPF_LDX | BPF_MEM), Self.offsetSlot)
            emit(UInt16(BPF_LD | BPF_W | BPF_IND), UInt32(word * 4))
            emit(UInt16(BPF_LDX | BPF_MEM), Self.maskSlot(word))
            emit(UInt16(BPF_ALU | BPF_AND | BPF_X), 0)
            emit(UInt16(BPF_ST), Self.valueSlot(word))
        }
        for address in watched {
            let next = label()
            for word in 0..<(width / 4) {
                emit(UInt16(BPF_LDX | BPF_MEM), Self.maskSlot(word))
                emit(UInt16(BPF_LD | BPF_IMM), Self.word(word, of: address))
                emit(UInt16(BPF_ALU | BPF_AND | BPF_X), 0)
                emit(UInt16(BPF_MISC | BPF_TAX), 0)
                emit(UInt16(BPF_LD | BPF_MEM), Self.valueSlot(word))
                jump(BPF_JEQ, register: true, ifFalse: next)
            }
            ret(Self.accept)
            place(next)
        }
        ret(Self.drop)
    }

    /// Puts the destination attribute's payload offset in the offset slot: `RTA_DST` first, or
    /// right after an 8-byte `RTA_TABLE` (today's kernels); any other layout is passed to the
    /// engine's walk.
    private mutating func findDestination(attributeLength: UInt32) {
        let first = Self.firstAttribute, second = Self.firstAttribute + 8
        let atFirst = label(), found = label()
        requireHostEndianHighBytesZero(at: first)
        loadByte(first + 2)
        jump(BPF_JEQ, UInt32(RTA_DST.rawValue), ifTrue: atFirst)
        returnUnless(BPF_JEQ, UInt32(RTA_TABLE.rawValue), Self.accept)
        loadByte(first)
        returnUnless(BPF_JEQ, 8, Self.accept)
        requireHostEndianHighBytesZero(at: second)
        loadByte(second + 2)
        returnUnless(BPF_JEQ, UInt32(RTA_DST.rawValue), Self.accept)
        loadByte(second)
        returnUnless(BPF_JEQ, attributeLength, Self.accept)
        emit(UInt16(BPF_LDX | BPF_IMM), second + 4)
        jump(always: found)
        place(atFirst)
        loadByte(first)
        returnUnless(BPF_JEQ, attributeLength, Self.accept)
        emit(UInt16(BPF_LDX | BPF_IMM), first + 4)
        place(found)
        emit(UInt16(BPF_STX), Self.offsetSlot)
    }

    /// The attribute at `offset` has a length and a type below 256 (`rta_len` and `rta_type` are
    /// host-endian 16-bit, read here as little-endian bytes): else the message is passed.
    private mutating func requireHostEndianHighBytesZero(at offset: UInt32) {
        loadByte(offset + 1)
        returnUnless(BPF_JEQ, 0, Self.accept)
        loadByte(offset + 3)
        returnUnless(BPF_JEQ, 0, Self.accept)
    }

    // MARK: Emitting

    private mutating func loadByte(_ offset: UInt32) {
        emit(UInt16(BPF_LD | BPF_B | BPF_ABS), offset)
    }

    private mutating func emit(_ code: UInt16, _ k: UInt32, _ jt: UInt8 = 0, _ jf: UInt8 = 0) {
        instructions.append(sock_filter(code: code, jt: jt, jf: jf, k: k))
    }

    private mutating func ret(_ value: UInt32) { emit(UInt16(BPF_RET | BPF_K), value) }

    /// `if A <op> k { return value }`.
    private mutating func returnIf(_ op: Int32, _ k: UInt32, _ value: UInt32) {
        emit(UInt16(BPF_JMP | op | BPF_K), k, 0, 1)
        ret(value)
    }

    /// `if !(A <op> k) { return value }`.
    private mutating func returnUnless(_ op: Int32, _ k: UInt32, _ value: UInt32) {
        emit(UInt16(BPF_JMP | op | BPF_K), k, 1, 0)
        ret(value)
    }

    private mutating func label() -> Int {
        labels += 1
        return labels
    }

    /// A conditional jump (against `k`, or against X when `register`) to a label on one branch;
    /// the other falls through.
    private mutating func jump(
        _ op: Int32,
        _ k: UInt32 = 0,
        register: Bool = false,
        ifTrue: Int? = nil,
        ifFalse: Int? = nil
    ) {
        if let ifTrue { pending[ifTrue, default: []].append((instructions.count, true)) }
        if let ifFalse { pending[ifFalse, default: []].append((instructions.count, false)) }
        emit(UInt16(BPF_JMP | op | (register ? BPF_X : BPF_K)), k)
    }

    private mutating func jump(always label: Int) {
        pending[label, default: []].append((instructions.count, true))
        emit(UInt16(BPF_JMP | BPF_JA), 0)
    }

    /// Resolves the jumps to `label` to the next instruction.
    private mutating func place(_ label: Int) {
        let target = instructions.count
        for (index, isTrue) in pending.removeValue(forKey: label) ?? [] {
            let distance = target - index - 1
            if instructions[index].code == UInt16(BPF_JMP | BPF_JA) {
                instructions[index].k = UInt32(distance)
            } else {
                guard distance <= 255 else {
                    failed = true
                    continue
                }
                if isTrue { instructions[index].jt = UInt8(distance) } else { instructions[index].jf = UInt8(distance) }
            }
        }
    }

    /// The 32-bit word `word` of `address` in network order, as `BPF_LD | BPF_W` reads it.
    private static func word(_ word: Int, of address: IPAddress) -> UInt32 {
        let bytes = Array(address.bytes)
        return (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[word * 4 + $1]) }
    }
}
