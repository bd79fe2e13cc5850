// test_link_matrix.cpp — link matrices from measured CSVs (src/net/link_matrix.hpp): the
// Skyplane subset in configs/data parses, a 3-region matrix holds exactly the CSV rows' values
// (checked against a separate plain reading of the files), latency is RTT / 2, symmetric fill,
// and the errors (unknown region with close names, missing pair, bad number and missing column
// with file:line, bad names/ranks). The rendered fragment, plus a model section, must load as a
// valid config with the same links.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "net/link_matrix.hpp"

namespace fs = std::filesystem;
using namespace strait;

namespace {

fs::path source_dir() {
  if (const char* s = std::getenv("STRAIT_SOURCE_DIR")) return s;
  return fs::path(__FILE__).parent_path().parent_path().parent_path();
}

std::string throughput_csv() { return (source_dir() / "configs/data/skyplane-throughput-subset.csv").string(); }
std::string rtt_csv() { return (source_dir() / "configs/data/skyplane-rtt-subset.csv").string(); }

// The reference: "src,dst" -> (value text, line), read without the code under test.
std::map<std::string, std::pair<std::string, int>> plain_rows(const std::string& path) {
  std::map<std::string, std::pair<std::string, int>> rows;
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (++n == 1) continue;
    const size_t a = line.find(','), b = line.find(',', a + 1);
    rows[line.substr(0, b)] = {line.substr(b + 1), n};
  }
  return rows;
}

PairTable parse(const std::string& text, const std::string& column = "gbps",
                ValueRange range = ValueRange::Positive) {
  std::istringstream in(text);
  return parse_pair_csv(in, "mem.csv", column, range);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const LinkMatrixError& e) {
    return e.what();
  }
  return "(no error)";
}

const std::vector<std::string> kThree = {"aws:us-east-1", "aws:eu-west-1", "aws:ap-northeast-1"};

}  // namespace

TEST(LinkMatrix, SubsetParses) {
  const PairTable t = read_pair_csv(throughput_csv(), kThroughputColumn, ValueRange::Positive);
  const PairTable r = read_pair_csv(rtt_csv(), kRttColumn, ValueRange::NonNegative);
  EXPECT_EQ(t.pairs.size(), 30u);  // 6 regions, every ordered pair
  EXPECT_EQ(r.pairs.size(), 30u);
  EXPECT_EQ(t.regions.size(), 6u);
  EXPECT_EQ(r.regions, t.regions);
  ASSERT_NE(t.find("aws:us-east-1", "aws:eu-west-1"), nullptr);
  EXPECT_DOUBLE_EQ(t.find("aws:us-east-1", "aws:eu-west-1")->value, 4.3181);
  EXPECT_EQ(t.find("aws:us-east-1", "nowhere"), nullptr);
}

TEST(LinkMatrix, ThreeRegionsMatchTheCsvRows) {
  const PairTable t = read_pair_csv(throughput_csv(), kThroughputColumn, ValueRange::Positive);
  const PairTable r = read_pair_csv(rtt_csv(), kRttColumn, ValueRange::NonNegative);
  LinkMatrixRequest req;
  req.regions = kThree;
  const LinkMatrix m = build_link_matrix(t, r, req);

  ASSERT_EQ(m.regions.size(), 3u);
  EXPECT_EQ(m.regions[0].name, "aws_us_east_1");
  EXPECT_EQ(m.regions[2].name, "aws_ap_northeast_1");
  EXPECT_EQ(m.regions[1].ranks, 1);

  const auto tref = plain_rows(throughput_csv());
  const auto rref = plain_rows(rtt_csv());
  ASSERT_EQ(m.links.size(), 6u);
  const int order[6][2] = {{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}};
  for (size_t i = 0; i < 6; ++i) {
    const MatrixLink& l = m.links[i];
    EXPECT_EQ(l.from, order[i][0]);
    EXPECT_EQ(l.to, order[i][1]);
    const std::string key = kThree[l.from] + "," + kThree[l.to];
    ASSERT_TRUE(tref.count(key) && rref.count(key)) << key;
    EXPECT_EQ(l.capacity_gbps, std::stod(tref.at(key).first)) << key;
    EXPECT_EQ(l.capacity_line, tref.at(key).second) << key;
    EXPECT_EQ(l.rtt_ms, std::stod(rref.at(key).first)) << key;
    EXPECT_EQ(l.latency_ms, std::stod(rref.at(key).first) / 2) << key;  // one-way
    EXPECT_EQ(l.rtt_line, rref.at(key).second) << key;
    EXPECT_FALSE(l.capacity_reversed || l.rtt_reversed);
  }
  // Spot values from the Skyplane rows (us-east-1 -> eu-west-1).
  EXPECT_DOUBLE_EQ(m.links[0].capacity_gbps, 4.3181);
  EXPECT_DOUBLE_EQ(m.links[0].latency_ms, 42.468);
}

