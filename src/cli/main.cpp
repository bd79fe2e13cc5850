// main.cpp — the `strait` command: one CLI11 parser whose option table also generates --help.
// Subcommands are implemented one per file (cmd_*.cpp).
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"strait: train transformers across emulated datacenters joined by slow WAN links"};
  app.set_version_flag("--version", std::string(STRAIT_VERSION) + " (" + STRAIT_GIT_COMMIT + ")");
  app.require_subcommand(1);

  strait::TrainArgs t;
  auto* train = app.add_subcommand("train", "Run a training job (launch with mpirun -np N)");
  train->add_option("--config", t.config, "TOML config file")->required()->check(CLI::ExistingFile);
  train->add_option("--set", t.sets, "Override a config key: key=value (repeatable)");
  train->add_option("--out", t.out, "Trace path (default: <run.out_dir>/<run.name>.h5)");
  train->add_flag("--force", t.force, "Overwrite an existing trace and checkpoint");
  train->add_option("--resume", t.resume, "Continue from this checkpoint")->check(CLI::ExistingFile);

  std::string vconfig;
  std::vector<std::string> vsets;
  auto* validate = app.add_subcommand("validate", "Check a config and show what it resolves to (no MPI)");
  validate->add_option("--config", vconfig, "TOML config file")->required()->check(CLI::ExistingFile);
  validate->add_option("--set", vsets, "Override a config key: key=value (repeatable)");

  std::string trace;
  auto* report = app.add_subcommand("report", "Summarise a finished or running trace");
  report->add_option("trace", trace, "Trace file (.h5)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message; usage errors exit 2 like config errors.
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (*train) return strait::cmd_train(t);
  if (*validate) return strait::cmd_validate(vconfig, vsets);
  if (*report) return strait::cmd_report(trace);
  return 2;
}
