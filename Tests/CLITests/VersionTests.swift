// SPDX-License-Identifier: Apache-2.0

import Foundation
import NetPathCore
import TestSupport
import Testing

/// One version, set in NetPathVersion.swift, everywhere it is shown.
struct VersionTests {
    @Test(
        "netpathd --version and netpathctl --version print NetPathVersion.current",
        arguments: ["netpathd", "netpathctl"]
    )
    func binariesPrintTheVersion(_ binary: String) throws {
        let result = try Command.run([BuiltProducts.path(binary), "--version"])

        #expect(result.status == 0)
        #expect(result.stdout == "\(NetPathVersion.current)\n")
    }

    @Test("the Makefile reads the same version for the package, and the Debian changelog's newest entry is it")
    func packagingUsesTheVersion() throws {
        let make = try DebianPackage.make(["-s", "version"])
        #expect(make.stdout == "\(NetPathVersion.current)\n")

        let changelog = DebianPackage.repository.appendingPathComponent("packaging/debian/changelog")
        let first = String(decoding: try Data(contentsOf: changelog), as: UTF8.self).split(separator: "\n").first
        #expect(first?.hasPrefix("netpath (\(NetPathVersion.current)) ") == true, "\(first ?? "")")
    }
}
