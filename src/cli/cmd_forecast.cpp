// cmd_forecast.cpp — `strait forecast --series FILE.csv [--series ...] [--column C] [--group G]
// [--window N] [--horizon H] [--states S] [--alpha A] [--skill-window M] [--fallback B]
// [--out CSV]`: every series forecaster (src/control/series.hpp) run over the series of one or
// more CSV files, each forecasting H steps ahead from every point where the window is full, and
// scored on the same points: MAE, RMSE, MAPE (over non-zero actual values), MASE (against the
// in-sample naive one-step forecast of each series), and how often and why gm11/gmc fell back.
// A file with a `worker` or `pod` column holds one series per value of it (--group). No MPI.
// Gzip-compressed files are refused with the command that decompresses them: the tool reads
// plain text only, so it needs no compression library (docs/forecast.md).
// Errors: "strait: forecast: ..." on stderr, exit status 2, and no output file.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "config/messages.hpp"
#include "control/series.hpp"

namespace strait {
namespace {

namespace fs = std::filesystem;
using grey::Check;

struct ForecastError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The checks a grey model can fall back on, in the order the CSV columns list them.
const Check kChecks[] = {Check::window,   Check::positivity, Check::fit,   Check::development,
                         Check::forecast, Check::markov,     Check::grade, Check::skill};

struct Series {
  std::string id;  // "file.csv" or "file.csv:worker=3"
  std::vector<double> x;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> f;
  std::string cell;
  std::istringstream ss(line);
  while (std::getline(ss, cell, ',')) f.push_back(trim(cell));
  if (!line.empty() && line.back() == ',') f.push_back("");
  return f;
}

// The series of one file: the column's values, per value of the group column when there is one,
// in file order (the rows of a series must be in time order).
std::vector<Series> read_series(const std::string& path, const ForecastArgs& a, std::string& column,
                                std::string& group) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    throw ForecastError(
        path + ": " +
        (fs::exists(path, ec) ? "the file cannot be read" : "the file does not exist") +
        "; expected a readable CSV file (--series)");
  }
  char magic[2] = {0, 0};
  in.read(magic, 2);
  if (in.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
      static_cast<unsigned char>(magic[1]) == 0x8b)
    throw ForecastError(path + ": gzip-compressed; expected an uncompressed CSV (gzip -dc " + path +
                        " > FILE.csv)");
  in.clear();
  in.seekg(0);
  std::string text;
  int line = 0;
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (line == 1 && text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
    if (trim(text).empty() || trim(text)[0] == '#') continue;
    header = split_csv(text);
  }
  if (header.empty())
    throw ForecastError(path + ":" + std::to_string(line) +
                        ": no header line; expected a first line naming the columns");
  auto index_of = [&](const std::string& name) -> int {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  };
  std::vector<std::string> named;
  for (const auto& h : header) named.push_back(msg::quote(h));
  column = a.column.empty() ? header.back() : a.column;
  const int col = index_of(column);
  if (col < 0)
    throw ForecastError(path + ":" + std::to_string(line) + ": --column: no column " +
                        msg::quote(column) + "; expected one of " + msg::join(named));
  group = a.group;
  if (group == "auto")
    group = index_of("worker") >= 0 ? "worker" : index_of("pod") >= 0 ? "pod" : "none";
  const int grp = group == "none" ? -1 : index_of(group);
  if (group != "none" && grp < 0)
    throw ForecastError(path + ":" + std::to_string(line) + ": --group: no column " +
                        msg::quote(group) + "; expected one of " + msg::join(named) +
                        ", \"auto\" or \"none\"");
  if (grp == col)
    throw ForecastError("--group: " + msg::quote(group) +
                        " is the --column itself; expected another column");

  const std::string base = fs::path(path).filename().string();
  std::vector<Series> out;
  std::map<std::string, size_t> slot;
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (trim(text).empty() || trim(text)[0] == '#') continue;
    const std::vector<std::string> f = split_csv(text);
    if (f.size() != header.size())
      throw ForecastError(path + ":" + std::to_string(line) + ": " +
                          msg::count(static_cast<long long>(f.size()), "field") + "; expected " +
                          std::to_string(header.size()) + " as in the header");
    char* end = nullptr;
    const double v = std::strtod(f[col].c_str(), &end);
    if (f[col].empty() || *end != '\0' || !std::isfinite(v))
      throw ForecastError(path + ":" + std::to_string(line) + ": column " + msg::quote(column) +
                          ": " + msg::quote(f[col]) + " is not a number; expected a finite number");
    const std::string key = grp < 0 ? "" : f[grp];
    auto [it, fresh] = slot.try_emplace(key, out.size());
    if (fresh) out.push_back({grp < 0 ? base : base + ":" + group + "=" + key, {}});
    out[it->second].x.push_back(v);
  }
  if (in.bad())
    throw ForecastError(path + ":" + std::to_string(line) +
                        ": the file cannot be read; expected a readable CSV file");
  return out;
}

