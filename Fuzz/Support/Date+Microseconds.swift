// SPDX-License-Identifier: Apache-2.0

import FoundationEssentials

extension Date {
    /// Whether `other` is this time as far as a Date holds it to the microsecond.
    ///
    /// netpath writes times with microseconds (RFC3339), but a Date is a Double counting
    /// seconds from 2001: it holds every microsecond only between about 1900 and 2200. Beyond
    /// those years a time read and written again may move by what the Double can tell apart, which
    /// is no bug of the parser's; within them it must not move at all.
    package func isSameMicrosecond(as other: Date) -> Bool {
        let spacing = timeIntervalSinceReferenceDate.ulp
        if spacing < 0.25e-6 { return self == other }
        return abs(timeIntervalSince(other)) <= 4 * spacing
    }
}
