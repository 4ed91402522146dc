// SPDX-License-Identifier: MIT
#pragma once
// CheckpointStore: the checkpoints of each unfinished trial (running, or paused until a
// promotion), and each trial's checkpoint folder (Trial::checkpoint_dir, CommandObjective's
// {checkpoint_dir}).
//
// Without a journal, the newest checkpoint lives in memory and the folders in a temporary
// directory that goes with the run. With a journal, both live beside it, in
// "<journal>.checkpoints/": a checkpoint is written when the objective saves it (to a temporary
// file, fsync'd, renamed over the newest one, which becomes the previous one, then the folder
// fsync'd), so a crash leaves whole files only; and a resumed run continues paused and in-flight
// trials from there. What is kept is bounded: two checkpoints and one folder per trial that may
// still run; they go when the trial ends for good (completed, failed, stopped), so a finished run
// leaves only what its still-paused trials need.

#include <hypertune/error.hpp>
#include <hypertune/strategy.hpp>

#include <fmt/core.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace hypertune::detail {

/// A trial's checkpoint between its runs, with the step it was saved at (its last report then).
struct SavedCheckpoint {
    std::string bytes;
    Resource step = 0;
};

class CheckpointStore {
public:
    /// Beside `journal` ("<journal>.checkpoints/", created when first needed); without one (""),
    /// in memory, with trial folders in a fresh temporary directory.
    /// A path in the folder's place that is not a folder is refused here, before any trial runs.
    explicit CheckpointStore(const std::string& journal)
        // Absolute, so that {checkpoint_dir} still names it for a trainer that changes directory.
        : folder_(journal.empty() ? std::filesystem::path() : std::filesystem::absolute(journal + ".checkpoints")),
          on_disk_(!journal.empty()) {
        if (on_disk_) check_folder(journal);
    }

    /// Throws IoError when the folder beside `journal` is taken by something that is not a folder:
    /// called before the journal is created too, so that a refused run leaves no file behind.
    static void check_folder(const std::string& journal) {
        const auto folder = std::filesystem::absolute(journal + ".checkpoints");
        std::error_code ec;
        if (std::filesystem::exists(folder, ec) && !std::filesystem::is_directory(folder, ec))
            throw IoError(fmt::format("checkpoint folder '{}': exists and is not a folder; the journal keeps its "
                                      "trials' checkpoints there: move it away",
                                      folder.string()));
    }

    CheckpointStore(const CheckpointStore&) = delete;
    CheckpointStore& operator=(const CheckpointStore&) = delete;

    ~CheckpointStore() {
        // A temporary folder never outlives its run; one beside a journal is for the next session.
        if (!on_disk_ && folders_used_.load()) {
            std::error_code ignored;
            std::filesystem::remove_all(folder_, ignored);
        }
    }

    [[nodiscard]] bool on_disk() const noexcept { return on_disk_; }

    /// Keeps `c` as trial `id`'s checkpoint. On disk, the file is complete and synced when this
    /// returns, and the one before is kept as the previous checkpoint: a crash can tear the
    /// journal's last line (the report of the newest step), and the run then continues from the
    /// previous one. Throws IoError naming the file when it cannot be written (the checkpoints
    /// before are then still there).
    void put(TrialId id, SavedCheckpoint c) {
        if (!on_disk_) {
            std::lock_guard lk(mu_);
            memory_[id] = std::move(c);
            return;
        }
        ensure_folder();
        const auto path = file_of(id);
        auto tmp = path;
        tmp += ".tmp";
        write_synced(tmp, header(id, c), c.bytes);
        std::error_code ec;
        std::filesystem::rename(path, previous_of(id), ec);  // none yet: nothing to keep
        ec.clear();
        std::filesystem::rename(tmp, path, ec);
        if (ec) throw IoError(fmt::format("trial {}: cannot save checkpoint '{}': {}", id, path.string(), ec.message()));
        sync_folder();
    }

    /// The newest checkpoint of trial `id` saved at a step up to `up_to` (what the run has judged:
    /// a checkpoint past it belongs to reports the journal lost), if one is kept. In memory it is
    /// moved out (the run puts the trial's next one back); on disk the files stay until replaced or
    /// erased, as a crash may need them again. A file that cannot be read is skipped and named in
    /// `problem`.
    [[nodiscard]] std::optional<SavedCheckpoint> take(TrialId id, Resource up_to, std::string& problem) {
        if (!on_disk_) {
            std::lock_guard lk(mu_);
            auto it = memory_.find(id);
            if (it == memory_.end()) return std::nullopt;
            auto c = std::move(it->second);
            memory_.erase(it);
            if (c.step > up_to) return std::nullopt;
            return c;
        }
        for (const auto& path : {file_of(id), previous_of(id)}) {
            std::error_code ec;
            if (!std::filesystem::exists(path, ec)) continue;
            std::string why;
            std::optional<SavedCheckpoint> c;
            try {
                c = read_file(path, id, why);
            } catch (const std::exception& e) {  // out of memory for a large one, say
                why = e.what();
            }
            if (!c) {
                if (problem.empty()) problem = fmt::format("trial {}'s checkpoint '{}' cannot be used ({})", id, path.string(), why);
                continue;
            }
            if (c->step <= up_to) return c;
        }
        return std::nullopt;
    }

