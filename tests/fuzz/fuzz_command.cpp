// SPDX-License-Identifier: MIT
// CommandObjective's text handling, without running any process. The first byte picks one of
// (its value modulo 3):
//   0. trainer output: the rest is what a trainer prints, split into lines by the LineSplitter
//      (in chunks, as pipe reads come) and searched with fixed metric and step definitions, the
//      way CommandRun::read_metrics does (that function is private to a running trial);
//   1. a metric definition (the step regex when byte / 3 is odd, e.g. '4'): the first line is a
//      regex, the other lines are matched with it. A bad regex must be refused by CommandObjective's
//      constructor with an InvalidArgument; a good one must capture exactly what std::regex_search
//      captures (Pattern skips lines by a literal prefix, which must never skip a match);
//   2. a command template: each line is an argument with {placeholders}, expanded for a config.
#include "fuzz_support.hpp"

#include <hypertune/command_objective.hpp>
#include <hypertune/detail/command_lines.hpp>
#include <hypertune/detail/command_metrics.hpp>

#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace hypertune;
using namespace hypertune::detail::command;

std::vector<std::string_view> split_lines(std::string_view text, std::size_t max_lines) {
    std::vector<std::string_view> lines;
    while (!text.empty() && lines.size() < max_lines) {
        auto end = text.find('\n');
        lines.push_back(text.substr(0, end));
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return lines;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// What a decimal number looks like, as a trainer would print it: [+-]? digits [. digits] [e [+-] digits],
// or inf / infinity / nan (from_chars accepts those; the objective then refuses them as non-finite).
bool looks_like_number(std::string_view s) {
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    auto word = s.substr(i);
    auto lower = [](std::string_view w) {
        std::string out(w);
        for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return out;
    };
    auto w = lower(word);
    if (w == "inf" || w == "infinity" || w == "nan" || (w.starts_with("nan(") && w.ends_with(")"))) return true;
    std::size_t digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++digits;
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && is_digit(s[i])) ++i, ++digits;
    }
    if (digits == 0) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        std::size_t exponent = 0;
        while (i < s.size() && is_digit(s[i])) ++i, ++exponent;
        if (exponent == 0) return false;
    }
    return i == s.size();
}

void require_inside(std::string_view part, std::string_view whole, std::string_view what) {
    fuzz::require(part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size()),
                  fmt::format("{}: the capture is not part of the line", what));
}

// --- 0. trainer output -------------------------------------------------------------------------

struct FixedMetrics {
    // The README's definitions and a few more of the forms trainers print.
    std::vector<MetricDefinition> definitions{
        {"validation:loss", R"(validation_loss=([0-9.eE+-]+))"},
        {"train:loss", R"(train[ _]loss: *(\S+))"},
        {"validation:accuracy", R"(acc(?:uracy)?[=:] *([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))"},
        {"throughput", R"(^(\d+) samples/s$)"},
    };
    std::string step_regex = R"(epoch[= ](\d+))";
    std::vector<Pattern> metrics;
    Pattern step{"step_regex", step_regex};

    FixedMetrics() {
        // The same validation as the constructor gives them; a failure here is a bug too.
        (void)CommandObjective({"/bin/sh"}, {.metrics = definitions, .step_regex = step_regex});
        for (const auto& d : definitions) metrics.emplace_back(fmt::format("metric '{}'", d.name), d.regex);
    }
};

// The per-line logic of CommandRun::read_metrics, on a standalone Trial.
struct MetricReader {
    explicit MetricReader(const FixedMetrics& metrics) : fixed(metrics) {}

    const FixedMetrics& fixed;
    Trial trial{0, {}, 1'000'000};
    std::optional<Resource> step;
    Resource objective_lines = 0;

