// limits.cpp — see limits.hpp.
#include "config/limits.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config.hpp"
#include "config/messages.hpp"

namespace strait::limits {

namespace fs = std::filesystem;
using msg::num;
using msg::quote;

const char* const kCapacityRule = "a number in [1e-06, 1e+06] (Gbit/s)";
const char* const kLatencyRule = "a number in [0, 3.6e+06] (milliseconds)";

bool capacity_ok(double gbps) { return gbps >= kMinCapacityGbps && gbps <= kMaxCapacityGbps; }
bool latency_ok(double ms) { return ms >= 0 && ms <= kMaxLatencyMs; }

std::string read_input(const std::string& path, const std::string& key, size_t max_bytes) {
  auto fail = [&](const std::string& what, const std::string& expected) {
    throw ConfigError(msg::line(path + ":0", key, what, expected));
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    std::error_code ec;
    fail(fs::exists(path, ec) ? "the file cannot be read" : "the file does not exist",
         "a readable file");
  }
  // A FIFO, a socket or a device would block the reader or never end.
  if (!S_ISREG(st.st_mode)) fail("not a regular file", "a readable regular file");
  if (static_cast<size_t>(st.st_size) > max_bytes)
    fail("the file is " + std::to_string(st.st_size) + " bytes",
         "at most " + std::to_string(max_bytes) + " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("the file cannot be read", "a readable file");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > max_bytes)  // it grew since stat
    fail("the file is more than " + std::to_string(max_bytes) + " bytes",
         "at most " + std::to_string(max_bytes) + " bytes");
  return text;
}

// A lexical scan of TOML: what nests is a table header's dotted parts, the parts of a dotted
// key, and arrays and inline tables (each with the parts of the key that opened it). Strings
// and comments are skipped. Conservative: it may count a level the parser would not, never
// fewer, and real configs stay far below the limit.
std::string nesting_problem(const std::string& s, int& line) {
  const size_t n = s.size();
  std::vector<int> open;  // per open array / inline table: 1 + the key parts that opened it
  std::vector<char> kind;
  int sum = 0, header = 0, dots = 0, pending = 0;
  bool in_key = true, line_empty = true;
  line = 1;
  auto too_deep = [&](int depth) { return depth > kMaxNesting; };
  const std::string why = "more than " + std::to_string(kMaxNesting) +
                          " levels of tables, arrays, inline tables and dotted keys inside "
                          "each other";
  size_t i = 0;
  auto skip_string = [&](char q) {  // s[i] is the opening quote
    const bool triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
    i += triple ? 3 : 1;
    while (i < n) {
      if (q == '"' && s[i] == '\\') {
        i += 2;
        continue;
      }
      if (s[i] == '\n') {
        if (!triple) return;  // an unterminated string: the parser reports it
        ++line;
      }
      if (s[i] == q && (!triple || (i + 2 < n && s[i + 1] == q && s[i + 2] == q))) {
        i += triple ? 3 : 1;
        return;
      }
      ++i;
    }
  };
  while (i < n) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
      if (open.empty()) in_key = true, dots = 0, pending = 0, line_empty = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      line_empty = false;
      skip_string(c);
      continue;
    }
    if (c == '[' && open.empty() && line_empty) {  // a table header: [a.b] or [[a.b]]
      ++i;
      if (i < n && s[i] == '[') ++i;
      header = 1;
      while (i < n && s[i] != ']' && s[i] != '\n') {
        if (s[i] == '"' || s[i] == '\'') {
          skip_string(s[i]);
          continue;
        }
        if (s[i] == '.' && too_deep(++header)) return why;
        ++i;
      }
      line_empty = false;
      continue;
    }
    line_empty = false;
    if (c == '.' && in_key) {
      if (too_deep(header + sum + ++dots + 1)) return why;
    } else if (c == '=' && in_key) {
      pending = dots + 1, dots = 0, in_key = false;
    } else if (c == '[' || c == '{') {
      const int add = 1 + pending;
      open.push_back(add);
      kind.push_back(c);
      sum += add;
      pending = 0;
      if (too_deep(header + sum)) return why;
      in_key = c == '{';
      dots = 0;
    } else if ((c == ']' || c == '}') && !open.empty()) {
      sum -= open.back();
      open.pop_back();
      kind.pop_back();
      pending = 0;
    } else if (c == ',' && !kind.empty()) {
      pending = 0;
      if (kind.back() == '{') in_key = true, dots = 0;
    }
    ++i;
  }
  return "";
}

