// series_baselines.cpp — the baseline series forecasters, flat at every horizon: last-value (the
// last value), moving-mean (mean of the last `window` values) and ewma (level
// ℓ(t) = α·x(t) + (1 − α)·ℓ(t−1), started at the first value), and the factory of series.hpp.
// On real per-worker batch times last-value is the one to beat (docs/forecast.md).
#include <deque>

#include "control/series.hpp"

namespace strait {
namespace {

class LastValue final : public SeriesForecaster {
 public:
  std::string name() const override { return "last-value"; }
  void observe(double x) override { last_ = x, any_ = true; }
  Prediction predict(int) const override {
    Prediction p;
    if (any_) p.value = last_, p.model = name();
    return p;
  }

 private:
  double last_ = 0;
  bool any_ = false;
};

class MovingMean final : public SeriesForecaster {
 public:
  explicit MovingMean(int window) : window_(window) {}
  std::string name() const override { return "moving-mean"; }
  void observe(double x) override {
    values_.push_back(x);
    if (static_cast<int>(values_.size()) > window_) values_.pop_front();
  }
  Prediction predict(int) const override {
    Prediction p;
    if (values_.empty()) return p;
    double s = 0;
    for (double v : values_) s += v;
    p.value = s / values_.size(), p.model = name();
    return p;
  }

 private:
  int window_;
  std::deque<double> values_;
};

class Ewma final : public SeriesForecaster {
 public:
  explicit Ewma(double alpha) : alpha_(alpha) {}
  std::string name() const override { return "ewma"; }
  void observe(double x) override {
    level_ = any_ ? alpha_ * x + (1 - alpha_) * level_ : x;
    any_ = true;
  }
  Prediction predict(int) const override {
    Prediction p;
    if (any_) p.value = level_, p.model = name();
    return p;
  }

 private:
  double alpha_, level_ = 0;
  bool any_ = false;
};

}  // namespace

const std::vector<std::string>& baseline_names() {
  static const std::vector<std::string> names = {"last-value", "moving-mean", "ewma"};
  return names;
}

const std::vector<std::string>& fallback_names() {
  static const std::vector<std::string> names = {"auto", "last-value", "moving-mean", "ewma"};
  return names;
}

const std::vector<std::string>& series_forecaster_names() {
  static const std::vector<std::string> names = {
      "last-value", "moving-mean", "ewma", "gm11-textbook", "gmc-textbook", "gm11", "gmc"};
  return names;
}

std::unique_ptr<SeriesForecaster> make_baseline(const std::string& name, const SeriesParams& p) {
  if (name == "last-value") return std::make_unique<LastValue>();
  if (name == "moving-mean") return std::make_unique<MovingMean>(p.window);
  if (name == "ewma") return std::make_unique<Ewma>(p.ewma_alpha);
  return nullptr;
}

std::unique_ptr<SeriesForecaster> make_series_forecaster(const std::string& name,
                                                         const SeriesParams& p) {
  if (auto b = make_baseline(name, p)) return b;
  SeriesParams q = p;
  if (name == "gm11-textbook" || name == "gmc-textbook") q.textbook = true;
  if (name == "gm11" || name == "gm11-textbook") return make_grey(false, q);
  if (name == "gmc" || name == "gmc-textbook") return make_grey(true, q);
  return nullptr;
}

}  // namespace strait
