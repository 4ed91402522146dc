// SPDX-License-Identifier: MIT
#pragma once
// CommandObjective's trainer process: whether the program can be run at all (require_runnable),
// file descriptors and close-on-exec pipes, the child started in a process group of its own
// (killed and reaped on destruction; on Linux also killed when the tuner dies), and the text of
// errno values and signals.

#include <hypertune/error.hpp>

#include <fmt/core.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace hypertune::detail::command {

inline std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

// Why a program cannot be run, for the constructor's message.
inline std::string cannot_run_text(int err) {
    return errno_text(err) + (err == ENOEXEC ? " (neither a binary nor a script that starts with #!)" : "");
}

/// The directories a program without a '/' is looked for in, as posix_spawnp and execvp look:
/// the host's PATH, "/bin:/usr/bin" when unset.
inline std::string search_path() {
    const char* env = std::getenv("PATH");
    return env ? env : "/bin:/usr/bin";
}

/// `program` in each directory of search_path(), in order (an empty entry: the working directory).
inline std::vector<std::string> path_candidates(const std::string& program) {
    const std::string search = search_path();
    std::vector<std::string> out;
    for (std::size_t from = 0; from <= search.size();) {
        const auto to = std::min(search.find(':', from), search.size());
        const std::string dir = search.substr(from, to - from);
        out.push_back((dir.empty() ? std::string(".") : dir) + '/' + program);
        from = to + 1;
    }
    return out;
}

/// Checks what posix_spawnp will run: `program` itself when it holds a '/', otherwise the first
/// executable file of that name in the directories of PATH (as posix_spawnp looks it up: the
/// host's PATH, "/bin:/usr/bin" when unset, an empty entry meaning the working directory).
/// Throws InvalidArgument naming the program and why it cannot be run.
inline void require_runnable(const std::string& program) {
    // A script's interpreter that cannot be run (a "#!/bin/bash\r" line written on Windows, a
    // python that is not installed) made posix_spawn fail with ENOENT for each trial, which named
    // the script, not the interpreter.
    std::string interpreter_problem;
    // 0 when `path` is an executable file, else the reason (an errno value; ENOEXEC with
    // `interpreter_problem` set for a script whose interpreter cannot be run).
    auto runnable = [&](const std::string& path) {
        struct stat st{};
        if (::stat(path.c_str(), &st) != 0) return errno;
        if (S_ISDIR(st.st_mode)) return EISDIR;
        if (::access(path.c_str(), X_OK) != 0) return errno;
        // posix_spawn runs a binary or a script that names its interpreter ("#!"); unlike a shell,
        // it does not hand any other file to /bin/sh, so each trial would fail on it.
        char head[256] = {};
        if (const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
            const auto n = ::read(fd, head, sizeof head);
            ::close(fd);
            const bool elf = n >= 4 && head[0] == 0x7f && head[1] == 'E' && head[2] == 'L' && head[3] == 'F';
            const bool script = n >= 2 && head[0] == '#' && head[1] == '!';
            if (!elf && !script) return ENOEXEC;
            if (script) {
                // As the kernel reads the line: blanks, then the interpreter up to a blank or the
                // line's end (a '\r' is part of its name).
                const std::string_view line(head + 2, static_cast<std::size_t>(n) - 2);
                const auto begin = line.find_first_not_of(" \t");
                const auto end = begin == std::string_view::npos ? begin : line.find_first_of(" \t\n", begin);
                const std::string interpreter(begin == std::string_view::npos ? std::string_view()
                                                                              : line.substr(begin, end - begin));
                auto shown = [](std::string_view text) {
                    std::string out;
                    for (const char c : text) out += c == '\r' ? std::string("\\r") : std::string(1, c);
                    return out;
                };
                auto windows = [](std::string_view text) {
                    return text.ends_with('\r') ? " (the script has Windows line ends: convert it with dos2unix)" : "";
                };
                if (!interpreter.empty() && ::access(interpreter.c_str(), X_OK) != 0) {
                    const int err = errno;
                    interpreter_problem = fmt::format("its interpreter '{}' (the script's #! line) cannot be run: {}{}",
                                                      shown(interpreter), errno_text(err), windows(interpreter));
                    return ENOEXEC;
                }
                // "#!/usr/bin/env python3": env looks the program up in PATH, and a '\r' in its
                // name or a misspelt one failed every trial with env's status 127 instead. The
                // kernel passes the rest of the line to env as one argument.
                if (const auto slash = interpreter.rfind('/');
                    end != std::string_view::npos && interpreter.substr(slash + 1) == "env") {
                    std::string_view rest = line.substr(end);
                    rest = rest.substr(0, rest.find('\n'));
                    const auto first = rest.find_first_not_of(" \t");
                    const std::string name(first == std::string_view::npos
                                               ? std::string_view()
                                               : rest.substr(first, rest.find_last_not_of(" \t") + 1 - first));
                    auto found = [&] {
                        if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0;
                        const std::vector<std::string> where = path_candidates(name);
                        return std::any_of(where.begin(), where.end(),
                                           [](const std::string& file) { return ::access(file.c_str(), X_OK) == 0; });
                    };
                    if (!name.empty() && name.front() != '-' && !found()) {
                        interpreter_problem =
                            fmt::format("its interpreter '{}' (which '{}' runs, the script's #! line) is not found in "
                                        "PATH ({}){}",
                                        shown(name), interpreter, search_path(), windows(name));
                        return ENOEXEC;
                    }
                }
            }
        }
        return 0;
    };
    auto reason = [&](int err) { return interpreter_problem.empty() ? cannot_run_text(err) : interpreter_problem; };
    if (program.find('/') != std::string::npos) {
        if (int err = runnable(program); err != 0)
            throw InvalidArgument(fmt::format("CommandObjective: the program '{}' cannot be run: {}", program,
                                              reason(err)));
        return;
    }
    std::string not_executable;
    for (const std::string& candidate : path_candidates(program)) {
        int err = runnable(candidate);
        if (err == 0) return;
        if (err != ENOENT && err != ENOTDIR && not_executable.empty())
            not_executable = fmt::format(" ('{}' is there but cannot be run: {})", candidate, reason(err));
    }
    throw InvalidArgument(fmt::format("CommandObjective: the program '{}' is not found: no executable file of that "
                                      "name in PATH ({}){}",
                                      program, search_path(), not_executable));
}