std::string fractions_problem(const std::vector<double>& v, size_t want) {
  if (v.size() != want)
    return std::to_string(v.size()) + " fractions " + msg::num_list(v) + " where " +
           std::to_string(want) + " belong";
  double sum = 0;
  for (double x : v) {
    if (!std::isfinite(x) || x <= 0) return "the fraction " + num(x) + " in " + msg::num_list(v) + " is not > 0";
    sum += x;
  }
  if (std::fabs(sum - 1.0) > 1e-6) return "the fractions " + msg::num_list(v) + " sum to " + num(sum, 10);
  return "";
}

std::string shares_problem(const std::vector<double>& shares, int global_batch) {
  if (std::string p = fractions_problem(shares, shares.size()); !p.empty()) return p;
  for (double s : shares)
    if (s * global_batch < 1 - 1e-6)
      return "the share " + num(s) + " gives less than one of the " + std::to_string(global_batch) +
             " sequences of the global batch";
  return "";
}

std::string join_errors(const std::vector<std::string>& lines) {
  std::vector<std::string> shown(lines.begin(),
                                 lines.begin() + std::min(lines.size(), kMaxErrorLines));
  std::string out = msg::join(shown, "\n");
  if (lines.size() > kMaxErrorLines)
    out += "\n... and " + std::to_string(lines.size() - kMaxErrorLines) + " more errors (the first " +
           std::to_string(kMaxErrorLines) + " are shown)";
  return out;
}

namespace {

// The first control character of s, as "\xNN", or "".
std::string control_char(const std::string& s) {
  for (unsigned char ch : s)
    if (ch < 0x20 || ch == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      return buf;
    }
  return "";
}

void check_path(const Config& cfg, const std::string& key, const std::string& path,
                std::vector<std::string>& errors) {
  if (!cfg.where.count(key)) return;  // a default, made of keys checked themselves
  const std::string at = cfg.where_of(key);
  if (const std::string c = control_char(path); !c.empty()) {
    errors.push_back(msg::line(at, key, "a path with a control character (" + c + ")",
                               "a path without control characters"));
    return;
  }
  if (path.size() > kMaxPathBytes)
    errors.push_back(msg::line(at, key, "a path of " + std::to_string(path.size()) + " bytes",
                               "at most " + std::to_string(kMaxPathBytes) + " bytes"));
  for (const auto& part : fs::path(path))
    if (part.native().size() > kMaxPathComponentBytes) {
      errors.push_back(msg::line(
          at, key,
          "the path component " + quote(part.native().substr(0, 24) + "...") + " is " +
              std::to_string(part.native().size()) + " bytes",
          "at most " + std::to_string(kMaxPathComponentBytes) +
              " bytes per file or folder name (the run adds suffixes; the file system allows 255)"));
      break;
    }
}

// Each link's extreme figures over its schedule, as the shaper enforces them.
void check_links(const Config& cfg, std::vector<std::string>& errors) {
  const double ts = cfg.network.time_scale;
  if (!(ts > 0)) return;  // reported by the reader
  for (const LinkConfig& l : cfg.links) {
    std::vector<double> caps{l.capacity_gbps}, lats{l.latency_ms};
    for (const ScheduleRow& r : l.schedule) caps.push_back(r.capacity_gbps), lats.push_back(r.latency_ms);
    if (l.has_step) caps.push_back(l.step_capacity_gbps), lats.push_back(l.step_latency_ms);
    for (double f : l.markov_factors) caps.push_back(l.capacity_gbps * f);
    const double lo = *std::min_element(caps.begin(), caps.end()) / ts;
    const double hi = *std::max_element(caps.begin(), caps.end()) / ts;
    const double lat = (*std::max_element(lats.begin(), lats.end()) + l.jitter_ms) * ts;
    const double dwell = l.markov_factors.empty() ? kMinDwellS : l.markov_dwell_s * ts;
    std::string what;
    if (lo < kMinCapacityGbps || hi > kMaxCapacityGbps)
      what = "carry " + num(lo < kMinCapacityGbps ? lo : hi) + " Gbit/s";
    else if (lat > kMaxLatencyMs)
      what = "take " + num(lat) + " ms one way (latency + jitter)";
    else if (dwell < kMinDwellS)
      what = "change its Markov state every " + num(dwell) + " s";
    if (what.empty()) continue;
    const std::string link = quote(l.from) + " -> " + quote(l.to);
    const std::string expected =
        "figures the shaper can enforce: capacity / time_scale in [1e-06, 1e+06] Gbit/s, "
        "(latency + jitter) x time_scale at most 3.6e+06 ms, markov_dwell_s x time_scale at "
        "least 0.001 s";
    if (ts != 1.0)
      errors.push_back(msg::line(cfg.where_of("network.time_scale"), "network.time_scale",
                                 "with time_scale " + num(ts) + " the link " + link + " would " + what,
                                 expected));
    else
      errors.push_back(msg::line(cfg.where_of("link"), "link", "the link " + link + " would " + what,
                                 expected));
  }
}

bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  const fs::path x = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const fs::path y = fs::weakly_canonical(b, ec);
  return !ec && x == y;
}

}  // namespace

