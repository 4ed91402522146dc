// SPDX-License-Identifier: MIT
#pragma once
// hypertune::mpi::GroupTrial: what a group objective sees of its trial on every rank of the group
// (the methods of hypertune::Trial, collective over the group, plus the group's communicator), and
// the shapes a group objective may have (GroupObjective).

#include <hypertune/config.hpp>
#include <hypertune/metrics.hpp>
#include <hypertune/mpi/channel.hpp>
#include <hypertune/types.hpp>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hypertune::mpi {

/// What the objective sees of its trial on every rank of a group: the same methods as
/// hypertune::Trial, plus the group's communicator. report() is collective over the group.
class GroupTrial {
public:
    GroupTrial(const GroupTrial&) = delete;
    GroupTrial& operator=(const GroupTrial&) = delete;

    [[nodiscard]] TrialId id() const noexcept { return id_; }
    [[nodiscard]] const Config& config() const noexcept { return config_; }
    /// The resource (epochs, rounds...) this run of the trial may reach in total.
    [[nodiscard]] Resource budget() const noexcept { return budget_; }
    /// > 0 only when the trial continues from checkpoint(); 0: start from scratch.
    [[nodiscard]] Resource resumed_from() const noexcept { return resumed_from_; }

    /// The group's communicator (ranks of this trial only), its size and this rank in it.
    [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }
    [[nodiscard]] int rank() const noexcept { return rank_; }
    [[nodiscard]] int size() const noexcept { return size_; }
    /// The group's ranks in the communicator given to fit(), in group-rank order (ascending).
    [[nodiscard]] const std::vector<int>& world_ranks() const noexcept { return world_ranks_; }
    /// The leader (rank 0 of the group) is the rank that talks to the coordinator.
    [[nodiscard]] bool is_leader() const noexcept { return rank_ == 0; }

    /// Reports the objective metric after `step` units. Collective: every rank of the group calls
    /// it at the same steps; the leader's value is reported. Throws InvalidArgument on every rank
    /// when the coordinator rejects the report (steps must increase, values be finite).
    void report(Resource step, double value) {
        std::string reply;
        if (is_leader()) {
            channel_->send(0, detail::report_tag, detail::pack(detail::ReportMessage{step, value}));
            reply = channel_->receive(0, detail::reply_tag).second;
        }
        detail::broadcast(reply, 0, internal_, *group_channel_);
        if (reply.empty()) throw Error("hypertune::mpi: empty reply to a report");
        last_step_ = step;
        last_value_ = value;
        ++reports_;
        if (reply[0] == detail::reply_stop) stop_ = true;
        if (reply[0] == detail::reply_error) throw InvalidArgument(reply.substr(1));
    }

    /// True once the strategy stopped this trial or the run is ending; the same on every rank.
    [[nodiscard]] bool should_stop() const noexcept { return stop_; }

    /// Keeps a checkpoint for when the trial resumes. Only the leader's is kept (it is sent to the
    /// coordinator at once); on the other ranks this only replaces the local copy.
    void save_checkpoint(std::string bytes) {
        if (is_leader()) channel_->send(0, detail::save_tag, bytes);
        checkpoint_ = std::move(bytes);
    }
    [[nodiscard]] const std::optional<std::string>& checkpoint() const noexcept { return checkpoint_; }

    [[nodiscard]] Resource last_step() const noexcept { return last_step_; }
    [[nodiscard]] std::optional<double> last_value() const noexcept { return last_value_; }
    [[nodiscard]] std::size_t reports() const noexcept { return reports_; }

private:
    friend struct GroupTrialAccess;

    GroupTrial(TrialId id, Resource budget, Resource resumed_from, std::optional<std::string> checkpoint, MPI_Comm comm,
               MPI_Comm internal, detail::Channel& channel, detail::Channel& group_channel)
        : id_(id), budget_(budget), resumed_from_(resumed_from), last_step_(resumed_from),
          checkpoint_(std::move(checkpoint)), comm_(comm), internal_(internal), channel_(&channel),
          group_channel_(&group_channel) {
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
    }

