// harness peak [--device cpu|cuda|all] [--quick]: measure and print each
// device's bandwidth ceilings, and store them as this host's peaks, which
// later runs use instead of measuring again.
#include <cstdio>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/core/error.h"
#include "harness/core/format.h"
#include "harness/device/device_info.h"
#include "harness/device/peak_cache.h"

namespace harness {

namespace {
struct PeakArguments {
  std::string device = "all";
  bool quick = false;
};

int peak(const PeakArguments& args) {
  bool any = false;
  for (const auto& d : discover_devices()) {
    if (args.device != "all" && d.kind != args.device) continue;
    if (!d.available) {
      if (args.device == d.kind) throw UsageError(fmt::format("--device {}: {}", d.kind, d.unavailable_reason));
      std::printf("%s: not available: %s\n", d.id.c_str(), d.unavailable_reason.c_str());
      continue;
    }
    std::string note;
    const PeakBandwidth p = obtain_peak(d, args.quick, PeakSource::measure, note);
    any = true;
    std::printf("%s (%s)\n", d.id.c_str(), d.name.c_str());
    std::printf("  copy     %s  (bytes read + written; %s, %s arrays, best of %d%s)\n",
                format_bandwidth(p.copy_bytes_per_second).c_str(), p.method.c_str(),
                format_bytes(p.buffer_bytes).c_str(), p.repetitions,
                p.threads ? fmt::format(", {} threads", p.threads).c_str() : "");
    std::printf("  read     %s  (read-only sweep)\n", format_bandwidth(p.read_bytes_per_second).c_str());
    std::printf("  write    %s  (write-only fill)\n", format_bandwidth(p.write_bytes_per_second).c_str());
    std::printf("  ceiling  %s  (speed of light: results beyond it are flagged)\n",
                format_bandwidth(p.ceiling_bytes_per_second()).c_str());
    std::printf("  %s\n", note.c_str());
  }
  return any ? 0 : 2;
}
}  // namespace

void add_peak_command(CLI::App& app, CommandLine& command_line) {
  auto args = std::make_shared<PeakArguments>();
  CLI::App* cmd = app.add_subcommand(
      "peak", "Measure each device's bandwidth ceilings, print them and store them for later runs on this host");
  cmd->add_option("--device", args->device, "cpu, cuda or all available (default)")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  cmd->add_flag("--quick", args->quick, "Smaller arrays, fewer repetitions");
  cmd->callback([args, &command_line] { command_line.action = [args] { return peak(*args); }; });
}

}  // namespace harness
