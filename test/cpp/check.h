// A tiny test harness for the C++ unit tests: TM_TEST registers a function; CHECK* record failures
// without stopping the test; main.cpp runs every registered test (or those whose name contains argv[1]).
#pragma once

#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"

namespace tm_test {

struct test_case {
    const char * name;
    std::function<void()> fn;
};

std::vector<test_case> & registry();
void record_failure(const char * file, int line, const std::string & what);

struct registrar {
    registrar(const char * name, std::function<void()> fn) { registry().push_back({name, std::move(fn)}); }
};

template <typename A, typename B>
std::string describe_pair(const A & a, const B & b) {
    std::ostringstream os;
    os << a << " vs " << b;
    return os.str();
}

} // namespace tm_test

#define TM_TEST_CAT2(a, b) a##b
#define TM_TEST_CAT(a, b) TM_TEST_CAT2(a, b)
#define TM_TEST(name)                                                                          \
    static void TM_TEST_CAT(tm_test_fn_, __LINE__)();                                          \
    static ::tm_test::registrar TM_TEST_CAT(tm_test_reg_, __LINE__)(name, TM_TEST_CAT(tm_test_fn_, __LINE__)); \
    static void TM_TEST_CAT(tm_test_fn_, __LINE__)()

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) ::tm_test::record_failure(__FILE__, __LINE__, "CHECK(" #cond ")");        \
    } while (0)

#define CHECK_EQ(a, b)                                                                         \
    do {                                                                                       \
        auto && tm_a_ = (a);                                                                   \
        auto && tm_b_ = (b);                                                                   \
        if (!(tm_a_ == tm_b_))                                                                 \
            ::tm_test::record_failure(__FILE__, __LINE__,                                      \
                "CHECK_EQ(" #a ", " #b "): " + ::tm_test::describe_pair(tm_a_, tm_b_));       \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                  \
    do {                                                                                       \
        double tm_a_ = (a), tm_b_ = (b);                                                       \
        if (!(std::fabs(tm_a_ - tm_b_) <= (tol)))                                              \
            ::tm_test::record_failure(__FILE__, __LINE__,                                      \
                "CHECK_NEAR(" #a ", " #b ", " #tol "): " + ::tm_test::describe_pair(tm_a_, tm_b_)); \
    } while (0)

// CHECK_THROWS_CODE(expr, code): expr must throw tmill::error with that error_code.
#define CHECK_THROWS_CODE(expr, ecode)                                                         \
    do {                                                                                       \
        bool tm_thrown_ = false;                                                               \
        try { (void)(expr); } catch (const ::tmill::error & e) {                                  \
            tm_thrown_ = true;                                                                 \
            if (e.code() != ::tmill::error_code::ecode)                                           \
                ::tm_test::record_failure(__FILE__, __LINE__,                                  \
                    std::string("wrong code ") + e.code_name() + ": " + e.what());            \
        }                                                                                      \
        if (!tm_thrown_) ::tm_test::record_failure(__FILE__, __LINE__, "no throw: " #expr);    \
    } while (0)