TEST(LinkMatrix, NamesAndRanks) {
  const PairTable t = read_pair_csv(throughput_csv(), kThroughputColumn, ValueRange::Positive);
  const PairTable r = read_pair_csv(rtt_csv(), kRttColumn, ValueRange::NonNegative);
  LinkMatrixRequest req;
  req.regions = kThree;
  req.names = {"east", "eu", "asia"};
  req.ranks = {2};
  LinkMatrix m = build_link_matrix(t, r, req);
  EXPECT_EQ(m.regions[1].name, "eu");
  EXPECT_EQ(m.regions[2].ranks, 2);
  req.ranks = {2, 1, 1};
  m = build_link_matrix(t, r, req);
  EXPECT_EQ(m.regions[0].ranks, 2);
  EXPECT_EQ(m.regions[1].ranks, 1);

  req.ranks = {2, 1};
  EXPECT_NE(error_of([&] { build_link_matrix(t, r, req); }).find("--ranks"), std::string::npos);
  req.ranks = {0};
  EXPECT_NE(error_of([&] { build_link_matrix(t, r, req); }).find("out of range"), std::string::npos);
  req.ranks = {};
  req.names = {"east", "eu"};
  EXPECT_NE(error_of([&] { build_link_matrix(t, r, req); }).find("--names"), std::string::npos);
  req.names = {"east", "e u", "asia"};
  EXPECT_NE(error_of([&] { build_link_matrix(t, r, req); }).find("'e u'"), std::string::npos);
  req.names = {"east", "east", "asia"};
  EXPECT_NE(error_of([&] { build_link_matrix(t, r, req); }).find("twice"), std::string::npos);
  req.names = {};
  req.regions = {"aws:us-east-1", "aws:us-east-1"};
  EXPECT_NE(error_of([&] { build_link_matrix(t, r, req); }).find("listed twice"), std::string::npos);
  req.regions = {"aws:us-east-1"};
  EXPECT_NE(error_of([&] { build_link_matrix(t, r, req); }).find("at least 2"), std::string::npos);
  EXPECT_EQ(sanitize_region_name("gcp:europe-west4-a"), "gcp_europe_west4_a");
}

TEST(LinkMatrix, UnknownRegionListsCloseNames) {
  const PairTable t = read_pair_csv(throughput_csv(), kThroughputColumn, ValueRange::Positive);
  const PairTable r = read_pair_csv(rtt_csv(), kRttColumn, ValueRange::NonNegative);
  LinkMatrixRequest req;
  req.regions = {"aws:us-east-9", "aws:eu-west-1"};
  const std::string e = error_of([&] { build_link_matrix(t, r, req); });
  EXPECT_NE(e.find("unknown region 'aws:us-east-9'"), std::string::npos) << e;
  EXPECT_NE(e.find("skyplane-throughput-subset.csv"), std::string::npos) << e;
  EXPECT_NE(e.find("close names: aws:us-east-1"), std::string::npos) << e;  // closest first
  EXPECT_EQ(e.find("azure:"), std::string::npos) << e;                      // same provider only

  req.regions = {"oracle:us-east-1", "aws:eu-west-1"};
  const std::string p = error_of([&] { build_link_matrix(t, r, req); });
  EXPECT_NE(p.find("providers: aws, azure, gcp"), std::string::npos) << p;

  const std::vector<std::string> close = close_region_names(t.regions, "gcp:europe-west3-a", 2);
  ASSERT_EQ(close.size(), 2u);
  EXPECT_EQ(close[0], "gcp:europe-west4-a");
}

TEST(LinkMatrix, MissingPairAndSymmetricFill) {
  const PairTable t = parse("src_region,dst_region,gbps\na,b,2.5\n");
  const PairTable r = parse("src_region,dst_region,avg_rtt_ms\na,b,10\nb,a,12\n", "avg_rtt_ms",
                            ValueRange::NonNegative);
  LinkMatrixRequest req;
  req.regions = {"a", "b"};
  const std::string e = error_of([&] { build_link_matrix(t, r, req); });
  EXPECT_NE(e.find("no gbps for b -> a in mem.csv"), std::string::npos) << e;
  EXPECT_NE(e.find("--symmetric-fill"), std::string::npos) << e;

  req.symmetric_fill = true;
  const LinkMatrix m = build_link_matrix(t, r, req);
  ASSERT_EQ(m.links.size(), 2u);
  EXPECT_FALSE(m.links[0].capacity_reversed);
  EXPECT_TRUE(m.links[1].capacity_reversed);
  EXPECT_EQ(m.links[1].capacity_gbps, 2.5);
  EXPECT_FALSE(m.links[1].rtt_reversed);
  EXPECT_EQ(m.links[1].latency_ms, 6.0);
  const std::string text = render_links_toml(m, FragmentHeader{"cmd", "t.csv", "r.csv", ""});
  EXPECT_NE(text.find("FILLED from the reverse direction a -> b"), std::string::npos) << text;

  // Neither direction: an error even with the fill.
  const PairTable c = parse("src_region,dst_region,gbps\na,b,1\nc,a,1\n");
  req.regions = {"a", "b", "c"};
  const std::string n = error_of([&] { build_link_matrix(c, c, req); });
  EXPECT_NE(n.find("b -> c"), std::string::npos) << n;
  EXPECT_NE(n.find("nor for the reverse direction"), std::string::npos) << n;
}

