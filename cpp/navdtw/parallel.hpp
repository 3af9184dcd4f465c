// navdtw: a small fork-join runner over index ranges.
//
// Work is handed out in chunks from an atomic counter, so uneven pairs balance themselves. Every
// item is computed independently into its own output slot, so results do not depend on the
// number of workers. The calling thread never computes when workers > 1: it waits and calls
// `poll` about every 50 ms (the bindings check for Ctrl-C there); poll returning true stops the
// batch. The exception of the lowest failing chunk is re-thrown after all workers have joined.
// Long kernels call check_cancel() every few hundred rows, so a Ctrl-C (or another worker's
// error) also stops a single huge pair promptly instead of after it finishes.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace navdtw {

struct Interrupted {};  // thrown by run_parallel when poll() asked to stop

using Poll = std::function<bool()>;

namespace detail {
using clock = std::chrono::steady_clock;
constexpr auto kPollEvery = std::chrono::milliseconds(50);

// What check_cancel() looks at on this thread: the batch's stop flag (worker threads), or the
// poll function itself (the calling thread when it computes alone).
struct CancelState {
    const std::atomic<bool>* stop = nullptr;
    const Poll* poll = nullptr;
    clock::time_point last{};
};
inline thread_local CancelState cancel_state;

// Installs a cancel state for the lifetime of a scope and restores the previous one.
class CancelScope {
public:
    explicit CancelScope(const CancelState& s) : saved_(cancel_state) { cancel_state = s; }
    ~CancelScope() { cancel_state = saved_; }
    CancelScope(const CancelScope&) = delete;
    CancelScope& operator=(const CancelScope&) = delete;

private:
    CancelState saved_;
};
}  // namespace detail

// Throws Interrupted when the running batch was asked to stop. Cheap: call it every few hundred
// DP rows from long kernels.
inline void check_cancel() {
    detail::CancelState& c = detail::cancel_state;
    if (c.stop && c.stop->load(std::memory_order_relaxed)) throw Interrupted{};
    if (c.poll && *c.poll) {
        const auto now = detail::clock::now();
        if (now - c.last >= detail::kPollEvery) {
            c.last = now;
            if ((*c.poll)()) throw Interrupted{};
        }
    }
}

template <class Body>  // Body: void(std::int64_t begin, std::int64_t end)
void run_parallel(std::int64_t n, int workers, std::int64_t chunk, const Body& body, const Poll& poll) {
    using detail::clock;
    using detail::kPollEvery;
    if (n <= 0) return;
    chunk = std::max<std::int64_t>(1, chunk);
    const std::int64_t nchunks = (n + chunk - 1) / chunk;
    workers = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(workers, nchunks)));

    if (workers == 1) {  // no thread start; poll between chunks and inside long kernels
        detail::CancelScope scope({nullptr, &poll, clock::now()});
        for (std::int64_t b = 0; b < n; b += chunk) {
            body(b, std::min(n, b + chunk));
            check_cancel();
        }
        return;
    }

    std::atomic<std::int64_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::condition_variable cv;
    int running = workers;
    std::int64_t err_at = -1;
    std::exception_ptr err;

    auto worker = [&]() {
        detail::CancelScope scope({&stop, nullptr, {}});
        while (!stop.load(std::memory_order_relaxed)) {
            const std::int64_t b = next.fetch_add(chunk, std::memory_order_relaxed);
            if (b >= n) break;
            try {
                body(b, std::min(n, b + chunk));
            } catch (const Interrupted&) {
                // stopped on request (Ctrl-C or another worker's error): nothing to report
            } catch (...) {
                std::lock_guard<std::mutex> lock(mu);
                if (err_at < 0 || b < err_at) {
                    err_at = b;
                    err = std::current_exception();
                }
                stop.store(true, std::memory_order_relaxed);
            }
        }
        std::lock_guard<std::mutex> lock(mu);
        if (--running == 0) cv.notify_all();
    };

    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(workers));
    try {
        for (int w = 0; w < workers; ++w) threads.emplace_back(worker);
    } catch (...) {  // could not start a thread: finish with the ones we have
        std::lock_guard<std::mutex> lock(mu);
        running -= workers - static_cast<int>(threads.size());
        if (threads.empty()) throw;
    }
    bool interrupted = false;
    {
        std::unique_lock<std::mutex> lock(mu);
        while (running > 0) {
            if (cv.wait_for(lock, kPollEvery, [&] { return running == 0; })) break;
            if (poll && !interrupted) {
                lock.unlock();
                interrupted = poll();
                if (interrupted) stop.store(true);
                lock.lock();
            }
        }
    }
    for (auto& t : threads) t.join();
    if (err) std::rethrow_exception(err);
    if (interrupted) throw Interrupted{};
}

// Chunk size: enough chunks per worker to balance uneven pairs, few enough to keep the
// counter cold.
inline std::int64_t default_chunk(std::int64_t n, int workers) {
    return std::clamp<std::int64_t>(n / (std::max(1, workers) * 16), 1, 4096);
}

}  // namespace navdtw
