// commands.hpp — one function per `strait` subcommand (each in its own cmd_*.cpp).
// main.cpp owns the CLI11 parser; these return the process exit status.
#pragma once
#include <string>
#include <vector>

namespace strait {

struct TrainArgs {
  std::string config;
  std::vector<std::string> sets;  // "key=value" overrides
  std::string out;                // trace path override (empty: from config)
  bool force = false;
  std::string resume;             // checkpoint path or empty
};

int cmd_train(const TrainArgs& args);                          // needs MPI (mpirun)
int cmd_validate(const std::string& config, const std::vector<std::string>& sets);  // no MPI
int cmd_report(const std::string& trace_path);                 // no MPI
// `strait schedule`: every link's capacity/latency changes in run time, as CSV (no MPI).
int cmd_schedule(const std::string& config, const std::vector<std::string>& sets, double until_s);

// `strait links`: a link matrix from measured inter-region CSVs, as config tables (no MPI).
struct LinksArgs {
  std::string throughput;            // CSV src_region,dst_region,gbps
  std::string rtt;                   // CSV src_region,dst_region,avg_rtt_ms (empty: none given)
  std::vector<std::string> regions;  // region ids, in world-rank order
  std::vector<std::string> names;    // DC names, one per region (empty: sanitised ids)
  std::vector<int> ranks;            // one value for all, or one per region (empty: 1 each)
  std::string out;                   // output file (empty: stdout)
  std::string attribution;           // header data line (empty: the Skyplane attribution)
  bool symmetric_fill = false;
  bool force = false;
};

int cmd_links(const LinksArgs& args);                          // no MPI

// `strait forecast`: every series forecaster (src/control/series.hpp) evaluated over the series
// of CSV files, offline (no MPI); docs/forecast.md.
struct ForecastArgs {
  std::vector<std::string> series;  // CSV files (uncompressed)
  std::string column;               // the value column (empty: the last column)
  std::string group = "auto";       // one series per value of this column; "auto": worker or
                                    // pod when there is one; "none": the file is one series
  int window = 6, horizon = 1, states = 3, skill_window = 20;
  double alpha = 0.5;               // ewma
  std::string fallback = "auto";
  std::string out;                  // CSV of the table and of every series (empty: none)
  std::string points;               // CSV of every forecast at every point (empty: none)
};

int cmd_forecast(const ForecastArgs& args);                    // no MPI

// `strait policies [--markdown]`: every registered policy of every controller slot, from the
// registry tables (src/control/registry.cpp); docs/config.md holds the Markdown form.
int cmd_policies(bool markdown);
std::string policies_markdown();
// One line per slot ("slot: name, name, ..."), for --help.
std::string policies_brief();

}  // namespace strait
