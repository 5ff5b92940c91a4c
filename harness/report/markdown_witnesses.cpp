// The report's sections on what the harness witnessed itself beside what
// each worker claimed: memory (host and device) and timing (its clock
// around the timed requests, and a GPU worker's staged rounds).
#include <fmt/format.h>

#include <optional>
#include <utility>

#include "harness/core/format.h"
#include "harness/report/markdown_helpers.h"
#include "harness/report/markdown_sections.h"

namespace harness::markdown {

namespace {

// The largest value of `metric` over an entry's cases, and the case; none
// when no case holds it.
std::optional<std::pair<double, std::string>> largest(const EntryResult& e, const std::string& metric) {
  std::optional<std::pair<double, std::string>> best;
  for (const auto& c : e.cases) {
    if (!c.metrics.contains(metric) || !c.metrics[metric].is_number()) continue;
    const double value = c.metrics[metric].get<double>();
    if (!best || value > best->first) best = std::make_pair(value, c.id);
  }
  return best;
}

std::string bytes_cell(const std::optional<std::pair<double, std::string>>& value) {
  return value ? fmt::format("{} (`{}`)", format_bytes(value->first), value->second) : "-";
}

// The device cell: the largest growth, or why a GPU worker had no reading.
std::string device_cell(const EntryResult& e) {
  if (const auto device = largest(e, "witnessed_device_memory_bytes")) return bytes_cell(device);
  for (const auto& c : e.cases) {
    if (c.metrics.contains("device_memory_witness"))
      return markdown_cell(c.metrics["device_memory_witness"].get<std::string>(), 80);
  }
  return "-";
}

// The ratio of the median request's time left for its calls to its claim.
std::string excess_cell(const std::optional<double>& excess) {
  if (!excess) return "-";  // results from before it was recorded
  if (*excess >= 1e300) return "claimed nothing";
  return fmt::format("{:.2f}x", *excess);
}

// What the clock saw of a request beyond the calls' claims, on average,
// beside what the witness allowed a request: for an honest worker the cost
// of a request, which the allowance must cover and should not much exceed
// (the room it leaves is what a claim can hide).
std::string beyond_claims_cell(const TimingResult::Witness& w) {
  if (w.requests == 0) return "-";
  const double requests = static_cast<double>(w.requests);
  return fmt::format("{} ({} allowed)",
                     format_duration_ns((w.request_ns - w.staging_counted_ns - w.calls_ns) / requests),
                     format_duration_ns(w.overhead_ns / requests));
}

}  // namespace

void memory(std::string& out, const Group& g) {
  const std::string claim = report_settings(g.challenge).value("memory_claim_metric", "");
  if (claim.empty()) return;
  std::string rows;
  for (const auto* e : g.ranked) {
    const auto claimed = largest(*e, claim);
    // A CPU worker's host memory, or a GPU worker's.
    auto host = largest(*e, "witnessed_memory_bytes");
    if (!host) host = largest(*e, "witnessed_host_memory_bytes");
    const std::string device = device_cell(*e);
    if (!claimed && !host && device == "-") continue;
    rows += fmt::format("| {} | {} | {} | {} |\n", markdown_cell(e->submission.name), bytes_cell(claimed),
                        bytes_cell(host), device);
  }
  if (rows.empty()) return;
  out += fmt::format(
      "#### Memory: claimed and witnessed\n\n"
      "The most each submission reported (`{}`) beside the most the harness saw it hold beyond its "
      "baseline. On the host, the worker's own resident memory, anonymous and shared (the harness's "
      "shared tensors, a declared saved state among them, are not in it; pages reserved but never "
      "touched are not either; for a process submission, every process of its group and the files "
      "it keeps in its scratch folder): far above the claim it is `understated_memory`. A GPU "
      "worker's host memory, pinned memory among it, is judged the same way with an allowance of "
      "64 MiB for its runtime's share. On a GPU, the device memory the driver reports for the "
      "worker: what it holds beyond the claim, past what a sound GPU submission may hold besides "
      "(64 MiB of context and scratch, and for a kv_cache its pool up to the budget and an attend's "
      "scores), is "
      "`understated_memory` when far above the claim, and counts in the memory score "
      "otherwise.\n\n| Submission | Claimed | Witnessed on the host | Witnessed on the device |\n"
      "|---|---|---|---|\n{}\n",
      claim, rows);
}

void timing_witness(std::string& out, const Group& g) {
  std::string rows;
  bool staged = false;
  for (const auto& id : case_ids(g, Suite::perf)) {
    for (const auto* e : g.ranked) {
      const CaseResult* c = e->find_case(id);
      if (!c || !c->timing || !c->timing->witness) continue;
      const TimingResult& t = *c->timing;
      const TimingResult::Witness& w = *t.witness;
      std::string staging = "-";
      if (w.staged) {
        staged = true;
        const double per_round = w.requests ? w.staging_ns / static_cast<double>(w.requests) : 0.0;
        staging = format_duration_ns(per_round) + " a request";
        // No allowance where the judgement was switched off, or in results
        // from before it was recorded: nothing was counted against one.
        staging += w.staging_allowed_ns
                       ? fmt::format(" ({} allowed), {} counted", format_duration_ns(*w.staging_allowed_ns),
                                     format_duration_ns(w.staging_counted_ns))
                       : " (no allowance recorded)";
      }
      rows += fmt::format("| `{}` | {} | {} | {} | {}{} | {} | {} | {} |\n", id, markdown_cell(e->submission.name),
                          verdict_name(c->verdict), format_duration_ns(t.summary.median),
                          format_duration_ns(w.floor_ns), t.raised_to_floor() ? " (scored)" : "",
                          excess_cell(w.median_excess), beyond_claims_cell(w), staging);
    }
  }
  if (rows.empty()) return;
  out +=
      "#### Timing: claimed and witnessed\n\n"
      "What each worker claimed for its timed calls beside the harness's own clock around its requests "
      "(`docs/ARCHITECTURE.md`, Witnesses). Floor: the shortest time per call the witness allows, scored in place "
      "of a faster claim. Excess: in the median request of timed calls, the time the clock left for the calls "
      "(less the stated overhead) over the time claimed for them; beyond 1.5x the claim is `forged_timing`. "
      "Beyond the claims: what the clock saw of a request beyond its calls' claimed times, on average, beside "
      "what the witness allows a request (its messages, the timed loop's own work between calls).";
  if (staged) {
    out +=
        " Staging: a GPU worker's uploads and downloads around its timed requests, on average per request, beside "
        "what one round may take; the time beyond that is counted as the calls'.";
  }
  out +=
      "\n\n| Case | Submission | Verdict | Claimed median | Floor | Excess | Beyond the claims, a request | Staging "
      "|\n|---|---|---|---:|---:|---:|---:|---|\n" +
      rows + "\n";
}

}  // namespace harness::markdown
