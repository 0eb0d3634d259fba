// SPDX-License-Identifier: Apache-2.0

// A release build (make install-build builds every target) has no Testing module: this file is
// for the test builds only.
#if canImport(Testing)
    import Foundation
    import Testing

    /// Marks a suite that `make test` runs apart, after the others and one test at a time: its
    /// assertions involve timing, or its subprocesses (make deb, lintian) would starve the others'.
    ///
    /// ```swift
    /// @Suite(.serialSuite, .enabled(if: Privileges.namespaceTestsEnabled, "needs root"))
    /// struct RouteStormTests { … }
    /// ```
    ///
    /// `swift test` selects tests by name only, so the Makefile reads the marked suites' names from
    /// the sources (build-support/serial-suites.sh) and passes the same list to `--skip` in the
    /// parallel run and to `--filter` in the serial one: each test runs exactly once.
    ///
    /// - Important: The parallel run sets `NETPATH_TEST_PHASE=parallel`. A marked suite's test that
    ///   runs there records an issue: the Makefile did not find the mark (write it in the
    ///   `@Suite(…)` right above the suite's `struct`, `class` or `enum`).
    public struct SerialSuiteTrait: SuiteTrait, TestTrait, TestScoping {
        public var isRecursive: Bool { true }

        public func provideScope(
            for test: Test,
            testCase: Test.Case?,
            performing function: @Sendable () async throws -> Void
        ) async throws {
            if !test.isSuite, ProcessInfo.processInfo.environment["NETPATH_TEST_PHASE"] == "parallel" {
                Issue.record(
                    "this test's suite is marked .serialSuite, yet it ran in make test's parallel phase: build-support/serial-suites.sh did not find the mark"
                )
            }
            try await function()
        }
    }

    extension Trait where Self == SerialSuiteTrait {
        /// Runs the suite in `make test`'s serial phase (``SerialSuiteTrait``).
        public static var serialSuite: Self { Self() }
    }
#endif
