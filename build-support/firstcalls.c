// SPDX-License-Identifier: Apache-2.0
// firstcalls: runs a program under ptrace with a one-shot breakpoint on the entry of every function
// it is given, and writes the functions' names in the order of their first call.
//
//   firstcalls SYMBOLS SECONDS OUT PROGRAM [ARG...]
//
// SYMBOLS: "hexaddress name" lines, PROGRAM's functions at their link-time addresses (order.sh
// writes them from `nm --defined-only`); PROGRAM must be a position-independent executable (its
// mapping at file offset 0 is its load base). PROGRAM gets SIGTERM when firstcalls does (order.sh
// ends a run that way), or after SECONDS, and SIGKILL 5 s later if it is still there; OUT is
// written once every traced thread has gone. Exits 1 when PROGRAM ended otherwise than by
// exiting 0 or by that SIGTERM (a crash cuts the list short), 2 on a failure of its own, 3 when
// its tracees still had not ended 10 s after that SIGTERM.
//
// What it is for: build-support/order.sh turns these lists into the linker's symbol order, so that
// the code the binaries run at start-up and on every event sits together (see the Makefile).
// A breakpoint is an int3 written over the function's first byte through /proc/PID/mem; its first
// hit restores the byte and rewinds the thread. Children (the agent's hooks, spawned with
// CLONE_VM) are traced until they exec, so a breakpoint they hit in the shared memory is handled
// too, and then let go; fork children (a copy of the memory, breakpoints included) get their
// copy's bytes back and are let go at once. Sampling would miss functions that run once for a
// few instructions, and page-fault traces see one page in 16 (the kernel maps the aligned 64 KiB
// block around a faulting page, where those pages are cached).
#ifndef __x86_64__
#error "firstcalls knows x86-64's breakpoint (int3) and registers only"
#endif
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

struct function {
    uint64_t address;
    char *name;
    unsigned char original;
    int hit;
};

static struct function *functions;
static size_t count;
static pid_t traced;
static volatile sig_atomic_t terminated;

// SIGALRM or SIGTERM/SIGINT: the program is asked to end; 5 s later it is made to; 5 s after that
// firstcalls gives up (a tracee of its own stuck, say), and PTRACE_O_EXITKILL ends every tracee.
static void on_signal(int signal) {
    (void)signal;
    terminated++;
    if (terminated == 1) {
        kill(traced, SIGTERM);
    } else if (terminated == 2) {
        kill(traced, SIGKILL);
    } else {
        static const char message[] = "firstcalls: the traced processes did not end; giving up\n";
        (void)!write(2, message, sizeof message - 1);
        _exit(3);
    }
    alarm(5);
}

static int by_address(const void *lhs, const void *rhs) {
    const struct function *a = lhs, *b = rhs;
    return a->address < b->address ? -1 : a->address > b->address;
}

// The same order every run, aliases included (qsort is not stable).
static int by_address_then_name(const void *lhs, const void *rhs) {
    const struct function *a = lhs, *b = rhs;
    int order = by_address(lhs, rhs);
    return order ? order : strcmp(a->name, b->name);
}

static void fail(const char *what) {
    perror(what);
    exit(2);  // PTRACE_O_EXITKILL ends the program too
}

static struct function *lookup(uint64_t address) {
    struct function key = {.address = address};
    return bsearch(&key, functions, count, sizeof key, by_address);
}

static void load(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) { perror(path); exit(2); }
    size_t capacity = 1 << 16;
    functions = malloc(capacity * sizeof *functions);
    char line[8192];
    while (fgets(line, sizeof line, file)) {
        char *end;
        uint64_t address = strtoull(line, &end, 16);
        if (end == line || *end != ' ') continue;
        char *name = end + 1;
        name[strcspn(name, "\n")] = 0;
        if (!*name) continue;
        if (count == capacity) functions = realloc(functions, (capacity *= 2) * sizeof *functions);
        functions[count++] = (struct function){.address = address, .name = strdup(name)};
    }
    fclose(file);
    qsort(functions, count, sizeof *functions, by_address_then_name);
    // One breakpoint per address: aliases keep the first name.
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        if (kept && functions[kept - 1].address == functions[i].address) continue;
        functions[kept++] = functions[i];
    }
    count = kept;
}

