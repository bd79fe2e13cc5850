// link_matrix.hpp — link matrices from real measurements: read inter-region tables (CSV rows
// `src_region,dst_region,<value>`, e.g. the Skyplane throughput and RTT data), pick a list of
// regions, and build the directed DC-to-DC link matrix (capacity from measured throughput,
// one-way latency = RTT / 2), rendered as the [[datacenter]] and [[link]] tables of a config.
// Pure: no MPI and no config loading. Used by `strait links` (src/cli/cmd_links.cpp) and tests;
// every error is a LinkMatrixError whose message names the file (and line) or the pair at fault.
#pragma once
#include <istream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace strait {

class LinkMatrixError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Value columns of the two Skyplane tables (docs/links.md).
inline constexpr const char* kThroughputColumn = "gbps";        // Gbit/s, directed
inline constexpr const char* kRttColumn = "avg_rtt_ms";         // round trip, milliseconds
// The header line used when no other attribution is given.
inline constexpr const char* kSkyplaneAttribution =
    "Skyplane project, skyplane-project/skyplane, Apache-2.0 \u2014 measured inter-region "
    "throughput (iperf3, Jan 2022) and RTT";

// One measured value of a directed region pair and the CSV line it was read from.
struct PairValue {
  double value = 0;
  int line = 0;
};

// A table of directed pair measurements. CSV format: a header line naming at least
// `src_region`, `dst_region` and the value column (any order; other columns are ignored), then
// one row per pair. Fields are trimmed; fields cannot contain commas; blank lines are skipped.
struct PairTable {
  std::string file;    // as given; used in messages
  std::string column;  // the value column
  std::map<std::pair<std::string, std::string>, PairValue> pairs;
  std::set<std::string> regions;  // every region named as a source or a destination

  const PairValue* find(const std::string& src, const std::string& dst) const;
};

enum class ValueRange { Positive, NonNegative };

// Errors read "<file>:<line>: <what>" (a missing header column: line 1; a bad number: its row).
PairTable parse_pair_csv(std::istream& in, const std::string& file, const std::string& column,
                         ValueRange range);
PairTable read_pair_csv(const std::string& path, const std::string& column, ValueRange range);

struct MatrixRegion {
  std::string id;    // as in the CSV, e.g. "aws:us-east-1"
  std::string name;  // datacenter name in the config
  int ranks = 1;
};

struct MatrixLink {
  int from = 0, to = 0;       // indexes into LinkMatrix::regions
  double capacity_gbps = 0;   // measured throughput of the pair
  double rtt_ms = 0;          // measured average round trip
  double latency_ms = 0;      // one-way: rtt_ms / 2
  int capacity_line = 0, rtt_line = 0;   // CSV lines the values came from
  bool capacity_reversed = false;        // taken from to -> from (symmetric fill)
  bool rtt_reversed = false;
};

struct LinkMatrix {
  std::vector<MatrixRegion> regions;  // in the order asked for (= world-rank order)
  std::vector<MatrixLink> links;      // every ordered pair of distinct regions, by (from, to)
};

struct LinkMatrixRequest {
  std::vector<std::string> regions;  // region ids; at least two, no repeats
  std::vector<std::string> names;    // DC names, one per region; empty = sanitised ids
  std::vector<int> ranks;            // empty = 1 each; one value = the same for all; else one per region
  bool symmetric_fill = false;       // a missing direction may take the reverse direction's value
};

// Errors: unknown region (with close names of the same provider), a pair missing in a table
// (naming the pair and the file), bad names or ranks.
LinkMatrix build_link_matrix(const PairTable& throughput, const PairTable& rtt,
                             const LinkMatrixRequest& request);

// "aws:us-east-1" -> "aws_us_east_1": every character outside [A-Za-z0-9] becomes '_'.
std::string sanitize_region_name(const std::string& id);

// Up to `max` regions of `known` that share the provider prefix of `id` (text before ':'),
// closest first by edit distance; all of `known` when `id` has no provider prefix.
std::vector<std::string> close_region_names(const std::set<std::string>& known,
                                            const std::string& id, size_t max = 5);

// Shortest text that reads back as the same double ("4.3181", "42.468").
std::string format_number(double x);

struct FragmentHeader {
  std::string command;          // the command line that made the fragment
  std::string throughput_file;  // as given
  std::string rtt_file;
  std::string attribution;      // empty: kSkyplaneAttribution
};

// The config fragment: a header comment (command, source files, regions, attribution, what
// the columns mean), one [[datacenter]] per region and one [[link]] per ordered pair.
std::string render_links_toml(const LinkMatrix& m, const FragmentHeader& header);

}  // namespace strait
