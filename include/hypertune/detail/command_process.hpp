// SPDX-License-Identifier: MIT
#pragma once
// CommandObjective's trainer process: whether the program can be run at all (require_runnable),
// file descriptors and close-on-exec pipes, the child started with posix_spawnp in a process group
// of its own (killed and reaped on destruction), and the text of errno values and signals.

#include <hypertune/error.hpp>

#include <fmt/core.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

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
                if (!interpreter.empty() && ::access(interpreter.c_str(), X_OK) != 0) {
                    const int err = errno;
                    std::string shown;
                    for (const char c : interpreter) shown += c == '\r' ? std::string("\\r") : std::string(1, c);
                    interpreter_problem = fmt::format("its interpreter '{}' (the script's #! line) cannot be run: {}{}",
                                                      shown, errno_text(err),
                                                      interpreter.ends_with('\r')
                                                          ? " (the script has Windows line ends: convert it with dos2unix)"
                                                          : "");
                    return ENOEXEC;
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
    const char* env = std::getenv("PATH");
    std::string search = env ? env : "/bin:/usr/bin";
    std::string not_executable;
    for (std::size_t from = 0; from <= search.size();) {
        auto to = std::min(search.find(':', from), search.size());
        std::string dir = search.substr(from, to - from);
        std::string candidate = (dir.empty() ? std::string(".") : dir) + '/' + program;
        int err = runnable(candidate);
        if (err == 0) return;
        if (err != ENOENT && err != ENOTDIR && not_executable.empty())
            not_executable = fmt::format(" ('{}' is there but cannot be run: {})", candidate, reason(err));
        from = to + 1;
    }
    throw InvalidArgument(fmt::format("CommandObjective: the program '{}' is not found: no executable file of that "
                                      "name in PATH ({}){}",
                                      program, search, not_executable));
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

/// The trainer process, leader of its own process group. Destroying it kills the group and reaps.
class ChildProcess {
public:
    ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env, int out_fd, int err_fd) {
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

        auto c_strings = [](const std::vector<std::string>& v) {
            std::vector<char*> out;
            for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
            out.push_back(nullptr);
            return out;
        };
        auto c_argv = c_strings(argv);
        auto c_env = c_strings(env);
        int err = ::posix_spawnp(&pid_, argv[0].c_str(), &actions, &attr, c_argv.data(), c_env.data());
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        if (err != 0) {
            pid_ = -1;
            throw Error(fmt::format("cannot run '{}': {}", argv[0], errno_text(err)));
        }
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
};

}  // namespace hypertune::detail::command
