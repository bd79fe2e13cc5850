// rank_series.cpp — see rank_series.hpp.
#include "control/rank_series.hpp"

#include <algorithm>
#include <map>

#include "control/work.hpp"
#include "core/check.hpp"

namespace strait {

SeriesParams series_params(const Config& cfg) {
  const ForecastConfig& f = cfg.control.forecast;
  SeriesParams p;
  p.window = f.window, p.states = f.states, p.horizon = f.horizon, p.fallback = f.fallback;
  p.ewma_alpha = f.ewma_alpha, p.skill_window = f.skill_window;
  p.textbook = f.checks == "textbook";
  return p;
}

namespace {
class SeriesPolicy final : public Forecaster {
 public:
  SeriesPolicy(const std::string& name, const Config& cfg)
      : name_(name), ranks_(name, series_params(cfg)) {}
  std::string name() const override { return name_; }
  Forecast forecast(const ControllerView& v) override { return ranks_.forecast(v); }

 private:
  std::string name_;
  RankSeries ranks_;
};
}  // namespace

std::unique_ptr<Forecaster> make_rank_series_forecaster(const std::string& name,
                                                        const Config& cfg) {
  return std::make_unique<SeriesPolicy>(name, cfg);
}

Forecast RankSeries::forecast(const ControllerView& v) {
  Forecast f;
  const auto& history = v.history();
  if (history.empty()) return f;
  const size_t n = history.back().ranks.size();
  while (ranks_.size() < n) {
    ranks_.push_back(make_series_forecaster(name_, p_));
    // Names and fallbacks were validated with the config (validate/).
    STRAIT_CHECK(ranks_.back() != nullptr,
                 "series forecaster " + name_ + " with fallback " + p_.fallback);
  }
  for (const StepRecord& s : history) {
    if (s.step <= fed_) continue;
    for (size_t r = 0; r < n && r < s.ranks.size(); ++r)
      ranks_[r]->observe(s.ranks[r].ref_load_ms());
    fed_ = s.step;
  }
  const int lead = static_cast<int>(std::max<int64_t>(1, v.effective_step() - fed_));
  std::map<std::string, int> models;
  // The series are at each rank's reference work; the forecast is at the record in force's.
  const std::vector<double> w = relative_work(v.world(), v.plan().splits, v.plan().shares);
  for (size_t r = 0; r < n; ++r) {
    const Prediction p = ranks_[r]->predict(lead);
    f.load_ms.push_back(p.value * w[r]);
    f.model.push_back(p.model);
    f.why.push_back(p.why);
    f.c.push_back(p.c);
    f.p.push_back(p.p);
    ++models[p.model];
    std::vector<double> ahead = {p.value * w[r]};
    for (int j = 1; j < p_.horizon; ++j)
      ahead.push_back(ranks_[r]->predict(lead + j).value * w[r]);
    f.ahead_ms.push_back(std::move(ahead));
  }
  std::string counts;
  for (const auto& [m, k] : models)
    counts += (counts.empty() ? "\"" : ",\"") + m + "\":" + std::to_string(k);
  f.detail = "{\"series\":\"" + name_ + "\",\"to_step\":" + std::to_string(fed_) +
             ",\"lead\":" + std::to_string(lead) + ",\"window\":" + std::to_string(p_.window) +
             ",\"models\":{" + counts + "}}";
  return f;
}

}  // namespace strait
