// link_matrix.cpp — CSV reading, region lookup and the link matrix behind `strait links`
// (see link_matrix.hpp; the format and its meaning are in docs/links.md).
#include "net/link_matrix.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace strait {
namespace {

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  const size_t a = s.find_first_not_of(ws);
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(ws) - a + 1);
}

// Splits one CSV line at commas; a field wrapped in double quotes loses them.
std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string f = trim(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    out.push_back(f);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string where(const std::string& file, int line) { return file + ":" + std::to_string(line) + ": "; }

std::string pair_text(const std::string& a, const std::string& b) { return a + " -> " + b; }

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string provider_of(const std::string& id) {
  const size_t colon = id.find(':');
  return colon == std::string::npos ? "" : id.substr(0, colon);
}

// A region must appear in the table; otherwise say which names are close.
void require_region(const PairTable& t, const std::string& id) {
  if (t.regions.count(id)) return;
  std::string msg = "unknown region '" + id + "' (not in " + t.file + ")";
  const std::vector<std::string> close = close_region_names(t.regions, id);
  if (!close.empty()) {
    msg += "; close names: " + join(close, ", ");
  } else {
    std::set<std::string> providers;
    for (const std::string& r : t.regions) providers.insert(provider_of(r));
    msg += "; no region of provider '" + provider_of(id) + "' there; providers: " +
           join(std::vector<std::string>(providers.begin(), providers.end()), ", ");
  }
  throw LinkMatrixError(msg);
}

// The value of src -> dst, or of dst -> src when filling is allowed; errors name pair and file.
const PairValue& lookup(const PairTable& t, const std::string& src, const std::string& dst,
                        bool symmetric_fill, bool& reversed) {
  reversed = false;
  if (const PairValue* v = t.find(src, dst)) return *v;
  const PairValue* rev = t.find(dst, src);
  std::string msg = "no " + t.column + " for " + pair_text(src, dst) + " in " + t.file;
  if (rev && symmetric_fill) {
    reversed = true;
    return *rev;
  }
  if (rev)
    msg += "; the reverse direction is at line " + std::to_string(rev->line) +
           " (--symmetric-fill would use it)";
  else if (symmetric_fill)
    msg += ", nor for the reverse direction";
  throw LinkMatrixError(msg);
}

bool valid_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

// Comment text must stay on one line and hold no control characters (TOML).
std::string comment_safe(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

// Pads `code` with spaces so that trailing comments line up.
std::string with_comment(const std::string& code, const std::string& comment) {
  std::string s = code;
  if (s.size() < 28) s.append(28 - s.size(), ' ');
  return s + " # " + comment_safe(comment) + "\n";
}

}  // namespace

const PairValue* PairTable::find(const std::string& src, const std::string& dst) const {
  const auto it = pairs.find({src, dst});
  return it == pairs.end() ? nullptr : &it->second;
}

PairTable parse_pair_csv(std::istream& in, const std::string& file, const std::string& column,
                         ValueRange range) {
  PairTable t;
  t.file = file;
  t.column = column;
  std::string line;
  if (!std::getline(in, line))
    throw LinkMatrixError(where(file, 1) + "empty file; expected a header src_region,dst_region," + column);
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 byte order mark
  const std::vector<std::string> header = split_fields(line);
  auto index_of = [&](const std::string& name) -> size_t {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end())
      throw LinkMatrixError(where(file, 1) + "missing column '" + name + "' in the header (" +
                            join(header, ",") + "); expected src_region,dst_region," + column);
    return static_cast<size_t>(it - header.begin());
  };
  const size_t is = index_of("src_region"), id = index_of("dst_region"), iv = index_of(column);
  const size_t need = std::max({is, id, iv}) + 1;

  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (trim(line).empty()) continue;
    const std::vector<std::string> f = split_fields(line);
    if (f.size() < need)
      throw LinkMatrixError(where(file, n) + std::to_string(f.size()) + " fields; expected " +
                            std::to_string(header.size()) + " (" + join(header, ",") + ")");
    const std::string& src = f[is];
    const std::string& dst = f[id];
    if (src.empty() || dst.empty())
      throw LinkMatrixError(where(file, n) + "empty region name; expected src_region and dst_region");
    const std::string& text = f[iv];
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
      throw LinkMatrixError(where(file, n) + column + ": '" + text + "' is not a number");
    if (range == ValueRange::Positive ? !(v > 0) : !(v >= 0))
      throw LinkMatrixError(where(file, n) + column + ": " + text + " is out of range; expected a number " +
                            (range == ValueRange::Positive ? "> 0" : ">= 0"));
    const auto [it, fresh] = t.pairs.insert({{src, dst}, PairValue{v, n}});
    if (!fresh)
      throw LinkMatrixError(where(file, n) + "duplicate row for " + pair_text(src, dst) +
                            " (first at line " + std::to_string(it->second.line) + ")");
    t.regions.insert(src);
    t.regions.insert(dst);
  }
  if (in.bad()) throw LinkMatrixError(where(file, n) + "read error");
  return t;
}

PairTable read_pair_csv(const std::string& path, const std::string& column, ValueRange range) {
  std::ifstream in(path);
  if (!in) throw LinkMatrixError("cannot read " + path);
  return parse_pair_csv(in, path, column, range);
}

std::string sanitize_region_name(const std::string& id) {
  std::string s = id;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

std::vector<std::string> close_region_names(const std::set<std::string>& known,
                                            const std::string& id, size_t max) {
  const std::string provider = provider_of(id);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& r : known)
    if (provider.empty() || provider_of(r) == provider) scored.push_back({edit_distance(id, r), r});
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < max; ++i) out.push_back(scored[i].second);
  return out;
}