// The start of the mapping of `program` at file offset 0: a PIE's load base.
static uint64_t load_base(pid_t pid, const char *program) {
    char path[64], line[PATH_MAX + 128], real[PATH_MAX];
    if (!realpath(program, real)) { perror(program); exit(2); }
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *maps = fopen(path, "r");
    if (!maps) { perror(path); exit(2); }
    uint64_t base = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, offset;
        char file[PATH_MAX] = "";
        if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %4095s", &start, &offset, file) == 3 && offset == 0 &&
            strcmp(file, real) == 0) {
            base = start;
            break;
        }
    }
    fclose(maps);
    if (!base) { fprintf(stderr, "firstcalls: %s is not mapped in %d\n", real, pid); exit(2); }
    return base;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: firstcalls SYMBOLS SECONDS OUT PROGRAM [ARG...]\n");
        return 2;
    }
    load(argv[1]);
    unsigned seconds = (unsigned)atoi(argv[2]);
    const char *out = argv[3];

    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 2; }
    traced = pid;
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, 0);  // the program starts with no signal blocked
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        execvp(argv[4], argv + 4);
        perror(argv[4]);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) { perror("waitpid"); return 2; }
    ptrace(PTRACE_SETOPTIONS, pid, 0,
           PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
               PTRACE_O_TRACEEXEC);
    ptrace(PTRACE_CONT, pid, 0, 0);
    if (waitpid(pid, &status, 0) < 0 || status >> 8 != (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
        fprintf(stderr, "firstcalls: %s did not exec\n", argv[4]);
        return 2;
    }

    uint64_t base = load_base(pid, argv[4]);
    char mem_path[64];
    snprintf(mem_path, sizeof mem_path, "/proc/%d/mem", pid);
    int mem = open(mem_path, O_RDWR | O_CLOEXEC);
    if (mem < 0) { perror(mem_path); return 2; }
    const unsigned char trap = 0xCC;
    for (size_t i = 0; i < count; i++) {
        if (pread(mem, &functions[i].original, 1, (off_t)(base + functions[i].address)) != 1 ||
            pwrite(mem, &trap, 1, (off_t)(base + functions[i].address)) != 1) {
            fprintf(stderr, "firstcalls: cannot patch %s at %#lx\n", functions[i].name,
                    (unsigned long)functions[i].address);
            return 2;
        }
    }

    struct function **order = calloc(count, sizeof *order);
    size_t hits = 0;
    // Fork children not yet stopped for the first time: their copies are mended then.
    pid_t forks[64];
    size_t forking = 0;
    int outcome = -1;  // the program's wait status
    struct sigaction action = {.sa_handler = on_signal};  // no SA_RESTART: waitpid returns EINTR
    sigaction(SIGALRM, &action, 0);
    sigaction(SIGTERM, &action, 0);
    sigaction(SIGINT, &action, 0);
    // A parent may have left them blocked (a test runner's spawn does): then the time limit
    // would never come.
    sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGALRM);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGINT);
    sigprocmask(SIG_UNBLOCK, &handled, 0);
    alarm(seconds);
    ptrace(PTRACE_CONT, pid, 0, 0);
    for (;;) {
        pid_t thread = waitpid(-1, &status, __WALL);
        if (thread < 0) {
            if (errno == EINTR) continue;
            break;  // ECHILD: everything traced has gone
        }
        if (!WIFSTOPPED(status)) {
            if (thread == pid) outcome = status;
            continue;
        }
        int signal = WSTOPSIG(status);
        int event = status >> 16;
        if (event == PTRACE_EVENT_EXEC && thread != pid) {
            ptrace(PTRACE_DETACH, thread, 0, 0);  // a hook: another program from here on
            continue;
        }
        if (event == PTRACE_EVENT_FORK) {
            unsigned long child;
            if (ptrace(PTRACE_GETEVENTMSG, thread, 0, &child) == 0 && forking < 64) forks[forking++] = (pid_t)child;
        }
        if (event) {
            ptrace(PTRACE_CONT, thread, 0, 0);
            continue;
        }
        size_t fork_index = forking;
        for (size_t i = 0; i < forking; i++) {
            if (forks[i] == thread) fork_index = i;
        }
        if (fork_index < forking) {
            // A fork child's copy still holds the int3s: each gets its byte back, then it runs free.
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/mem", thread);
            int child_mem = open(path, O_RDWR | O_CLOEXEC);
            if (child_mem < 0) fail(path);
            for (size_t i = 0; i < count; i++) {
                if (!functions[i].hit &&
                    pwrite(child_mem, &functions[i].original, 1, (off_t)(base + functions[i].address)) != 1) {
                    fail(path);
                }
            }
            close(child_mem);
            forks[fork_index] = forks[--forking];
            ptrace(PTRACE_DETACH, thread, 0, 0);
            continue;
        }
        if (signal == SIGTRAP) {
            struct user_regs_struct registers;
            if (ptrace(PTRACE_GETREGS, thread, 0, &registers) != 0) continue;  // gone meanwhile
            struct function *function = lookup(registers.rip - 1 - base);
            if (function) {
                if (!function->hit) {
                    // Unrestored, the thread would trap here forever.
                    if (pwrite(mem, &function->original, 1, (off_t)(base + function->address)) != 1) fail("restore");
                    function->hit = 1;
                    order[hits++] = function;
                }
                // Also for a second thread that hit it before the byte came back.
                registers.rip -= 1;
                ptrace(PTRACE_SETREGS, thread, 0, &registers);
                ptrace(PTRACE_CONT, thread, 0, 0);
                continue;
            }
        }
        // A new thread's first stop, or a job-control stop: not passed on. Any other signal is.
        ptrace(PTRACE_CONT, thread, 0, signal == SIGSTOP ? 0 : signal);
    }

    FILE *file = fopen(out, "w");
    if (!file) { perror(out); return 2; }
    for (size_t i = 0; i < hits; i++) fprintf(file, "%s\n", order[i]->name);
    fclose(file);
    fprintf(stderr, "firstcalls: %zu of %zu functions called\n", hits, count);
    int clean = (WIFEXITED(outcome) && WEXITSTATUS(outcome) == 0) ||
                (terminated && WIFSIGNALED(outcome) && WTERMSIG(outcome) == SIGTERM) ||
                (terminated && WIFEXITED(outcome));
    if (!clean) fprintf(stderr, "firstcalls: %s ended with wait status %#x\n", argv[4], outcome);
    return clean ? 0 : 1;
}