// Sums over scored points: enough to pool series into one aggregate.
struct Score {
  long long points = 0, ape_points = 0, mase_points = 0;
  double abs = 0, sq = 0, ape = 0, scaled = 0;
  long long fell_back = 0;
  std::map<Check, long long> why;
  void add(const Score& o) {
    points += o.points, ape_points += o.ape_points, mase_points += o.mase_points;
    abs += o.abs, sq += o.sq, ape += o.ape, scaled += o.scaled, fell_back += o.fell_back;
    for (const auto& [c, n] : o.why) why[c] += n;
  }
  double mae() const { return points ? abs / points : NAN; }
  double rmse() const { return points ? std::sqrt(sq / points) : NAN; }
  double mape() const { return ape_points ? 100 * ape / ape_points : NAN; }
  double mase() const { return mase_points ? scaled / mase_points : NAN; }
};

// One forecaster over one series: forecasts from every origin t >= window of x(t + h − 1).
// trail (when given) receives every scored prediction, in order.
Score evaluate(const std::string& name, const SeriesParams& p, const std::vector<double>& x,
               std::vector<Prediction>* trail = nullptr) {
  // MASE scale: the in-sample mean absolute one-step change (Hyndman & Koehler 2006).
  double scale = 0;
  for (size_t t = 1; t < x.size(); ++t) scale += std::fabs(x[t] - x[t - 1]) / (x.size() - 1);
  Score s;
  auto f = make_series_forecaster(name, p);
  const size_t h = p.horizon;
  for (size_t t = 0; t < x.size(); ++t) {
    if (t >= static_cast<size_t>(p.window) && t + h - 1 < x.size()) {
      const Prediction pr = f->predict(p.horizon);
      const double y = x[t + h - 1], e = pr.value - y;
      ++s.points, s.abs += std::fabs(e), s.sq += e * e;
      if (y != 0) ++s.ape_points, s.ape += std::fabs(e / y);
      if (scale > 0) ++s.mase_points, s.scaled += std::fabs(e) / scale;
      if (pr.check != Check::none) ++s.fell_back, ++s.why[pr.check];
      if (trail) trail->push_back(pr);
    }
    f->observe(x[t]);
  }
  return s;
}

std::string fmt(double v, const char* spec = "%.4g") {
  if (!std::isfinite(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, spec, v);
  return b;
}

std::string csv_row(const std::string& series, const std::string& name, const Score& s) {
  // Cells appended one by one (GCC 12 warns, wrongly, on chains of "," + std::string).
  std::vector<std::string> cells = {series,
                                    name,
                                    std::to_string(s.points),
                                    fmt(s.mae(), "%.6g"),
                                    fmt(s.rmse(), "%.6g"),
                                    fmt(s.mape(), "%.6g"),
                                    std::to_string(s.ape_points),
                                    fmt(s.mase(), "%.6g"),
                                    std::to_string(s.fell_back)};
  for (Check c : kChecks) cells.push_back(std::to_string(s.why.count(c) ? s.why.at(c) : 0));
  return msg::join(cells, ",") + "\n";
}

// --points: one row per scored target (its index in the series, from `first`): the actual
// value, every forecaster's forecast, the gm11-textbook fit's C, P, a and shift, and which model
// answered for gmc.
std::string point_rows(const Series& s, const std::vector<std::string>& names,
                       const std::vector<std::vector<Prediction>>& trails, size_t first) {
  size_t textbook = 0, gmc = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "gm11-textbook") textbook = i;
    if (names[i] == "gmc") gmc = i;
  }
  std::string out;
  for (size_t k = 0; k < trails[0].size(); ++k) {
    std::vector<std::string> cells = {s.id, std::to_string(first + k),
                                      fmt(s.x[first + k], "%.10g")};
    for (const auto& t : trails) cells.push_back(fmt(t[k].value, "%.10g"));
    const Prediction& g = trails[textbook][k];
    for (double v : {g.c, g.p, g.a, g.shift}) cells.push_back(fmt(v, "%.6g"));
    cells.push_back(trails[gmc][k].model);
    out += msg::join(cells, ",") + "\n";
  }
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw ForecastError("--out: cannot write " + path + "; expected a writable path");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw ForecastError("--out: cannot write " + path + ": " + ec.message() +
                        "; expected a writable path");
  }
}

// Longer windows or horizons than any series we read would only make every series too short.
constexpr int kLongest = 1 << 24;

void check_args(const ForecastArgs& a) {
  auto bad = [](const std::string& flag, const std::string& what, const std::string& expected) {
    throw ForecastError(flag + ": " + what + "; expected " + expected);
  };
  if (a.window < 4)
    bad("--window", std::to_string(a.window) + " is out of range",
        "an integer >= 4 (GM(1,1) needs 4 values)");
  if (a.horizon < 1 || a.horizon > kLongest)
    bad("--horizon", std::to_string(a.horizon) + " is out of range",
        "an integer in [1, " + std::to_string(kLongest) + "]");
  if (a.window > kLongest)
    bad("--window", std::to_string(a.window) + " is out of range",
        "an integer in [4, " + std::to_string(kLongest) + "]");
  if (a.states < 2)
    bad("--states", std::to_string(a.states) + " is out of range", "an integer >= 2");
  if (!(a.alpha > 0 && a.alpha <= 1))
    bad("--alpha", msg::num(a.alpha) + " is out of range", "a number in (0, 1]");
  if (a.skill_window != 0 && a.skill_window < 4)
    bad("--skill-window", std::to_string(a.skill_window) + " is out of range",
        "0 (no skill test) or an integer >= 4");
  const auto& b = fallback_names();
  if (std::find(b.begin(), b.end(), a.fallback) == b.end())
    bad("--fallback", "unknown baseline " + msg::quote(a.fallback), "one of " + msg::join(b));
}

}  // namespace