    /// Forgets trial `id`'s checkpoints (not its folder); whether it had one.
    bool drop_checkpoint(TrialId id) {
        if (on_disk_) {
            std::error_code ignored;
            const bool newest = std::filesystem::remove(file_of(id), ignored);
            const bool previous = std::filesystem::remove(previous_of(id), ignored);
            return newest || previous;
        }
        std::lock_guard lk(mu_);
        return memory_.erase(id) > 0;
    }

    /// Forgets trial `id`'s checkpoint and folder: it will not run again. Whether it had a checkpoint.
    bool erase(TrialId id) {
        const bool had = drop_checkpoint(id);
        std::error_code ignored;
        if (on_disk_ || folders_used_.load()) std::filesystem::remove_all(trial_folder_path(id), ignored);
        return had;
    }

    /// Trial `id`'s own folder, created if needed: what a trainer writes there stays until the
    /// trial ends for good, across pauses and (with a journal) crashes.
    [[nodiscard]] std::filesystem::path trial_folder(TrialId id) {
        ensure_folder();
        folders_used_.store(true);  // after folder_ is set: erase() and the destructor read it then
        const auto path = trial_folder_path(id);
        std::error_code ec;
        std::filesystem::create_directories(path, ec);
        if (ec) throw IoError(fmt::format("trial {}: cannot create checkpoint folder '{}': {}", id, path.string(), ec.message()));
        return path;
    }

    /// Whether trial `id`'s folder holds anything: what a trainer saved there before a crash.
    [[nodiscard]] bool has_trial_folder(TrialId id) const {
        std::error_code ec;
        const auto path = trial_folder_path(id);
        return std::filesystem::is_directory(path, ec) && !std::filesystem::is_empty(path, ec);
    }

    /// On resume: removes what belongs to trials that will not run again (those for which
    /// `may_run` is false: a crash can come between a trial's end and the removal of its files)
    /// and half-written files; then the folder, when nothing is left in it.
    void tidy(const std::function<bool(TrialId)>& may_run) {
        if (!on_disk_) return;
        std::error_code ec;
        if (!std::filesystem::is_directory(folder_, ec)) return;
        std::vector<std::filesystem::path> gone;
        for (const auto& entry : std::filesystem::directory_iterator(folder_, ec)) {
            const auto name = entry.path().filename().string();
            const auto id = trial_of(name);
            if (!id || !may_run(*id) || name.ends_with(".tmp")) gone.push_back(entry.path());
        }
        for (const auto& p : gone) std::filesystem::remove_all(p, ec);
        remove_folder_if_empty();
    }

    /// At the end of a run: the folder goes when no trial left anything in it.
    void remove_folder_if_empty() {
        std::error_code ec;
        if (std::filesystem::is_directory(folder_, ec) && std::filesystem::is_empty(folder_, ec))
            std::filesystem::remove(folder_, ec);
    }

private:
    [[nodiscard]] std::filesystem::path file_of(TrialId id) const {
        return folder_ / fmt::format("trial-{}.ckpt", id);
    }
    [[nodiscard]] std::filesystem::path previous_of(TrialId id) const {
        return folder_ / fmt::format("trial-{}.prev.ckpt", id);
    }
    [[nodiscard]] std::filesystem::path trial_folder_path(TrialId id) const {
        return folder_ / fmt::format("trial-{}", id);
    }

    // "trial-17", "trial-17.ckpt", "trial-17.prev.ckpt", "trial-17.ckpt.tmp" -> 17
    [[nodiscard]] static std::optional<TrialId> trial_of(std::string_view name) {
        if (!name.starts_with("trial-")) return std::nullopt;
        name.remove_prefix(6);
        TrialId id = 0;
        auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
        if (ec != std::errc{} || end == name.data()) return std::nullopt;
        const std::string_view rest(end, static_cast<std::size_t>(name.data() + name.size() - end));
        if (rest.empty() || rest == ".ckpt" || rest == ".prev.ckpt" || rest == ".ckpt.tmp") return id;
        return std::nullopt;
    }

