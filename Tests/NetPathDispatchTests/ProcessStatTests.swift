// SPDX-License-Identifier: Apache-2.0

import Glibc
import Testing

@testable import NetPathDispatch

/// Reading /proc/PID/stat.
struct ProcessStatTests {
    @Test("parent, group, start and zombie state are read after the last parenthesis of the name")
    func parse() throws {
        let text =
            "6764 (a (weird) name) Z 6760 6761 22971 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 173029 3133440 403 0\n"
        let stat = try #require(ProcessStat(pid: 6764, stat: text))
        #expect(stat == ProcessStat(pid: 6764, parent: 6760, group: 6761, startTicks: 173029, isZombie: true))
        #expect(ProcessStat(pid: 1, stat: "1 (init) S 0") == nil)
        #expect(ProcessStat(pid: 1, stat: "garbage") == nil)
    }

    @Test("this process's own stat is read")
    func readSelf() throws {
        let stat = try #require(ProcessStat.read(getpid()))
        #expect(stat.parent == getppid())
        #expect(!stat.isZombie)
    }
}