int cmd_forecast(const ForecastArgs& a) {
  try {
    check_args(a);
    SeriesParams p;
    p.window = a.window, p.horizon = a.horizon, p.states = a.states, p.ewma_alpha = a.alpha;
    p.skill_window = a.skill_window, p.fallback = a.fallback;

    std::vector<Series> all;
    std::string column, group;
    std::vector<std::string> described;
    for (const auto& path : a.series) {
      std::vector<Series> s = read_series(path, a, column, group);
      described.push_back(path + " (column " + column +
                          (group == "none" ? "" : ", one series per " + group) + ", " +
                          std::to_string(s.size()) + " series" + ")");
      all.insert(all.end(), s.begin(), s.end());
    }
    const auto& names = series_forecaster_names();
    std::vector<Score> total(names.size());
    std::string rows, points;
    int used = 0, skipped = 0, no_scale = 0;
    for (const Series& s : all) {
      if (s.x.size() < static_cast<size_t>(a.window + a.horizon)) {
        ++skipped;
        continue;
      }
      ++used;
      std::vector<std::vector<Prediction>> trails(names.size());
      for (size_t i = 0; i < names.size(); ++i) {
        const Score sc = evaluate(names[i], p, s.x, a.points.empty() ? nullptr : &trails[i]);
        if (i == 0 && sc.mase_points == 0) ++no_scale;
        total[i].add(sc);
        rows += csv_row(s.id, names[i], sc);
      }
      if (!a.points.empty()) points += point_rows(s, names, trails, a.window + a.horizon - 1);
    }
    if (used == 0)
      throw ForecastError("--series: no series has the " + std::to_string(a.window + a.horizon) +
                          " values that --window " + std::to_string(a.window) + " and --horizon " +
                          std::to_string(a.horizon) + " need; expected longer series");

    std::printf("series: %s\n", msg::join(described, "; ").c_str());
    std::printf("%d series scored, %d shorter than window + horizon skipped%s\n", used, skipped,
                no_scale ? (", " + std::to_string(no_scale) + " constant (no MASE)").c_str() : "");
    std::printf("window %d, horizon %d, states %d, ewma alpha %s, skill window %d, fallback %s\n",
                a.window, a.horizon, a.states, msg::num(a.alpha).c_str(), a.skill_window,
                a.fallback.c_str());
    std::printf(
        "%lld forecasts per forecaster; MAPE over the %lld with a non-zero actual value\n\n",
        total[0].points, total[0].ape_points);
    std::printf("%-14s %10s %10s %8s %7s %10s\n", "forecaster", "MAE", "RMSE", "MAPE%", "MASE",
                "fell back");
    for (size_t i = 0; i < names.size(); ++i) {
      const Score& s = total[i];
      const bool grey = names[i].rfind("gm", 0) == 0;
      std::printf("%-14s %10s %10s %8s %7s %10s\n", names[i].c_str(), fmt(s.mae()).c_str(),
                  fmt(s.rmse()).c_str(), fmt(s.mape(), "%.4f").c_str(),
                  fmt(s.mase(), "%.4f").c_str(),
                  grey ? (fmt(100.0 * s.fell_back / s.points, "%.1f") + "%").c_str() : "");
    }
    std::printf("\nwhy gm11/gmc fell back (share of forecasts):\n");
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i].rfind("gm", 0) != 0) continue;
      std::string line;
      for (Check c : kChecks)
        if (total[i].why.count(c))
          line += std::string(line.empty() ? "" : ", ") + grey::check_name(c) + " " +
                  fmt(100.0 * total[i].why.at(c) / total[i].points, "%.1f") + "%";
      std::printf("  %-14s %s\n", names[i].c_str(), line.empty() ? "never" : line.c_str());
    }

    if (!a.out.empty()) {
      std::string head = "series,forecaster,points,mae,rmse,mape_pct,mape_points,mase,fell_back";
      for (Check c : kChecks) head += std::string(",fallback_") + grey::check_name(c);
      std::string text = head + "\n";
      for (size_t i = 0; i < names.size(); ++i) text += csv_row("all", names[i], total[i]);
      write_file(a.out, text + rows);
    }
    if (!a.points.empty()) {
      std::string head = "series,target,actual";
      for (const auto& n : names) head += "," + n;
      write_file(a.points, head + ",c,p,a,shift,gmc_model\n" + points);
    }
    return 0;
  } catch (const ForecastError& e) {
    std::fprintf(stderr, "strait: forecast: %s\n", e.what());
    return 2;
  }
}

}  // namespace strait
