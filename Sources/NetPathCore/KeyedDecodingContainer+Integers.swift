// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials

extension KeyedDecodingContainer {
    /// The integer at `key`, which must lie in `range`; anything else is an error at `key` that
    /// says what was expected and what was found.
    ///
    /// JSONDecoder reports a number that does not fit the type (`-1` or `5000000000` for a
    /// `UInt32`, `1.5` for an `Int32`) as "not valid JSON" with no coding path, which would name
    /// neither the key nor the value; this decodes such a number again as a `Double` to say both.
    ///
    /// - Parameter what: what the integer is, for the message: `"an MTU"`.
    func decodeInteger<T: FixedWidthInteger & Decodable & Sendable>(
        _ type: T.Type,
        forKey key: Key,
        in range: ClosedRange<T> = T.min...T.max,
        _ what: String
    ) throws -> T {
        func outOfRange(_ found: String) -> DecodingError {
            DecodingError.dataCorruptedError(
                forKey: key,
                in: self,
                debugDescription:
                    "expected \(what) (an integer from \(range.lowerBound) to \(range.upperBound)), found \(found)"
            )
        }
        if let value = try? decode(T.self, forKey: key) {
            guard range.contains(value) else { throw outOfRange("\(value)") }
            return value
        }
        if let number = try? decode(Double.self, forKey: key) {
            let integral = number.rounded() == number && abs(number) < 1e18
            throw outOfRange(integral ? "\(Int64(number))" : "\(number)")
        }
        // Not a number at all (a string, null, missing): the decoder's own error has the path.
        return try decode(T.self, forKey: key)
    }

    /// ``decodeInteger(_:forKey:in:_:)`` for an optional key: `nil` when it is absent or null.
    func decodeIntegerIfPresent<T: FixedWidthInteger & Decodable & Sendable>(
        _ type: T.Type,
        forKey key: Key,
        in range: ClosedRange<T> = T.min...T.max,
        _ what: String
    ) throws -> T? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeInteger(type, forKey: key, in: range, what)
    }
}
