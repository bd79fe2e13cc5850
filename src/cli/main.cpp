// main.cpp — the `strait` command: one CLI11 parser whose option table also generates --help.
// Subcommands are implemented one per file (cmd_*.cpp).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.hpp"
#include "core/version.hpp"
#include "trace/h5util.hpp"

int main(int argc, char** argv) {
  strait::h5::init();
  CLI::App app{"strait: train transformers across emulated datacenters joined by slow WAN links"};
  app.set_version_flag("--version", std::string(strait::version()) + " (" + strait::commit() + ")");
  app.require_subcommand(1);

  strait::TrainArgs t;
  auto* train = app.add_subcommand("train", "Run a training job (launch with mpirun -np N)");
  train->add_option("--config", t.config, "TOML config file")->required()->check(CLI::ExistingFile);
  train->add_option("--set", t.sets, "Override a config key: key=value (repeatable)");
  train->add_option("--out", t.out, "Trace path (default: <run.out_dir>/<run.name>.h5)");
  train->add_flag("--force", t.force, "Overwrite an existing trace and checkpoint");
  train->add_option("--resume", t.resume,
                    "Continue from this checkpoint at its step, bit for bit: an existing trace at "
                    "the trace path is continued (its rows from that step on are replaced), else "
                    "a new one names the checkpoint; the checkpoint's splits and batch shares "
                    "hold unless the config's differ and control.balancer is \"static\" (then "
                    "the config's apply, re-splitting at the first step)")
      ->check(CLI::ExistingFile);

  std::string vconfig;
  std::vector<std::string> vsets;
  auto* validate = app.add_subcommand("validate", "Check a config and show what it resolves to (no MPI)");
  validate->add_option("--config", vconfig, "TOML config file")->required()->check(CLI::ExistingFile);
  validate->add_option("--set", vsets, "Override a config key: key=value (repeatable)");

  std::string sconfig;
  std::vector<std::string> ssets;
  double until_s = 3600;
  auto* schedule = app.add_subcommand(
      "schedule", "Print every link's capacity and latency changes in run time, as CSV (no MPI)");
  schedule->add_option("--config", sconfig, "TOML config file")->required()->check(CLI::ExistingFile);
  schedule->add_option("--set", ssets, "Override a config key: key=value (repeatable)");
  schedule->add_option("--until", until_s, "List changes before this many run seconds (default 3600)");

  std::string trace;
  auto* report = app.add_subcommand("report", "Summarise a finished or running trace");
  report->add_option("trace", trace, "Trace file (.h5)")->required();

  strait::LinksArgs l;
  auto* links = app.add_subcommand("links", "Write [[datacenter]]/[[link]] tables from measured "
                                            "inter-region CSVs (docs/links.md; no MPI)");
  links->add_option("--throughput", l.throughput, "CSV src_region,dst_region,gbps")->required();
  links->add_option("--rtt", l.rtt, "CSV src_region,dst_region,avg_rtt_ms (latency = RTT/2)");
  links->add_option("--regions", l.regions, "Region ids, comma-separated, in rank order")
      ->required()->delimiter(',');
  links->add_option("--names", l.names, "Datacenter names, one per region (default: sanitised ids)")
      ->delimiter(',');
  links->add_option("--ranks", l.ranks, "Ranks per datacenter: one value, or one per region (default 1)")
      ->delimiter(',');
  links->add_option("--out", l.out, "Output file (default: stdout)");
  links->add_flag("--force", l.force, "Overwrite an existing --out file");
  links->add_flag("--symmetric-fill", l.symmetric_fill,
                  "A missing direction takes the reverse direction's value (marked in a comment)");
  links->add_option("--attribution", l.attribution,
                    "Data source/licence line for the header (default: the Skyplane attribution)");

  strait::ForecastArgs fa;
  auto* forecast = app.add_subcommand("forecast", "Evaluate every load forecaster on the series of CSV "
                                                  "files: MAE, RMSE, MAPE, MASE (docs/forecast.md; no MPI)");
  forecast->add_option("--series", fa.series, "CSV file, uncompressed, with a header line (repeatable)")
      ->required();
  forecast->add_option("--column", fa.column, "Column of values (default: the last column)");
  forecast->add_option("--group", fa.group, "One series per value of this column; auto: worker or pod "
                                            "if there is one; none: one series per file")
      ->capture_default_str();
  forecast->add_option("--window", fa.window, "Values a GM(1,1) fit and moving-mean use (>= 4)")
      ->capture_default_str();
  forecast->add_option("--horizon", fa.horizon, "Steps ahead each forecast reaches (>= 1)")
      ->capture_default_str();
  forecast->add_option("--states", fa.states, "Markov states of gmc (>= 2)")->capture_default_str();
  forecast->add_option("--alpha", fa.alpha, "EWMA weight of the newest value, in (0, 1]")
      ->capture_default_str();
  forecast->add_option("--skill-window", fa.skill_window,
                       "Past forecasts the skill test of gm11/gmc weighs (0: no test)")
      ->capture_default_str();
  forecast->add_option("--fallback", fa.fallback,
                       "Baseline gm11/gmc fall back to; auto: the most accurate one so far")
      ->capture_default_str();
  forecast->add_option("--out", fa.out, "Write the table and every series' scores as CSV (overwritten)");
  forecast->add_option("--points", fa.points,
                       "Write every forecaster's forecast at every scored point as CSV, with the "
                       "gm11-textbook fit's C, P, a and shift (overwritten)");

  bool markdown = false;
  auto* policies = app.add_subcommand("policies", "List the controller's policies, slot by slot (no MPI)");
  policies->add_flag("--markdown", markdown, "As the Markdown table of docs/config.md");
  app.footer("Policies a config may name in [control]:\n" + strait::policies_brief());

  // CLI11 answers an unknown first word with "A subcommand is required": say what was wrong.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "strait: unknown subcommand '%s'; expected one of %s (strait --help)\n",
                   argv[1], names.c_str());
      return 2;
    }
  }
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
  if (*schedule) return strait::cmd_schedule(sconfig, ssets, until_s);
  if (*links) return strait::cmd_links(l);
  if (*policies) return strait::cmd_policies(markdown);
  if (*forecast) return strait::cmd_forecast(fa);
  return 2;
}
