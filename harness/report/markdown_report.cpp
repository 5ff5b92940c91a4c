#include "harness/report/markdown_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "harness/core/format.h"
#include "harness/definitions/challenge_config.h"
#include "harness/report/markdown_sections.h"

namespace harness {

namespace {

// How and when the peak was measured, and whether this run measured it or
// used the host's cached figure: scores move with it.
std::string peak_provenance(const PeakBandwidth& p) {
  std::string text = fmt::format("peak by {}{}", p.method, p.quick ? " (quick)" : "");
  if (!p.measured_at.empty()) text += fmt::format(", measured {}", p.measured_at);
  if (!p.cached_from.empty()) text += " (this host's cached figure)";
  return text;
}

std::string title_of(const std::string& challenge) {
  try {
    return challenge_config(challenge).title;
  } catch (const std::exception&) {
    return challenge;
  }
}

template <typename T, typename Key>
std::vector<Key> ordered_unique(const std::vector<T>& items, Key (*key)(const T&)) {
  std::vector<Key> keys;
  for (const auto& item : items) {
    const Key k = key(item);
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  return keys;
}

std::string challenge_of(const EntryResult& e) { return e.challenge; }
std::string device_of(const EntryResult& e) { return e.device; }

// Submissions x challenges, one table per device: the overall and grade.
// " (its name)", or why nothing ran on it: a machine without that device
// judged its submissions on their build only.
std::string device_note(const DeviceInfo* d) {
  if (!d) return "";
  if (!d->available) return " (not on this machine: builds judged, cases not run)";
  return " (" + d->name + ")";
}

void cross_summary(std::string& out, const RunResults& r) {
  const auto challenges = ordered_unique(r.entries, &challenge_of);
  const auto devices = ordered_unique(r.entries, &device_of);
  out += "## Summary\n\n";
  for (const auto& device : devices) {
    std::vector<std::string> names;
    for (const auto& e : r.entries) {
      if (e.device == device && !is_unranked_role(e.submission.role) &&
          std::find(names.begin(), names.end(), e.submission.name) == names.end()) {
        names.push_back(e.submission.name);
      }
    }
    if (names.empty()) continue;
    const DeviceInfo* d = r.device(device);
    out += fmt::format("On **{}**{}:\n\n| Submission |", device, device_note(d));
    for (const auto& c : challenges) out += " " + c + " |";
    out += "\n|---|";
    for (size_t i = 0; i < challenges.size(); ++i) out += "---:|";
    out += "\n";
    for (const auto& name : names) {
      out += "| " + markdown_cell(name) + " |";
      for (const auto& c : challenges) {
        const EntryResult* found = nullptr;
        for (const auto& e : r.entries) {
          if (e.device == device && e.challenge == c && e.submission.name == name) found = &e;
        }
        out +=
            found && found->scores ? fmt::format(" {:.1f} {} |", found->scores->overall, found->scores->grade) : " - |";
      }
      out += "\n";
    }
    out += "\n";
  }
}

void environment(std::string& out, const ReportInput& input) {
  out += "## Environment\n\n";
  for (const auto& named : input.runs) {
    const RunInfo& run = named.results.run;
    out += fmt::format("- {}: harness {}, commit {}, seed {}, {} to {}{}\n", markdown_code(named.origin),
                       markdown_cell(run.harness_version), markdown_code(run.git_commit), run.seed, run.started,
                       run.finished.empty() ? "(not finished)" : run.finished, run.complete ? "" : ", **incomplete**");
    out += fmt::format("  - host {}: {}, {} logical cores, {} memory, {}\n", run.host.hostname, run.host.cpu_model,
                       run.host.logical_cores, format_bytes(static_cast<double>(run.host.memory_bytes)), run.host.os);
    out += markdown::machine_load_line(named.results);
    // Runs whose verdicts came another way than a plain run's say so.
    if (const auto tool = run.options.find("sanitize"); tool != run.options.end() && tool->is_string()) {
      out += fmt::format(
          "  - sanitized: CUDA workers ran under compute-sanitizer {}, its first error a verdict of "
          "the case; no perf cases, no memory witness for them\n",
          markdown_cell(tool->get<std::string>()));
    }
    if (const auto memory = run.options.find("device_memory"); memory != run.options.end() && memory->is_string()) {
      out += fmt::format(
          "  - device memory: {} (HARNESS_DEVICE_MEMORY): workers computed in twins the harness "
          "owns\n",
          markdown_cell(memory->get<std::string>()));
    }
  }
  out +=
      "\n| Device | Name | Units | Memory | Cache | Copy peak | Read peak | Write peak | Ceiling | Details |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& d : input.combined.devices) {
    if (!d.available) {
      out += fmt::format("| {} | not available | | | | | | | | {} |\n", d.id, markdown_cell(d.unavailable_reason));
      continue;
    }
    std::string details = d.kind == "cuda" ? fmt::format("sm {}, driver {}, runtime {}", d.compute_capability,
                                                         d.driver_version, d.runtime_version)
                                           : "";
    if (d.peak) details += fmt::format("{}{}", details.empty() ? "" : "; ", peak_provenance(*d.peak));
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", d.id, d.name, d.compute_units,
        format_bytes(static_cast<double>(d.memory_bytes)), format_bytes(static_cast<double>(d.cache_bytes)),
        d.peak ? format_bandwidth(d.peak->copy_bytes_per_second) : "-",
        d.peak ? format_bandwidth(d.peak->read_bytes_per_second) : "-",
        d.peak && d.peak->write_bytes_per_second > 0 ? format_bandwidth(d.peak->write_bytes_per_second) : "-",
        d.peak ? format_bandwidth(d.peak->ceiling_bytes_per_second()) : "-", details);
  }
  out += "\n";
}

}  // namespace