    // The first line of a checkpoint file: what it is, whose, at which step, and how long the
    // bytes that follow are (a file cut short is refused, not used).
    [[nodiscard]] static std::string header(TrialId id, const SavedCheckpoint& c) {
        return fmt::format("hypertune-checkpoint 1 trial {} step {} bytes {}\n", id, c.step, c.bytes.size());
    }

    [[nodiscard]] static std::optional<SavedCheckpoint> read_file(const std::filesystem::path& path, TrialId id,
                                                                  std::string& why) {
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            why = "cannot open it";
            return std::nullopt;
        }
        std::string first;
        std::getline(in, first);
        unsigned long long trial = 0, step = 0, size = 0;
        int version = 0;
        if (std::sscanf(first.c_str(), "hypertune-checkpoint %d trial %llu step %llu bytes %llu", &version, &trial, &step,
                        &size) != 4 ||
            version != 1) {
            why = "not a hypertune checkpoint file";
            return std::nullopt;
        }
        if (trial != id) {
            why = fmt::format("it holds trial {}'s checkpoint", trial);
            return std::nullopt;
        }
        // The length is checked against the file before anything is allocated: a damaged header
        // must not ask for terabytes.
        std::error_code ec;
        const auto file_size = std::filesystem::file_size(path, ec);
        if (ec || file_size != first.size() + 1 + size) {
            why = fmt::format("its length is not the {} bytes its header says", size);
            return std::nullopt;
        }
        SavedCheckpoint c;
        c.step = static_cast<Resource>(step);
        c.bytes.resize(static_cast<std::size_t>(size));
        in.read(c.bytes.data(), static_cast<std::streamsize>(size));
        if (static_cast<unsigned long long>(in.gcount()) != size) {
            why = fmt::format("its length is not the {} bytes its header says", size);
            return std::nullopt;
        }
        return c;
    }

    // Without a journal: a temporary directory of this run's own, made by mkdtemp (a name no one
    // can guess, created here or not at all, readable by this user alone). A name made of the
    // process id was taken over by a later process with the same id (the trainer of a new run
    // found an old run's state in its folder), and a link planted under it was followed.
    [[nodiscard]] static std::filesystem::path fresh_temporary_folder() {
        std::error_code ec;
        auto tmp = std::filesystem::temp_directory_path(ec);
        if (ec) tmp = "/tmp";
        std::string pattern = (tmp / "hypertune-checkpoints-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr)
            throw IoError(fmt::format("cannot create a temporary checkpoint folder in '{}': {}", tmp.string(),
                                      std::strerror(errno)));
        return pattern;
    }

    // Every time, not once: a folder removed during the run (by hand, by a clean-up job) comes
    // back, instead of failing every later checkpoint. It is one stat when it is there. Without a
    // journal, the folder is made when first needed.
    void ensure_folder() {
        std::lock_guard lk(mu_);
        if (!on_disk_ && folder_.empty()) {
            folder_ = fresh_temporary_folder();
            return;
        }
        std::error_code ec;
        std::filesystem::create_directories(folder_, ec);
        if (ec) throw IoError(fmt::format("checkpoint folder '{}': cannot create: {}", folder_.string(), ec.message()));
    }

    static void write_synced(const std::filesystem::path& path, const std::string& head, const std::string& bytes) {
        // O_CLOEXEC: no trainer started meanwhile inherits the file.
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) throw IoError(fmt::format("checkpoint '{}': cannot write: {}", path.string(), std::strerror(errno)));
        auto write_all = [&](std::string_view data) {
            while (!data.empty()) {
                const ::ssize_t n = ::write(fd, data.data(), data.size());
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) return false;
                data.remove_prefix(static_cast<std::size_t>(n));
            }
            return true;
        };
        const bool ok = write_all(head) && write_all(bytes) && ::fsync(fd) == 0;
        const int err = errno;
        ::close(fd);
        if (!ok) {
            ::unlink(path.c_str());
            throw IoError(fmt::format("checkpoint '{}': cannot write: {}", path.string(), std::strerror(err)));
        }
    }

    // The rename is durable only once the folder's entry is on disk too.
    void sync_folder() const {
        const int fd = ::open(folder_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) return;
        ::fsync(fd);
        ::close(fd);
    }

    mutable std::mutex mu_;
    std::unordered_map<TrialId, SavedCheckpoint> memory_;  // without a journal
    std::filesystem::path folder_;  // without a journal: empty until ensure_folder() makes it
    const bool on_disk_ = false;
    std::atomic<bool> folders_used_{false};  // a trial folder was asked for
};

}  // namespace hypertune::detail