    TrialId id_;
    Config config_;
    Resource budget_;
    Resource resumed_from_;
    Resource last_step_;
    std::optional<double> last_value_;
    std::size_t reports_ = 0;
    std::optional<std::string> checkpoint_;
    bool stop_ = false;
    MPI_Comm comm_;
    MPI_Comm internal_;  // a duplicate of comm_ for our own collectives
    detail::Channel* channel_;
    detail::Channel* group_channel_;
    int rank_ = 0;
    int size_ = 1;
    std::vector<int> world_ranks_;
};

/// What a group objective may return: a number, or hypertune::Metrics for a run with several
/// objectives or constraints (TunerOptions::objectives / constraints).
template <class R>
concept GroupObjectiveResult = std::convertible_to<R, double> || std::convertible_to<R, Metrics>;

/// The objective: R(const Config&, GroupTrial&) or R(const Config&, GroupTrial&, MPI_Comm group),
/// where R is double or hypertune::Metrics.
template <class F>
concept GroupObjective =
    (std::invocable<F&, const Config&, GroupTrial&> &&
     GroupObjectiveResult<std::invoke_result_t<F&, const Config&, GroupTrial&>>) ||
    (std::invocable<F&, const Config&, GroupTrial&, MPI_Comm> &&
     GroupObjectiveResult<std::invoke_result_t<F&, const Config&, GroupTrial&, MPI_Comm>>);

namespace detail {

template <class F>
using group_result_t = std::conditional_t<std::invocable<F&, const Config&, GroupTrial&, MPI_Comm>,
                                          std::invoke_result<F&, const Config&, GroupTrial&, MPI_Comm>,
                                          std::invoke_result<F&, const Config&, GroupTrial&>>::type;

/// True when the objective returns Metrics (several objectives or constraints), not a number.
template <class F>
inline constexpr bool returns_metrics_v = !std::convertible_to<group_result_t<F>, double>;

// The objective's answer as the leader sends it: 8 bytes of double, or the metrics as JSON
// ([[name, value], ...], a non-finite value as null, read back as NaN so the tuner names it).
template <class F>
std::string call_objective(F& objective, const Config& cfg, GroupTrial& trial) {
    auto call = [&]() -> decltype(auto) {
        if constexpr (std::invocable<F&, const Config&, GroupTrial&, MPI_Comm>) return objective(cfg, trial, trial.comm());
        else return objective(cfg, trial);
    };
    if constexpr (returns_metrics_v<F>) {
        const Metrics m = call();
        nlohmann::json j = nlohmann::json::array();
        for (const auto& [name, value] : m.values())
            j.push_back({name, std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr)});
        return j.dump();
    } else {
        return pack(static_cast<double>(call()));
    }
}

inline Metrics metrics_from(const std::string& bytes) {
    Metrics m;
    for (const auto& item : nlohmann::json::parse(bytes))
        m.set(item.at(0).get<std::string>(),
              item.at(1).is_null() ? std::numeric_limits<double>::quiet_NaN() : item.at(1).get<double>());
    return m;
}

}  // namespace detail

// Builds GroupTrials (their constructor is private so users cannot make one detached from a group).
struct GroupTrialAccess {
    static GroupTrial make(TrialId id, Resource budget, Resource resumed_from, std::optional<std::string> checkpoint,
                           MPI_Comm comm, MPI_Comm internal, detail::Channel& channel, detail::Channel& group_channel) {
        return GroupTrial(id, budget, resumed_from, std::move(checkpoint), comm, internal, channel, group_channel);
    }
    static void set_config(GroupTrial& t, Config c) { t.config_ = std::move(c); }
    static void set_world_ranks(GroupTrial& t, std::vector<int> ranks) { t.world_ranks_ = std::move(ranks); }
};

}  // namespace hypertune::mpi