void check(const Config& cfg, std::vector<std::string>& errors) {
  if (cfg.run_name.size() > kMaxNameChars)
    errors.push_back(msg::line(cfg.where_of("run.name"), "run.name",
                               "a name of " + std::to_string(cfg.run_name.size()) + " characters",
                               "at most " + std::to_string(kMaxNameChars) + " characters"));
  check_path(cfg, "run.out_dir", cfg.out_dir, errors);
  check_path(cfg, "trace.path", cfg.trace.path, errors);
  check_path(cfg, "checkpoint.path", cfg.checkpoint.path, errors);
  check_path(cfg, "train.corpus", cfg.train.corpus, errors);
  check_links(cfg, errors);
  if (same_file(cfg.trace.path, cfg.checkpoint.path))
    errors.push_back(msg::line(cfg.where_of("checkpoint.path"), "checkpoint.path",
                               "the same file as the trace (" + cfg.trace.path + ")",
                               "different trace.path and checkpoint.path"));
  for (const char* key : {"trace.path", "checkpoint.path"}) {
    const std::string& p = std::string(key) == "trace.path" ? cfg.trace.path : cfg.checkpoint.path;
    if (const std::string clash = output_clash(cfg, p); !clash.empty())
      errors.push_back(msg::line(cfg.where_of(key), key, clash,
                                 "an output path that is none of the run's inputs"));
  }
}

}  // namespace strait::limits

namespace strait {

std::string output_clash(const Config& cfg, const std::string& output) {
  namespace fs = std::filesystem;
  if (output.empty()) return "";
  if (limits::same_file(output, cfg.source_file))
    return output + " is the config file (" + cfg.source_file + ")";
  for (const LinkConfig& l : cfg.links)
    if (limits::same_file(output, l.schedule_path))
      return output + " is the link schedule " + l.schedule_path;
  std::error_code ec;
  const std::string& corpus = cfg.train.corpus;
  if (fs::is_directory(corpus, ec)) {
    const fs::path dir = fs::weakly_canonical(corpus, ec), out = fs::weakly_canonical(output, ec);
    if (!ec && std::mismatch(dir.begin(), dir.end(), out.begin(), out.end()).first == dir.end())
      return output + " is inside the corpus folder " + corpus +
             " (train.corpus): the run would train on its own output";
  } else if (limits::same_file(output, corpus)) {
    return output + " is the corpus (train.corpus)";
  }
  return "";
}

}  // namespace strait
