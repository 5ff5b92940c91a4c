#include "harness/cli/run_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "harness/cli/argument_checks.h"
#include "harness/cli/progress.h"
#include "harness/core/build_stamp.h"
#include "harness/core/clock.h"
#include "harness/core/files.h"
#include "harness/core/format.h"
#include "harness/core/system_info.h"
#include "harness/device/peak_cache.h"
#include "harness/device_memory/device_memory.h"
#include "harness/report/junit_report.h"
#include "harness/report/markdown_report.h"
#include "harness/results/results_json.h"
#include "harness/runner/runner.h"
#include "harness/sandbox/sandbox.h"
#include "harness/scoring/scoring.h"
#include "harness/submissions/catalog.h"
#include "harness/witness/witness_parts.h"

namespace harness {

uint64_t fresh_seed() {
  std::random_device device;
  // Nine decimal digits: short enough to type, plenty for fresh inputs.
  return (static_cast<uint64_t>(device()) << 32 | device()) % 1000000000ULL;
}

std::string shell_join(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    const bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?[]{}();&|<>!#~") == std::string::npos;
    if (!plain) {
      std::string quoted = "'";
      for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      arg = quoted + "'";
    }
    out += (i ? " " : "") + arg;
  }
  return out;
}

namespace {

RunInfo run_header(const SessionOptions& options) {
  RunInfo run;
  run.harness_version = HARNESS_VERSION;
  run.started = utc_timestamp();
  run.git_commit = built_from_commit();
  run.command_line = options.command_line;
  run.seed = options.settings.seed;
  run.host = query_host();
  run.options = {{"quick", options.selection.quick},
                 {"device", options.selection.device},
                 {"call_timeout_s", options.settings.call_timeout_s},
                 {"with_mutants", options.selection.with_mutants}};
  if (options.selection.shard) {
    run.options["shard"] = fmt::format("{}/{}", options.selection.shard->first, options.selection.shard->second);
  }
  // Whose memory the workers computed in, where not the default's.
  if (const std::string memory = device_memory_option(device_memory_choice()); !memory.empty()) {
    run.options["device_memory"] = memory;
  }
  run.sandbox = sandbox_description();
  if (options.settings.sanitizer) {
    run.options["sanitize"] = options.settings.sanitizer->tool;
    run.sandbox["under_sanitizer"] = fmt::format(
        "CUDA workers ran under {} ({}): no seccomp filter and no Landlock rules for them, their limits kept",
        options.settings.sanitizer->program, options.settings.sanitizer->tool);
  }
  if (const auto off = disabled_witness_parts(); !off.empty()) {
    run.options["witness_disabled"] = off;
    std::fprintf(stderr, "harness: witness: switched off by HARNESS_WITNESS_DISABLE: %s\n",
                 nlohmann::json(off).dump().c_str());
  }
  return run;
}

}  // namespace

int run_exit_code(const RunResults& results) {
  for (const auto& e : results.entries) {
    if (is_unranked_role(e.submission.role) || is_peer_role(e.submission.role)) continue;
    for (const auto& c : e.cases) {
      if (is_failure(c.verdict) || c.verdict == Verdict::harness_error) return 1;
    }
  }
  return 0;
}

namespace {

// Every file the run will write, checked before any work: a bad path found
// after the run would hide its verdicts behind exit 2 or 3.
void check_outputs(const SessionOptions& options) {
  const std::vector<std::pair<std::string, std::string>> outputs = {
      {"-o", options.json_path}, {"--md", options.markdown_path}, {"--junit", options.junit_path}};
  for (const auto& [option, path] : outputs) {
    if (!path.empty()) check_output_path(option, path);
  }
  check_distinct_outputs(outputs);
}

}  // namespace

// A device's ceilings measured again in full before a speed is called
// impossible, and the best figures kept in this host's cache.
SpeedOfLight this_hosts_speed_of_light() {
  return SpeedOfLight([](const DeviceInfo& device) { return measure_peak(device, false); },
                      [](const DeviceInfo& device, const PeakBandwidth& best) {
                        try {
                          return remember_peak(peak_cache_path(), peak_cache_key(device, query_host()), best);
                        } catch (const std::exception& e) {
                          std::fprintf(stderr, "harness: the raised peak of %s was not cached: %s\n", device.id.c_str(),
                                       e.what());
                          return best;
                        }
                      });
}