    void line(std::string_view text) {
        if (auto s = fixed.step.capture(text)) {
            require_inside(*s, text, "step_regex");
            auto parsed = parse_number<Resource>(*s);
            if (!parsed) return;  // the real reader fails the trial here
            step = *parsed;
        }
        for (std::size_t m = 0; m < fixed.metrics.size(); ++m) {
            bool ends_match = false;
            auto captured = fixed.metrics[m].capture(text, &ends_match);
            if (!captured) continue;
            require_inside(*captured, text, fixed.definitions[m].name);
            auto value = parse_number<double>(*captured);
            if (value)
                fuzz::require(looks_like_number(trim(*captured)),
                              fmt::format("parse_number<double> read '{}' as {}", *captured, *value));
            bool objective = m == 0;
            if (!value || !std::isfinite(*value)) continue;
            if (ends_match && stops_inside_number(text, *captured)) continue;  // the real reader fails the trial here
            Resource at = objective ? ++objective_lines : objective_lines;
            if (step) at = *step;
            if (objective && at > trial.last_step()) trial.report(at, *value);
        }
    }
};

void trainer_output(fuzz::ByteReader& in) {
    static const FixedMetrics fixed;
    auto max_line = in.flag() ? CommandOptions{}.max_line_bytes : 1 + std::size_t{in.byte()} % 64;
    auto chunk = 1 + std::size_t{in.byte()};
    auto output = in.rest();

    LineSplitter splitter(max_line);
    MetricReader reader{fixed};
    std::size_t emitted = 0;
    auto on_line = [&](std::string_view line, bool cut) {
        fuzz::require(!line.empty(), "LineSplitter emitted an empty line");
        fuzz::require(line.size() <= max_line, fmt::format("a line of {} bytes, the limit is {}", line.size(), max_line));
        fuzz::require(line.find_first_of("\r\n") == std::string_view::npos, "a line holds a line break");
        fuzz::require(!cut || line.size() == max_line, "a cut line is shorter than the limit");
        emitted += line.size();
        fuzz::expect_only_hypertune_errors("metrics", [&] { reader.line(line); });
    };
    for (std::size_t at = 0; at < output.size(); at += chunk) splitter.feed(output.substr(at, chunk), on_line);
    splitter.finish(on_line);
    fuzz::require(emitted <= output.size(), "LineSplitter emitted more bytes than it was given");
}

// --- 1. metric definitions ----------------------------------------------------------------------

// Whether std::regex's backtracking matcher stays fast on a short line with this regex: at most 5
// quantifiers, no doubled one (libstdc++ takes "a**", which ECMAScript refuses), and no * + or
// {n,} on a group that holds a quantifier or an alternation. Other regexes can take exponential
// time; a user who writes one gets what they asked for, so such regexes are only compiled here.
bool backtracks_gently(std::string_view re) {
    int quantifiers = 0;
    std::vector<bool> open_groups;  // per open group: holds a quantifier or an alternation
    bool after_quantifier = false, after_risky_group = false, in_class = false;
    for (std::size_t i = 0; i < re.size(); ++i) {
        char c = re[i];
        if (in_class) {
            if (c == '\\') ++i;
            else if (c == ']') in_class = false;
            continue;
        }
        bool quantifier = c == '*' || c == '+' || c == '{' || (c == '?' && i > 0 && re[i - 1] != '(');
        if (quantifier) {
            if (c == '?' && after_quantifier) continue;  // lazy
            bool unbounded = c != '?';
            if (c == '{') {
                auto close = re.find('}', i);
                auto body = re.substr(i + 1, close == std::string_view::npos ? close : close - i - 1);
                unbounded = !body.empty() && body.back() == ',';
                i = close == std::string_view::npos ? re.size() : close;
            }
            if (after_quantifier || (after_risky_group && unbounded) || ++quantifiers > 5) return false;
            open_groups.assign(open_groups.size(), true);
            after_quantifier = true;
            after_risky_group = false;
            continue;
        }
        after_quantifier = after_risky_group = false;
        switch (c) {
            case '\\': ++i; break;
            case '[': in_class = true; break;
            case '(': open_groups.push_back(false); break;
            case '|':
                if (!open_groups.empty()) open_groups.back() = true;
                break;
            case ')':
                if (open_groups.empty()) break;
                after_risky_group = open_groups.back();
                open_groups.pop_back();
                if (after_risky_group && !open_groups.empty()) open_groups.back() = true;
                break;
            default: break;
        }
    }
    return true;
}