inline std::string signal_name(int sig) {
    static constexpr std::array<std::pair<int, std::string_view>, 15> names{{
        {SIGHUP, "SIGHUP"}, {SIGINT, "SIGINT"}, {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"}, {SIGTRAP, "SIGTRAP"},
        {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"}, {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
        {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
    }};
    for (const auto& [n, name] : names)
        if (n == sig) return fmt::format("{} ({})", sig, name);
    return std::to_string(sig);
}

/// A file descriptor closed on destruction.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    Fd& operator=(Fd&& o) noexcept {
        if (this != &o) {
            reset();
            fd_ = std::exchange(o.fd_, -1);
        }
        return *this;
    }
    ~Fd() { reset(); }
    void reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] bool open() const noexcept { return fd_ >= 0; }

private:
    int fd_ = -1;
};

/// A pipe whose ends are close-on-exec, so that trainers started by other threads never inherit
/// them (an inherited write end would keep the pipe from ever reaching end of file).
struct Pipe {
    Fd read, write;
    Pipe() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(fmt::format("CommandObjective: pipe2: {}", errno_text(errno)));
        read = Fd(fds[0]);
        write = Fd(fds[1]);
    }
};

/// The file posix_spawnp would run for `program`: itself when it holds a '/', else the first
/// executable file of that name in PATH; empty when none is (not `program` itself, which execve
/// would take from the working directory).
inline std::string program_path(const std::string& program) {
    if (program.find('/') != std::string::npos) return program;
    for (std::string& candidate : path_candidates(program)) {
        struct stat st{};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return {};
}

/// The trainer process, leader of its own process group. Destroying it kills the group and reaps.
///
/// On Linux the trainer is also tied to the tuner: it gets SIGKILL when the thread that started
/// it ends, which, since that thread waits for it, happens only when the tuner dies (a SIGKILL, a
/// crash, a SIGTERM it does not handle). An orphaned trainer used to train on into its trial's
/// checkpoint folder, beside the trainer a resumed run started there: a Python trainer does not
/// die at its next line as a C++ one does (CPython ignores SIGPIPE, `logging` swallows the failed
/// write, a buffered stdout writes nothing until the end), so a resumed run found the folder
/// trained to the end and failed the trial, or recorded a curve with gaps. posix_spawn cannot set
/// the parent-death signal, so the child is started with vfork and exec, as glibc's posix_spawn
/// starts it, doing the same: its own process group, every signal's action the default, no
/// signal blocked, stdin from /dev/null.
class ChildProcess {
public:
    ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env, int out_fd, int err_fd) {
        auto c_strings = [](const std::vector<std::string>& v) {
            std::vector<char*> out;
            for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
            out.push_back(nullptr);
            return out;
        };
        auto c_argv = c_strings(argv);
        auto c_env = c_strings(env);
#ifdef __linux__
        spawn_tied(program_path(argv[0]), c_argv.data(), c_env.data(), out_fd, err_fd);
#else
        spawn(c_argv.data(), c_env.data(), out_fd, err_fd);
#endif
    }

    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    ~ChildProcess() {
        if (pid_ <= 0 || reaped_) return;
        signal_group(SIGKILL);
        reap();
    }

    // Only before the leader is reaped: until then its pid (the group id) cannot be reused.
    void signal_group(int sig) const {
        if (pid_ > 0 && !reaped_) ::kill(-pid_, sig);
    }

    /// True once the leader has exited; it stays a zombie (not reaped) so the group id stays ours.
    [[nodiscard]] bool exited() const {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
            return errno == ECHILD;  // reaped by the kernel: the host ignores SIGCHLD
        return info.si_pid != 0;
    }

    /// Waits for the leader and returns its wait status (0 when the host ignores SIGCHLD).
    int reap() {
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        reaped_ = true;
        return status;
    }

private:
    pid_t pid_ = -1;
    bool reaped_ = false;

#ifdef __linux__
    // What the child does between vfork and exec: system calls only (it shares the tuner's memory
    // and must not allocate or take a lock). An exec that fails writes its errno to `report`,
    // whose close-on-exec write end otherwise closes at the exec.
    [[noreturn]] static void exec_tied(const char* path, char* const* argv, char* const* envp, int out_fd, int err_fd,
                                       pid_t tuner, int report) noexcept {
        int err = 0;
        // The tuner may have died before the signal was asked for: then nothing would send it.
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) err = errno;
        else if (::getppid() != tuner) err = ESRCH;
        if (err == 0 && ::setpgid(0, 0) != 0) err = errno;
        if (err == 0) {
            struct sigaction default_action{};
            default_action.sa_handler = SIG_DFL;
            for (int sig = 1; sig < NSIG; ++sig)
                if (sig != SIGKILL && sig != SIGSTOP) (void)::sigaction(sig, &default_action, nullptr);
            const int in = ::open("/dev/null", O_RDONLY);
            if (in < 0 || ::dup2(in, STDIN_FILENO) < 0 || ::dup2(out_fd, STDOUT_FILENO) < 0 ||
                ::dup2(err_fd, STDERR_FILENO) < 0)
                err = errno;
            else if (in != STDIN_FILENO)
                ::close(in);
        }
        if (err == 0) {
            sigset_t none;
            sigemptyset(&none);
            (void)::sigprocmask(SIG_SETMASK, &none, nullptr);
            ::execve(path, argv, envp);
            err = errno;
        }
        while (::write(report, &err, sizeof err) < 0 && errno == EINTR) {
        }
        ::_exit(127);
    }

    void spawn_tied(const std::string& path, char* const* argv, char* const* envp, int out_fd, int err_fd) {
        if (path.empty()) throw Error(fmt::format("cannot run '{}': {}", argv[0], errno_text(ENOENT)));
        int report[2];
        if (::pipe2(report, O_CLOEXEC) != 0)
            throw Error(fmt::format("cannot run '{}': pipe2: {}", argv[0], errno_text(errno)));
        // Every signal blocked until the child has reset their actions: a handler of the tuner's
        // must not run in it.
        sigset_t all, old;
        sigfillset(&all);
        ::pthread_sigmask(SIG_SETMASK, &all, &old);
        const pid_t tuner = ::getpid();
        const pid_t pid = ::vfork();
        if (pid == 0) exec_tied(path.c_str(), argv, envp, out_fd, err_fd, tuner, report[1]);
        const int vfork_error = pid < 0 ? errno : 0;
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        ::close(report[1]);
        int err = vfork_error;
        if (pid > 0) {
            ssize_t n;
            while ((n = ::read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
            }
            if (n != static_cast<ssize_t>(sizeof err)) err = 0;  // end of file: the exec closed it
        }
        ::close(report[0]);
        if (err != 0) {
            if (pid > 0) {
                pid_ = pid;
                reap();
            }
            pid_ = -1;
            throw Error(fmt::format("cannot run '{}': {}", argv[0], errno_text(err)));
        }
        pid_ = pid;
    }
#else
    void spawn(char* const* argv, char* const* envp, int out_fd, int err_fd) {
        posix_spawn_file_actions_t actions;
        posix_spawnattr_t attr;
        posix_spawn_file_actions_init(&actions);
        posix_spawnattr_init(&attr);
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
        // Own process group (so the whole group can be signalled); nothing blocked or ignored that
        // the host happens to block or ignore (a trainer that cannot see SIGTERM cannot stop cleanly).
        sigset_t none, all;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
        int err = ::posix_spawnp(&pid_, argv[0], &actions, &attr, argv, envp);
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        if (err != 0) {
            pid_ = -1;
            throw Error(fmt::format("cannot run '{}': {}", argv[0], errno_text(err)));
        }
    }
#endif
};

}  // namespace hypertune::detail::command
