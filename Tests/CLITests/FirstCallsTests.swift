// SPDX-License-Identifier: Apache-2.0

import Foundation
import TestSupport
import Testing

/// build-support/firstcalls.c, which records the order `make order` links the binaries in, run on
/// a small C program whose calls are known: a thread, a vfork child that calls a function before
/// it execs (as the agent's hook spawn shares its memory), and a fork child (a copy of the memory,
/// breakpoints included).
struct FirstCallsTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let program = """
        #include <pthread.h>
        #include <sys/wait.h>
        #include <unistd.h>
        #define MARK(name) __attribute__((noinline)) void name(void) { __asm__ volatile(""); }
        MARK(first) MARK(second) MARK(in_thread) MARK(in_vfork) MARK(in_fork) MARK(never)
        static void *thread_main(void *arg) { in_thread(); return arg; }
        static int waited(pid_t child) {
            int status;
            return waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
        }
        int main(int argc, char **argv) {
            (void)argv;
            second(); first(); second();
            pthread_t thread;
            pthread_create(&thread, 0, thread_main, 0);
            pthread_join(thread, 0);
            pid_t spawned = vfork();
            if (spawned == 0) { in_vfork(); execl("/bin/true", "true", (char *)0); _exit(127); }
            if (!waited(spawned)) return 3;
            pid_t forked = fork();
            /* Its copy still holding an int3, the child would die of SIGTRAP here. */
            if (forked == 0) { in_fork(); first(); _exit(0); }
            if (!waited(forked)) return 4;
            if (argc > 5) never();
            return 0;
        }
        """

    @Test(
        "the functions a program calls, in the order of their first call, in its threads and vfork children; a fork child runs untouched"
    )
    func recordsFirstCalls() throws {
        let scratch = try ScratchDirectory.make("firstcalls")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let tool = scratch.path + "/firstcalls"
        let binary = scratch.path + "/calls"
        try Data(Self.program.utf8).write(to: URL(fileURLWithPath: scratch.path + "/calls.c"))
        try Command.check([
            "cc", "-O2", "-Wall", "-o", tool, Self.repository.appendingPathComponent("build-support/firstcalls.c").path,
        ])
        try Command.check(["cc", "-O1", "-fPIE", "-pie", "-pthread", "-o", binary, scratch.path + "/calls.c"])
        // "address name" per function, as build-support/order.sh writes them.
        let symbols = try Command.check(["nm", "--defined-only", binary]).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count == 3 && "tTwW".contains(fields[1]) ? "\(fields[0]) \(fields[2])" : nil
        }
        try Data((symbols.joined(separator: "\n") + "\n").utf8).write(
            to: URL(fileURLWithPath: scratch.path + "/symbols")
        )

        let result = try Command.run([tool, scratch.path + "/symbols", "10", scratch.path + "/order", binary])

        #expect(result.status == 0, "firstcalls: \(result.stderr)")
        let order = try String(contentsOfFile: scratch.path + "/order", encoding: .utf8).split(separator: "\n").map(
            String.init
        )
        for name in ["main", "first", "second", "in_thread", "in_vfork"] {
            #expect(order.filter { $0 == name }.count == 1, "\(name) in \(order)")
        }
        #expect(order.firstIndex(of: "second")! < order.firstIndex(of: "first")!, "\(order)")
        #expect(order.firstIndex(of: "first")! < order.firstIndex(of: "in_thread")!, "\(order)")
        // The fork child's calls are its own, and it was let go at once; `never` never ran.
        #expect(!order.contains("in_fork") && !order.contains("never"), "\(order)")
    }

    @Test("a program that crashes makes firstcalls fail: a list cut short is not an order")
    func reportsACrash() throws {
        let scratch = try ScratchDirectory.make("firstcalls")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let tool = scratch.path + "/firstcalls"
        try Command.check([
            "cc", "-O2", "-o", tool, Self.repository.appendingPathComponent("build-support/firstcalls.c").path,
        ])
        try Data("".utf8).write(to: URL(fileURLWithPath: scratch.path + "/symbols"))
        let binary = scratch.path + "/crash"
        try Data("#include <signal.h>\nint main(void) { raise(SIGSEGV); return 0; }\n".utf8)
            .write(to: URL(fileURLWithPath: binary + ".c"))
        try Command.check(["cc", "-fPIE", "-pie", "-o", binary, binary + ".c"])

        let result = try Command.run([tool, scratch.path + "/symbols", "10", scratch.path + "/order", binary])

        #expect(result.status == 1, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("ended with wait status"), "\(result.stderr)")
    }
}