LinkMatrix build_link_matrix(const PairTable& throughput, const PairTable& rtt,
                             const LinkMatrixRequest& req) {
  const size_t n = req.regions.size();
  if (n < 2) throw LinkMatrixError("--regions: " + std::to_string(n) + " region(s); expected at least 2");
  if (!req.names.empty() && req.names.size() != n)
    throw LinkMatrixError("--names: " + std::to_string(req.names.size()) + " names for " +
                          std::to_string(n) + " regions; expected one per region");
  if (req.ranks.size() > 1 && req.ranks.size() != n)
    throw LinkMatrixError("--ranks: " + std::to_string(req.ranks.size()) + " values for " +
                          std::to_string(n) + " regions; expected one value, or one per region");

  LinkMatrix m;
  std::set<std::string> seen_ids, seen_names;
  for (size_t i = 0; i < n; ++i) {
    MatrixRegion r;
    r.id = req.regions[i];
    if (!seen_ids.insert(r.id).second)
      throw LinkMatrixError("--regions: '" + r.id + "' is listed twice");
    require_region(throughput, r.id);
    require_region(rtt, r.id);
    r.name = req.names.empty() ? sanitize_region_name(r.id) : req.names[i];
    if (!valid_name(r.name))
      throw LinkMatrixError("--names: '" + r.name + "' is not a valid datacenter name; expected [A-Za-z0-9_-]+");
    if (!seen_names.insert(r.name).second)
      throw LinkMatrixError("--names: datacenter name '" + r.name + "' is used twice");
    r.ranks = req.ranks.empty() ? 1 : req.ranks.size() == 1 ? req.ranks[0] : req.ranks[i];
    if (r.ranks < 1 || r.ranks > 65536)
      throw LinkMatrixError("--ranks: " + std::to_string(r.ranks) + " is out of range; expected 1 ... 65536");
    m.regions.push_back(r);
  }

  for (size_t a = 0; a < n; ++a)
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const std::string& src = m.regions[a].id;
      const std::string& dst = m.regions[b].id;
      MatrixLink l;
      l.from = static_cast<int>(a);
      l.to = static_cast<int>(b);
      const PairValue& c = lookup(throughput, src, dst, req.symmetric_fill, l.capacity_reversed);
      const PairValue& t = lookup(rtt, src, dst, req.symmetric_fill, l.rtt_reversed);
      l.capacity_gbps = c.value;
      l.capacity_line = c.line;
      l.rtt_ms = t.value;
      l.rtt_line = t.line;
      l.latency_ms = t.value / 2;
      m.links.push_back(l);
    }
  return m;
}

std::string format_number(double x) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  std::string s = ec == std::errc() ? std::string(buf, end) : std::to_string(x);
  // Number keys accept integers too, but keep the TOML type a float ("4" -> "4.0").
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string render_links_toml(const LinkMatrix& m, const FragmentHeader& h) {
  std::ostringstream o;
  const std::string attribution = h.attribution.empty() ? kSkyplaneAttribution : h.attribution;
  std::string regions;
  for (size_t i = 0; i < m.regions.size(); ++i)
    regions += (i ? ", " : "") + m.regions[i].id + " = " + m.regions[i].name;
  o << "# Datacenters and links imported from measured inter-region data by `strait links`.\n"
    << "# command:    " << comment_safe(h.command) << "\n"
    << "# throughput: " << comment_safe(h.throughput_file) << " (column " << kThroughputColumn << ", Gbit/s)\n"
    << "# rtt:        " << comment_safe(h.rtt_file) << " (column " << kRttColumn << ", ms)\n"
    << "# regions:    " << comment_safe(regions) << "\n"
    << "# data:       " << comment_safe(attribution) << "\n"
    << "# capacity_gbps is the measured throughput of the directed pair; latency_ms is ONE-WAY,\n"
    << "# avg_rtt_ms / 2 (the RTT table holds round trips). Single snapshots, not time series.\n"
    << "# The comments give each value's region pair and its line in the source file. See docs/links.md.\n";

  o << "\n# One datacenter per region, in world-rank order.\n";
  for (const MatrixRegion& r : m.regions) {
    o << "[[datacenter]]\n"
      << with_comment("name = \"" + r.name + "\"", r.id)
      << "ranks = " << r.ranks << "\n\n";
  }

  o << "# One directed link per ordered pair of regions.\n";
  for (size_t i = 0; i < m.links.size(); ++i) {
    const MatrixLink& l = m.links[i];
    const MatrixRegion& a = m.regions[l.from];
    const MatrixRegion& b = m.regions[l.to];
    const std::string cap_line = "throughput line " + std::to_string(l.capacity_line);
    const std::string cap_note =
        l.capacity_reversed ? "FILLED from the reverse direction " + b.id + " -> " + a.id +
                                  " (--symmetric-fill), " + cap_line
                            : a.id + " -> " + b.id + ", " + cap_line;
    std::string lat_note = "one-way = avg_rtt_ms " + format_number(l.rtt_ms) + " / 2, rtt line " +
                           std::to_string(l.rtt_line);
    if (l.rtt_reversed) lat_note += ", FILLED from the reverse direction (--symmetric-fill)";
    o << (i ? "\n" : "") << "[[link]]\n"
      << "from = \"" << a.name << "\"\n"
      << "to = \"" << b.name << "\"\n"
      << with_comment("capacity_gbps = " + format_number(l.capacity_gbps), cap_note)
      << with_comment("latency_ms = " + format_number(l.latency_ms), lat_note);
  }
  return o.str();
}

}  // namespace strait