void metric_definition(fuzz::ByteReader& in, bool as_step) {
    auto lines = split_lines(in.rest(), 9);
    if (lines.empty()) return;
    std::string source(lines[0].substr(0, 64));
    CommandOptions options;
    if (as_step) options = {.metrics = {{"loss", "loss=(.*)"}}, .step_regex = source};
    else options = {.metrics = {{"loss", source}}};
    try {
        (void)CommandObjective({"/bin/sh"}, std::move(options));
    } catch (const InvalidArgument& e) {
        fuzz::require(std::string_view(e.what()).starts_with("CommandObjective: "),
                      fmt::format("the error does not name CommandObjective: {}", e.what()));
        return;
    } catch (const std::exception& e) {
        fuzz::fail(fmt::format("regex '{}': {} instead of InvalidArgument: {}", source, typeid(e).name(), e.what()));
    }

    if (source.empty() || !backtracks_gently(source)) return;  // an empty step_regex means none
    Pattern pattern("metric", source);
    std::regex reference(source, std::regex::ECMAScript);
    for (std::size_t i = 1; i < lines.size(); ++i) {
        auto line = lines[i].substr(0, 16);
        auto captured = pattern.capture(line);
        std::cmatch m;
        bool matches = std::regex_search(line.data(), line.data() + line.size(), m, reference);
        fuzz::require(captured.has_value() == matches,
                      fmt::format("regex '{}' on '{}': Pattern says {}, std::regex_search says {}", source, line,
                                  captured.has_value(), matches));
        if (captured) {
            require_inside(*captured, line, "metric");
            std::string_view expected = m[1].matched ? std::string_view(m[1].first, static_cast<std::size_t>(m[1].length()))
                                                     : std::string_view{};
            fuzz::require(*captured == expected, "Pattern captured something else than regex_search");
        }
    }
}

// --- 2. command templates -----------------------------------------------------------------------

void command_template(fuzz::ByteReader& in) {
    static const SearchSpace space{ContinuousParameter("lr", 1e-4, 1.0), IntegerParameter("depth", 1, 10),
                                   CategoricalParameter("kind", {"a b", "{c}", "'d'"})};
    auto lines = split_lines(in.rest(), 8);
    std::vector<std::string> command(lines.begin(), lines.end());
    // The constructor checks that a literal program can be run: that is the file system, not the
    // text handling fuzzed here, so such a program is replaced by one that exists.
    if (!command.empty() && !command[0].empty() && command[0].find_first_of("{}") == std::string::npos)
        command[0] = "/bin/sh";
    std::optional<CommandObjective> objective;
    fuzz::expect_only_hypertune_errors("CommandObjective", [&] {
        objective.emplace(command, CommandOptions{.metrics = {{"loss", "loss=(.*)"}}});
    });
    if (!objective) return;
    fuzz::expect_only_hypertune_errors("CommandObjective::check", [&] { objective->check(space); });
    std::vector<double> u{0.25, 0.5, 0.75};
    Config cfg = space.decode(u);
    Trial trial(7, cfg, 27, 9);
    fuzz::expect_only_hypertune_errors("CommandObjective::arguments", [&] {
        auto argv = objective->arguments(cfg, trial);
        fuzz::require(argv.size() == command.size(), "arguments() changed the number of arguments");
        fuzz::require(!argv[0].empty(), "arguments() gave an empty program");
        for (std::size_t i = 0; i < argv.size(); ++i)
            if (command[i].find_first_of("{}") == std::string::npos)
                fuzz::require(argv[i] == command[i], fmt::format("argument '{}' became '{}'", command[i], argv[i]));
    });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::ByteReader in(data, size);
    auto selector = in.byte();
    switch (selector % 3) {
        case 0: trainer_output(in); break;
        case 1: metric_definition(in, selector / 3 % 2 == 1); break;
        default: command_template(in); break;
    }
    return 0;
}
