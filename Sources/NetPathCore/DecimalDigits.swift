// SPDX-License-Identifier: Apache-2.0

/// Decimal digits written straight into a buffer: for the texts on an event's way to its hook
/// (an address's prefix length, an interface event's subject) that are built at once in a
/// string's own storage, where `String(value)` and `+` ran the library's integer formatting
/// and string appending each time.
enum DecimalDigits {
    /// Writes `value` (not negative) in decimal at `index` of `out`, which has room for its
    /// digits; returns the index after them.
    static func write(_ value: Int, into out: UnsafeMutableBufferPointer<UInt8>, at index: Int) -> Int {
        var divisor = 1
        while value / divisor >= 10 { divisor *= 10 }
        var end = index
        while divisor > 0 {
            out[end] = UInt8(ascii: "0") + UInt8(value / divisor % 10)
            end += 1
            divisor /= 10
        }
        return end
    }
}
