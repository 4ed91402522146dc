// SPDX-License-Identifier: MIT
// One writer per journal: a second Tuner on a journal in use, in this process or another, is
// refused in its constructor with the holder's pid and host; the lock dies with its holder, so a
// run killed with SIGKILL resumes.
#include <hypertune/journal.hpp>
#include <hypertune/json.hpp>
#include <hypertune/hypertune.hpp>

#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace ht = hypertune;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

ht::SearchSpace lock_space() { return ht::SearchSpace{ht::ContinuousParameter("x", 0.0, 1.0)}; }

ht::TunerOptions lock_options(const std::string& journal, std::size_t jobs = 10) {
    return {.max_jobs = jobs, .seed = 1, .progress = ht::ProgressBar::Never, .journal = journal};
}

double lock_objective(const ht::Config& c) { return c.get<double>("x"); }

std::string lock_journal(const char* name) {
    auto path = (fs::temp_directory_path() / fmt::format("hypertune-lock-{}-{}.jsonl", name, ::getpid())).string();
    fs::remove(path);
    fs::remove(path + ".lock");
    return path;
}

std::string host_name() {
    std::array<char, 256> host{};
    REQUIRE(::gethostname(host.data(), host.size() - 1) == 0);
    return host.data();
}

// The message of the IoError that constructing a Tuner on `journal` throws, and how long it took.
struct Refusal {
    std::string message;
    double seconds = 0.0;
};
Refusal refusal(const std::string& journal) {
    Refusal r;
    auto t0 = std::chrono::steady_clock::now();
    try {
        ht::Tuner second(lock_space(), ht::RandomSearch(), lock_options(journal));
        r.message = "accepted";
    } catch (const ht::IoError& e) {
        r.message = e.what();
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace

TEST_CASE("a second tuner on a journal in use in this process is refused at once, naming journal and holder") {
    auto path = lock_journal("same-process");
    {
        ht::Tuner first(lock_space(), ht::RandomSearch(), lock_options(path));
        auto r = refusal(path);
        CHECK(r.message == fmt::format("journal '{0}' is in use by another tuner (pid {1} on host {2}, this process; "
                                       "lock file '{0}.lock'); two tuners on one journal would run every trial "
                                       "twice: let that run end, or give this one another journal",
                                       path, ::getpid(), host_name()));
        CHECK(r.seconds < 1.0);
        // The refused tuner touched nothing: the first one runs, and its journal is whole.
        auto result = first.fit(lock_objective);
        CHECK(result.trials().size() == 10);
    }
    CHECK_FALSE(fs::exists(path + ".lock"));  // let go with the run
    CHECK(ht::load_result(path).trials().size() == 10);
    // Once the first run is over, the journal can be resumed.
    CHECK(ht::Tuner(lock_space(), ht::RandomSearch(), lock_options(path, 12)).fit(lock_objective).trials().size() == 12);
    fs::remove(path);
}

TEST_CASE("a second tuner with other options on a running journal hears of the lock, not of another run") {
    auto path = lock_journal("other-options");
    ht::Tuner first(lock_space(), ht::RandomSearch(), lock_options(path));
    auto job = first.start(lock_objective);
    (void)job.wait();  // the journal holds a whole run, and the job keeps its lock until it goes
    try {
        ht::Tuner second(lock_space(), ht::RandomSearch({.max_resource = 5}), lock_options(path));  // another run
        FAIL("the second tuner was accepted");
    } catch (const ht::IoError& e) {
        CHECK(std::string(e.what()).find("is in use by another tuner") != std::string::npos);
    }
    fs::remove(path);
}

TEST_CASE("a tuner on a symbolic or a hard link to a journal in use is refused, as on the journal itself") {
    auto path = lock_journal("links");
    const std::string symbolic = path + ".symlink", hard = path + ".hardlink";
    fs::remove(symbolic);
    fs::remove(hard);
    {
        ht::Tuner first(lock_space(), ht::RandomSearch(), lock_options(path));
        fs::create_symlink(path, symbolic);
        fs::create_hard_link(path, hard);  // the first tuner's lock made the file
        // Through the symbolic link, the lock file is the journal's own, and names its holder.
        CHECK(refusal(symbolic).message ==
              fmt::format("journal '{0}' is in use by another tuner (pid {1} on host {2}, this process; lock file "
                          "'{3}.lock'); two tuners on one journal would run every trial twice: let that run end, or "
                          "give this one another journal",
                          symbolic, ::getpid(), host_name(), path));
        // A hard link has a name of its own; the file's own lock refuses it.
        CHECK(refusal(hard).message ==
              fmt::format("journal '{}' is in use by another tuner, which opened it under another name (a hard link "
                          "to the same file, or a path through a linked folder); two tuners on one journal would run "
                          "every trial twice: let that run end, or give this one another journal",
                          hard));
        CHECK_FALSE(fs::exists(hard + ".lock"));  // the refused tuner left nothing behind
        CHECK(first.fit(lock_objective).trials().size() == 10);
    }
    // Once it is over, the run resumes through either link.
    CHECK(ht::Tuner(lock_space(), ht::RandomSearch(), lock_options(symbolic, 12)).fit(lock_objective).trials().size() == 12);
    CHECK(ht::Tuner(lock_space(), ht::RandomSearch(), lock_options(hard, 14)).fit(lock_objective).trials().size() == 14);
    CHECK(ht::load_result(path).trials().size() == 14);
    fs::remove(symbolic);
    fs::remove(hard);
    fs::remove(path);
}

TEST_CASE("writers opened by many threads at once on one journal: exactly one gets it") {
    auto path = lock_journal("threads");
    for (int round = 0; round < 20; ++round) {
        std::atomic<int> ready{0}, opened{0}, refused{0};
        std::vector<std::unique_ptr<ht::detail::JournalWriter>> writers(8);
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < writers.size(); ++i)
            threads.emplace_back([&, i] {
                ++ready;
                while (ready.load() < static_cast<int>(writers.size())) std::this_thread::yield();
                try {
                    writers[i] = std::make_unique<ht::detail::JournalWriter>(path, 0);
                    ++opened;
                } catch (const ht::IoError& e) {
                    if (std::string(e.what()).find("is in use by another tuner") != std::string::npos) ++refused;
                }
            });
        for (auto& t : threads) t.join();
        CHECK(opened.load() == 1);
        CHECK(refused.load() == static_cast<int>(writers.size()) - 1);
    }  // the writers close between rounds: each round starts with a free journal
    fs::remove(path);
}

TEST_CASE("a tuner in another process is refused the journal, and its lock dies with it under SIGKILL") {
    auto path = lock_journal("fork");
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(pipe_fds[0]);
        try {
            ht::Tuner tuner(lock_space(), ht::RandomSearch(), lock_options(path, 1000));
            std::atomic<bool> told{false};
            (void)tuner.fit([&](const ht::Config& c) {
                if (!told.exchange(true)) (void)!::write(pipe_fds[1], "r", 1);  // a trial runs: the lock is held
                std::this_thread::sleep_for(100ms);
                return lock_objective(c);
            });
        } catch (...) {
            ::_exit(2);
        }
        ::_exit(0);
    }
    ::close(pipe_fds[1]);
    char byte = 0;
    REQUIRE(::read(pipe_fds[0], &byte, 1) == 1);
    ::close(pipe_fds[0]);

    auto r = refusal(path);
    CHECK(r.message.find(fmt::format("journal '{}' is in use by another tuner (pid {} on host {}; lock file", path,
                                     child, host_name())) != std::string::npos);
    CHECK(r.seconds < 1.0);

    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status));
    // The killed run left its lock file behind with its pid in it; only the lock counts, and that died.
    CHECK(fs::exists(path + ".lock"));
    auto t0 = std::chrono::steady_clock::now();
    ht::Tuner resumed(lock_space(), ht::RandomSearch(), lock_options(path, 50));
    CHECK(std::chrono::steady_clock::now() - t0 < 1s);
    auto result = resumed.fit(lock_objective);
    CHECK(result.trials().size() == 50);
    CHECK_FALSE(fs::exists(path + ".lock"));
    fs::remove(path);
}

TEST_CASE("a journal lock taken in a child process is refused in the parent until the child is killed") {
    // The lock alone, without a tuner: a child that takes it and then waits to be killed.
    auto path = lock_journal("writer-fork");
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(pipe_fds[0]);
        try {
            ht::detail::JournalWriter writer(path, 0);
            (void)!::write(pipe_fds[1], "l", 1);
            for (;;) ::pause();
        } catch (...) {
            ::_exit(2);
        }
    }
    ::close(pipe_fds[1]);
    char byte = 0;
    REQUIRE(::read(pipe_fds[0], &byte, 1) == 1);
    ::close(pipe_fds[0]);
    auto holder = fmt::format("(pid {} on host {}; lock file '{}.lock')", child, host_name(), path);
    CHECK_THROWS_WITH_AS(ht::detail::JournalWriter(path, 0), doctest::Contains(holder.c_str()), ht::IoError);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    CHECK_NOTHROW(ht::detail::JournalWriter(path, 0));
    fs::remove(path);
}