TEST(LinkMatrix, CsvErrorsNameFileAndLine) {
  EXPECT_EQ(error_of([] { parse("src_region,dst_region,gbps\na,b,1\nb,a,x1\n"); }),
            "mem.csv:3: gbps: 'x1' is not a number");
  EXPECT_EQ(error_of([] { parse("src_region,dst_region,gbps\na,b,1.5e\n"); }),
            "mem.csv:2: gbps: '1.5e' is not a number");
  EXPECT_EQ(error_of([] { parse("src_region,dst_region,gbps\n\na,b,0\n"); }),
            "mem.csv:3: gbps: 0 is out of range; expected a number > 0");
  EXPECT_NE(error_of([] { parse("src,dst_region,gbps\na,b,1\n"); })
                .find("mem.csv:1: missing column 'src_region'"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse("src_region,dst_region,gbps\n", "avg_rtt_ms"); })
                .find("mem.csv:1: missing column 'avg_rtt_ms'"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse("src_region,dst_region,gbps\na,b\n"); }).find("mem.csv:2: 2 fields"),
            std::string::npos);
  EXPECT_EQ(error_of([] { parse("src_region,dst_region,gbps\na,b,1\na,b,2\n"); }),
            "mem.csv:3: duplicate row for a -> b (first at line 2)");
  EXPECT_NE(error_of([] { read_pair_csv("/nonexistent/x.csv", "gbps", ValueRange::Positive); })
                .find("cannot read /nonexistent/x.csv"),
            std::string::npos);
  // Extra columns, other column order, CRLF and spaces are fine; zero RTT is allowed.
  const PairTable t = parse("gbps, note ,dst_region,src_region\r\n 3.5 ,x, b , a \r\n", "gbps");
  ASSERT_NE(t.find("a", "b"), nullptr);
  EXPECT_EQ(t.find("a", "b")->value, 3.5);
  EXPECT_EQ(parse("src_region,dst_region,avg_rtt_ms\na,a,0\n", "avg_rtt_ms", ValueRange::NonNegative)
                .pairs.size(),
            1u);
}

TEST(LinkMatrix, RenderedFragmentIsAValidConfig) {
  const PairTable t = read_pair_csv(throughput_csv(), kThroughputColumn, ValueRange::Positive);
  const PairTable r = read_pair_csv(rtt_csv(), kRttColumn, ValueRange::NonNegative);
  LinkMatrixRequest req;
  req.regions = kThree;
  req.names = {"east", "eu", "asia"};
  req.ranks = {2, 1, 1};
  const LinkMatrix m = build_link_matrix(t, r, req);
  const std::string text = render_links_toml(m, FragmentHeader{"strait links ...", "t.csv", "r.csv", ""});
  EXPECT_NE(text.find(kSkyplaneAttribution), std::string::npos);
  EXPECT_NE(text.find("# command:    strait links ..."), std::string::npos);
  EXPECT_NE(text.find("aws:ap-northeast-1 = asia"), std::string::npos);

  const fs::path dir = fs::temp_directory_path() / ("strait_test_link_matrix_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "corpus.txt") << "a tiny corpus for the config check\n";
  const fs::path cfg = dir / "links.toml";
  std::ofstream(cfg) << text << "\n[model]\nlayers = 1\nd_model = 16\nheads = 2\nd_ff = 32\nseq_len = 8\n"
                     << "[train]\nglobal_batch = 4\ncorpus = \"" << (dir / "corpus.txt").string() << "\"\n";
  Config c;
  try {
    c = load_config(cfg.string());
  } catch (const ConfigError& e) {
    FAIL() << e.what() << "\n" << text;
  }
  fs::remove_all(dir);
  ASSERT_EQ(c.datacenters.size(), 3u);
  EXPECT_EQ(c.world_size(), 4);
  ASSERT_EQ(c.links.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(c.links[i].from, m.regions[m.links[i].from].name);
    EXPECT_EQ(c.links[i].to, m.regions[m.links[i].to].name);
    EXPECT_EQ(c.links[i].capacity_gbps, m.links[i].capacity_gbps);  // shortest text reads back exactly
    EXPECT_EQ(c.links[i].latency_ms, m.links[i].latency_ms);
  }
}

TEST(LinkMatrix, ShippedConfigsLoad) {
  for (const char* name : {"configs/us-eu-asia.toml", "configs/mesh6.toml"}) {
    const std::string path = (source_dir() / name).string();
    try {
      const Config c = load_config(path);
      const size_t n = c.datacenters.size();
      EXPECT_EQ(c.links.size(), n * (n - 1)) << path;
    } catch (const ConfigError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}
