// Runs the registered C++ unit tests. Usage: tokenmill_cpp_tests [name-substring]
// Prints one line per test, the kernel levels the kernel tests ran (for real, emulated, or not and why),
// and a closing "N passed, N failed" line; exits non-zero on any failure or when a filter matches no test.
#include "check.h"
#include "kernel-levels.h"

#include <cstring>
#include <exception>

namespace tm_test {

std::vector<test_case> & registry() {
    static std::vector<test_case> tests;
    return tests;
}

static int g_failures_in_test = 0;

void record_failure(const char * file, int line, const std::string & what) {
    ++g_failures_in_test;
    std::fprintf(stderr, "    %s:%d: %s\n", file, line, what.c_str());
}

} // namespace tm_test

int main(int argc, char ** argv) {
    const char * filter = argc > 1 ? argv[1] : nullptr;
    int passed = 0, failed = 0;
    for (const auto & t : tm_test::registry()) {
        if (filter && !std::strstr(t.name, filter)) continue;
        tm_test::g_failures_in_test = 0;
        try {
            t.fn();
        } catch (const std::exception & e) {
            tm_test::record_failure(__FILE__, __LINE__, std::string("uncaught exception: ") + e.what());
        }
        if (tm_test::g_failures_in_test == 0) {
            ++passed;
            std::printf("ok   %s\n", t.name);
        } else {
            ++failed;
            std::printf("FAIL %s\n", t.name);
        }
    }
    const std::vector<std::string> levels = tm_test::kernel_levels_report();
    if (!levels.empty()) std::printf("kernel levels:\n");
    for (const std::string & line : levels) std::printf("  %s\n", line.c_str());
    std::printf("%d passed, %d failed\n", passed, failed);
    if (passed + failed == 0) {
        std::printf("no test matches \"%s\"\n", filter ? filter : "");
        return 1;
    }
    return failed == 0 ? 0 : 1;
}
