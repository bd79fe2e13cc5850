// cmd_links.cpp — `strait links --throughput FILE --rtt FILE --regions a,b,... [--names ...]
// [--ranks N|n1,n2,...] [--out FILE [--force]] [--symmetric-fill] [--attribution TEXT]`:
// import a link matrix from measured inter-region CSVs (src/net/link_matrix.hpp) and write the
// [[datacenter]] and [[link]] tables of a config, with a header that records the command, the
// source files and the data's attribution (docs/links.md). No MPI.
// Errors: "strait: links: ..." on stderr, exit status 2, and no output file.
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "cli/commands.hpp"
#include "net/link_matrix.hpp"

namespace strait {
namespace {

namespace fs = std::filesystem;

// Quotes an argument for a POSIX shell when it holds anything but plain characters.
std::string shell_quote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string("_./:,=@%+-").find(c) != std::string::npos))
      plain = false;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s;
}

// The command that regenerates this output, options in a fixed order (recorded in the header).
std::string command_line(const LinksArgs& a) {
  std::string c = "strait links --throughput " + shell_quote(a.throughput);
  if (!a.rtt.empty()) c += " --rtt " + shell_quote(a.rtt);
  c += " --regions " + shell_quote(join(a.regions));
  if (!a.names.empty()) c += " --names " + shell_quote(join(a.names));
  if (!a.ranks.empty()) {
    std::vector<std::string> r;
    for (int n : a.ranks) r.push_back(std::to_string(n));
    c += " --ranks " + join(r);
  }
  if (a.symmetric_fill) c += " --symmetric-fill";
  if (!a.attribution.empty()) c += " --attribution " + shell_quote(a.attribution);
  return c;
}

// Writes next to the target and renames, so a failed write never leaves a half file.
void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw LinkMatrixError("cannot write " + path);
    f << text;
    f.flush();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw LinkMatrixError("cannot write " + path);
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw LinkMatrixError("cannot write " + path + ": " + ec.message());
  }
}

}  // namespace

int cmd_links(const LinksArgs& args) {
  try {
    if (!args.out.empty() && fs::exists(args.out) && !args.force)
      throw LinkMatrixError(args.out + " exists; use --force to overwrite it");
    if (args.rtt.empty())
      throw LinkMatrixError("latency_ms needs RTT data: give --rtt FILE.csv (columns src_region,dst_region," +
                            std::string(kRttColumn) + ")");
    const PairTable throughput = read_pair_csv(args.throughput, kThroughputColumn, ValueRange::Positive);
    const PairTable rtt = read_pair_csv(args.rtt, kRttColumn, ValueRange::NonNegative);

    LinkMatrixRequest req;
    req.regions = args.regions;
    req.names = args.names;
    req.ranks = args.ranks;
    req.symmetric_fill = args.symmetric_fill;
    const LinkMatrix m = build_link_matrix(throughput, rtt, req);

    FragmentHeader h;
    h.command = command_line(args);
    h.throughput_file = args.throughput;
    h.rtt_file = args.rtt;
    h.attribution = args.attribution;
    const std::string text = render_links_toml(m, h);

    if (args.out.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      write_file(args.out, text);
      std::printf("wrote %s: %zu datacenters, %zu links\n", args.out.c_str(), m.regions.size(),
                  m.links.size());
    }
    return 0;
  } catch (const LinkMatrixError& e) {
    std::fprintf(stderr, "strait: links: %s\n", e.what());
    return 2;
  } catch (const fs::filesystem_error& e) {
    std::fprintf(stderr, "strait: links: %s\n", e.what());
    return 2;
  }
}

}  // namespace strait
