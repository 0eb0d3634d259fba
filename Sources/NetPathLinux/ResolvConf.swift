// SPDX-License-Identifier: Apache-2.0

import NetPathCore

/// The DNS servers of `resolv.conf(5)`, for ``NetworkPath/supportsDNS``.
package enum ResolvConf {
    /// The `nameserver` addresses in the file at `path`, in file order.
    ///
    /// Follows glibc's reading of the file: a line whose first non-blank character is `#` or `;` is
    /// a comment; `nameserver` must be followed by blanks and an address, and anything after the
    /// address is ignored. An IPv6 zone suffix (`fe80::1%eth0`) is dropped. Lines that do not parse
    /// are skipped. A missing or unreadable file gives an empty list, as it means "no resolver"
    /// to the C library too.
    ///
    /// - Note: glibc queries only the first three servers (`MAXNS`); all are returned here, and
    ///   deciding what to do with the rest is the caller's business.
    /// - Parameter path: the file to read; a fixture in tests.
    package static func nameservers(path: String = "/etc/resolv.conf") -> [IPAddress] {
        guard let bytes = SmallFile.read(path, limit: 1 << 20) else { return [] }
        return nameservers(parsing: String(decoding: bytes, as: UTF8.self))
    }

    /// The `nameserver` addresses in `text`, the contents of a `resolv.conf` file.
    package static func nameservers(parsing text: String) -> [IPAddress] {
        var servers: [IPAddress] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver" else { continue }
            if let address = IPAddress(words[1]) {
                servers.append(address)
            }
        }
        return servers
    }
}
