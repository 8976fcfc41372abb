// Imports from libstdc++ at GLIBCXX_3.4.30 (condition_variable::wait, new
// in GCC 12) and CXXABI_1.3.13 (exception_ptr reference counting).
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>

static std::mutex m;
static std::condition_variable cv;

extern "C" void wait_ready() {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock);
}

extern "C" int rethrow(std::exception_ptr *p) {
    try {
        std::rethrow_exception(*p);
    } catch (const std::exception &) {
        return 1;
    }
}

extern "C" std::exception_ptr *make() {
    return new std::exception_ptr(std::make_exception_ptr(std::runtime_error("x")));
}