RunResults run_session(const SessionOptions& options) {
  check_outputs(options);
  const Catalog catalog = Catalog::load(Catalog::default_index_path());
  std::vector<DeviceInfo> devices = discover_devices();
  const RunPlan plan = make_plan(options.selection, catalog, devices);
  const bool quiet = options.verbosity == Verbosity::quiet;

  std::fprintf(stderr, "harness: seed %llu%s\n", static_cast<unsigned long long>(options.settings.seed),
               options.seed_given
                   ? ""
                   : fmt::format(" (re-run with --seed {} for the same inputs)", options.settings.seed).c_str());
  for (const auto& note : plan.notes) std::fprintf(stderr, "harness: %s\n", note.c_str());
  if (options.settings.sanitizer && std::none_of(plan.entries.begin(), plan.entries.end(), [](const PlannedEntry& e) {
        return !e.control && e.device->kind == "cuda" && e.device->available && e.build.status == "ok";
      })) {
    std::fprintf(stderr, "harness: --sanitize: no CUDA worker runs in this selection; nothing runs under %s\n",
                 options.settings.sanitizer->program.c_str());
  }
  if (plan.entries.empty()) std::fprintf(stderr, "harness: nothing to run for this selection\n");

  // Before anything slow, this run's header replaces any earlier results
  // file: a run killed before its first case must not leave another run's
  // complete results looking like its own.
  const RunInfo run_info = run_header(options);
  if (!options.json_path.empty()) {
    RunResults header;
    header.run = run_info;
    header.devices = devices;
    write_file_atomically(options.json_path, to_json(header).dump(1) + "\n");
  }

  // Each device the plan uses gets its peak once: this host's cached
  // measurement, or one taken now (and cached).
  for (DeviceInfo& d : devices) {
    bool used = false;
    for (const auto& e : plan.entries) used = used || e.device == &d;
    if (!used || !d.available) continue;
    if (!quiet && options.measure_peak)
      std::fprintf(stderr, "harness: measuring the bandwidth of %s (%s)...\n", d.id.c_str(), d.name.c_str());
    std::string note;
    d.peak =
        obtain_peak(d, options.selection.quick, options.measure_peak ? PeakSource::measure : PeakSource::cache, note);
    if (!quiet) {
      std::fprintf(stderr, "harness: %s peak: copy %s, read %s, write %s; %s\n", d.id.c_str(),
                   format_bandwidth(d.peak->copy_bytes_per_second).c_str(),
                   format_bandwidth(d.peak->read_bytes_per_second).c_str(),
                   format_bandwidth(d.peak->write_bytes_per_second).c_str(), note.c_str());
    }
  }

  RunResults results;
  results.run = run_info;
  results.devices = devices;

  auto write_json = [&](RunResults& r) {
    if (options.json_path.empty()) return;
    score_results(r);
    write_file_atomically(options.json_path, to_json(r).dump(1) + "\n");
  };
  ProgressPrinter progress(plan.case_count(), options.verbosity);
  SpeedOfLight speed_of_light = this_hosts_speed_of_light();
  execute_plan(
      plan, options.settings, results, progress, [&](const RunResults&) { write_json(results); }, speed_of_light);
  for (const auto& [device, peak] : speed_of_light.raised()) {
    std::fprintf(stderr,
                 "harness: %s peak measured again during the run, a case having come above its roofline: copy %s, "
                 "read %s, write %s (the best of %d measurements, cached)\n",
                 device.c_str(), format_bandwidth(peak.copy_bytes_per_second).c_str(),
                 format_bandwidth(peak.read_bytes_per_second).c_str(),
                 format_bandwidth(peak.write_bytes_per_second).c_str(), peak.measurements);
  }

  results.run.finished = utc_timestamp();
  results.run.complete = true;
  score_results(results);
  write_json(results);
  if (!options.markdown_path.empty()) write_file_atomically(options.markdown_path, render_markdown(results));
  if (!options.junit_path.empty()) write_file_atomically(options.junit_path, render_junit(results));
  if (!quiet) progress.print_summary(results);
  for (const auto* path : {&options.json_path, &options.markdown_path, &options.junit_path}) {
    if (!path->empty()) std::fprintf(stderr, "harness: wrote %s\n", path->c_str());
  }
  return results;
}

}  // namespace harness