std::string render_markdown(const ReportInput& input) {
  const RunResults& r = input.combined;
  std::string out = "# Kernel harness report\n\n";
  if (!r.run.complete)
    out += "> **Incomplete**: a run below did not finish; this report shows what it measured before it stopped.\n\n";
  cross_summary(out, r);
  for (const auto& challenge : ordered_unique(r.entries, &challenge_of)) {
    out += fmt::format("## {}: {}\n\n", challenge, title_of(challenge));
    for (const auto& device_id : ordered_unique(r.entries, &device_of)) {
      markdown::Group g;
      g.challenge = challenge;
      g.device = r.device(device_id);
      // Peers judged in the run sit in the tables beside the submissions
      // and are what "x times" is measured against.
      std::vector<PeerTimings> judged;
      for (const auto& e : r.entries) {
        if (e.challenge != challenge || e.device != device_id) continue;
        (is_unranked_role(e.submission.role) ? g.mutants : g.ranked).push_back(&e);
        if (is_peer_role(e.submission.role) && g.device) {
          judged.push_back(judged_peer_timings(e, g.device->id + " (" + g.device->name + ")", g.device->kind));
        }
      }
      for (const PeerTimings& peer : judged) g.peers.push_back(&peer);
      if (g.ranked.empty() && g.mutants.empty()) continue;
      for (const auto& review : input.reviews) {
        const bool reviewed_here = std::any_of(g.ranked.begin(), g.ranked.end(), [&](const EntryResult* e) {
          return e->submission.name == review.submission;
        });
        if (review.challenge == challenge && reviewed_here) g.reviews.push_back(&review);
      }
      for (const auto& peer : input.peers) {
        if (g.device && g.device->kind == peer.device_kind) g.peers.push_back(&peer);
      }
      out += fmt::format("### {} on {}{}\n\n", challenge, device_id, device_note(g.device));
      markdown::summary(out, g);
      markdown::failures(out, g, Suite::correctness, "Correctness (core cases)");
      markdown::failures(out, g, Suite::edge, "Edge cases");
      markdown::stability(out, g);
      markdown::performance(out, g);
      markdown::peers(out, g);
      markdown::series(out, g);
      markdown::completeness(out, g);
      markdown::timing_witness(out, g);
      markdown::memory(out, g);
      markdown::mutants(out, g);
    }
  }
  environment(out, input);
  out += "## Reproduce\n\n";
  for (const auto& named : input.runs) {
    out += fmt::format("- {}: {}\n", markdown_code(named.origin), markdown_code(named.results.run.command_line));
  }
  out += "\nEvery failing case above lists the command that re-runs it alone with the same inputs.\n";
  return out;
}

std::string render_markdown(const RunResults& results) {
  return render_markdown(combine_for_report({{"this run", results}}));
}

}  // namespace harness
