// The report's comparison with peer implementations (PyTorch eager), judged
// in the run (role "peer") or measured outside it (`report --peer`): per
// perf case, the peer's median per call and, per submission, how many times
// faster its own median is.
#include <fmt/format.h>

#include <algorithm>

#include "harness/core/format.h"
#include "harness/report/markdown_helpers.h"

namespace harness::markdown {

namespace {

// The timing applies to this case result: every metric it names has that value.
bool applies(const PeerTiming& t, const CaseResult& c) {
  for (const auto& [name, value] : t.when.items()) {
    if (!c.metrics.contains(name) || c.metrics[name] != value) return false;
  }
  return true;
}

std::string ratio_cell(const PeerTiming& t, const EntryResult& e) {
  const CaseResult* c = e.find_case(t.case_id);
  if (!c || !applies(t, *c)) return "";
  if (c->verdict != Verdict::pass || !c->timing || c->timing->scored_median_ns() <= 0) {
    return c->verdict == Verdict::pass ? "not timed" : std::string(verdict_name(c->verdict));
  }
  const double median = c->timing->scored_median_ns();
  return fmt::format("{:.2f}x ({})", t.median_ns / median, format_duration_ns(median));
}

}  // namespace

void peers(std::string& out, const Group& g) {
  std::vector<const EntryResult*> columns;
  for (const EntryResult* e : g.ranked) {
    if (!is_peer_role(e->submission.role)) columns.push_back(e);
  }
  for (const PeerTimings* peer : g.peers) {
    std::vector<const PeerTiming*> rows;
    for (const auto& t : peer->timings) {
      if (t.challenge != g.challenge) continue;
      const bool anyone =
          std::any_of(columns.begin(), columns.end(), [&](const EntryResult* e) { return !ratio_cell(t, *e).empty(); });
      if (anyone) rows.push_back(&t);
    }
    if (rows.empty()) continue;
    out += fmt::format("#### Beside {}\n\n", markdown_cell(peer->peer));
    out += fmt::format(
        "{} on the same shapes, measured on {} (`{}`). Each cell: the submission's median per call as a multiple "
        "of the peer's speed (above 1x: faster than {}), then its own median.\n\n",
        markdown_cell(peer->peer), markdown_cell(peer->device), markdown_cell(peer->origin), markdown_cell(peer->peer));
    out += "| Case | " + markdown_cell(peer->peer) + " |";
    for (const EntryResult* e : columns) out += " " + markdown_cell(e->submission.name) + " |";
    out += "\n|---|---:|";
    for (size_t i = 0; i < columns.size(); ++i) out += "---:|";
    out += "\n";
    for (const PeerTiming* t : rows) {
      const std::string what = t->ops.empty() ? "" : " (" + t->ops + ")";
      out += fmt::format("| `{}`{} | {} |", t->case_id, markdown_cell(what), format_duration_ns(t->median_ns));
      for (const EntryResult* e : columns) {
        const std::string cell = ratio_cell(*t, *e);
        out += " " + (cell.empty() ? std::string("-") : cell) + " |";
      }
      out += "\n";
    }
    out += "\n";
  }
}

}  // namespace harness::markdown
