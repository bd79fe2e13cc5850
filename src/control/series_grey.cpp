// series_grey.cpp — the grey series forecasters gm11 and gmc (and their -textbook variants): a
// GM(1,1) fit of the last `window` values, with the Markov correction for gmc, handing over to
// the fallback baseline whenever a check fails. Besides the checks of grey.hpp, gm11 and gmc
// fall back on a grade IV fit and until the model has shown significant skill over the fallback
// on its own past forecasts (skill.hpp): GM(1,1) extrapolates a trend, and on a series without
// one — the real per-worker batch times — it is less accurate than repeating the last value,
// while C, P and the class ratio pass (docs/forecast.md). With fallback "auto" the fallback is
// whichever baseline has had the lowest mean absolute error on all past forecasts of the series.
#include <cmath>
#include <deque>

#include "config/messages.hpp"
#include "control/series.hpp"
#include "control/skill.hpp"

namespace strait {
namespace {

using grey::Check;

class Grey final : public SeriesForecaster {
 public:
  Grey(bool markov, const SeriesParams& p) : markov_(markov), auto_(p.fallback == "auto"), p_(p) {
    for (const auto& n : auto_ ? baseline_names() : std::vector{p.fallback}) {
      bases_.push_back(make_baseline(n, p));
      base_names_.push_back(n);
    }
    total_.assign(bases_.size(), 0.0);
  }

  std::string name() const override {
    return std::string(markov_ ? "gmc" : "gm11") + (p_.textbook ? "-textbook" : "");
  }

  void observe(double x) override {
    for (auto& b : bases_) b->observe(x);
    ++seen_;
    window_.push_back(x);
    if (static_cast<int>(window_.size()) > p_.window) window_.pop_front();
    if (p_.skill_window <= 0 && !auto_) return;
    // Score the forecasts made `horizon` values ago, then make the next ones.
    while (!pending_.empty() && pending_.front().target == seen_) {
      Scored s;
      s.model = std::fabs(pending_.front().model - x);  // NaN when the model had none
      for (double b : pending_.front().bases) s.bases.push_back(std::fabs(b - x));
      pending_.pop_front();
      for (size_t k = 0; k < s.bases.size(); ++k) total_[k] += s.bases[k];
      if (!std::isnan(s.model) && p_.skill_window > 0) {
        pairs_.push_back(s);
        if (static_cast<int>(pairs_.size()) > p_.skill_window) pairs_.pop_front();
      }
    }
    Pending next{seen_ + p_.horizon, grey::kNaN, {}};
    if (const Raw r = raw(p_.horizon); r.ok) next.model = r.value;
    for (auto& b : bases_) next.bases.push_back(b->predict(p_.horizon).value);
    pending_.push_back(std::move(next));
  }

  Prediction predict(int h) const override {
    const Raw r = raw(h);
    const size_t fb = fallback();
    auto hand_over = [&](Check c, const std::string& why) {
      Prediction p = bases_[fb]->predict(h);
      p.model = "fallback:" + base_names_[fb];
      p.check = c, p.why = why;
      describe(r.fit, p);
      return p;
    };
    if (!r.ok) return hand_over(r.check, r.why);
    if (!p_.textbook && r.fit.grade == 4)
      return hand_over(Check::grade, "C = " + msg::num(r.fit.c) + ", P = " + msg::num(r.fit.p) +
                                         ": grade IV (unqualified)");
    if (!p_.textbook && p_.skill_window > 0) {
      std::vector<double> d;
      for (const Scored& s : pairs_) d.push_back(s.model - s.bases[fb]);
      const SkillVerdict v = diebold_mariano(d, p_.skill_window, p_.horizon);
      if (!v.skilled) return hand_over(Check::skill, v.why + " over " + base_names_[fb]);
    }
    Prediction p;
    p.value = r.value, p.model = markov_ ? "gmc" : "gm11";
    describe(r.fit, p);
    return p;
  }

 private:
  // The model's own forecast h ahead, before the grade and skill tests.
  struct Raw {
    bool ok = false;
    double value = grey::kNaN;
    Check check = Check::none;
    std::string why;
    grey::Gm11 fit;
  };
  Raw raw(int h) const {
    Raw r;
    if (static_cast<int>(window_.size()) < p_.window) {
      r.check = Check::window;
      r.why = std::to_string(window_.size()) + " of the " + std::to_string(p_.window) +
              " values of the window";
      return r;
    }
    const std::vector<double> x(window_.begin(), window_.end());
    r.fit = grey::fit_gm11(x);
    if (!r.fit.ok) {
      r.check = r.fit.failed, r.why = r.fit.why;
      return r;
    }
    r.value = r.fit.forecast(h);
    if (!std::isfinite(r.value) || r.value <= 0) {
      r.check = Check::forecast;
      r.why = "the forecast " + msg::num(r.value) + " is not a positive number";
      return r;
    }
    if (markov_) {
      const grey::Markov m = grey::markov_correction(x, r.fit, p_.states, h);
      if (!m.ok) {
        r.check = Check::markov, r.why = m.why;
        return r;
      }
      r.value = m.correct(r.value);
    }
    r.ok = true;
    return r;
  }

  // What a prediction tells of the fit behind it (nothing when none was made).
  static void describe(const grey::Gm11& fit, Prediction& p) {
    if (fit.grade == 0) return;
    p.c = fit.c, p.p = fit.p, p.a = fit.a, p.shift = fit.shift;
  }

  // Absolute errors on one target: the model's (NaN when it had no forecast) and each
  // baseline's.
  struct Scored {
    double model = grey::kNaN;
    std::vector<double> bases;
  };
  // The baseline with the lowest mean absolute error on every past target of the series (the
  // first in baseline_names() order on a tie, and before anything is scored). A long memory on
  // purpose: selecting on the last few errors chases noise (docs/forecast.md).
  size_t fallback() const {
    size_t best = 0;
    for (size_t k = 1; k < bases_.size(); ++k)
      if (total_[k] < total_[best]) best = k;
    return best;
  }

  struct Pending {
    long long target;  // the count of values seen when its target arrives
    double model;
    std::vector<double> bases;
  };
  bool markov_, auto_;
  SeriesParams p_;
  std::vector<std::unique_ptr<SeriesForecaster>> bases_;  // the fallback, or every baseline
  std::vector<std::string> base_names_;
  std::deque<double> window_;
  std::deque<Pending> pending_;
  std::deque<Scored> pairs_;   // the last skill_window targets the model forecast
  std::vector<double> total_;  // each baseline's absolute errors, summed over every target
  long long seen_ = 0;
};

}  // namespace

std::unique_ptr<SeriesForecaster> make_grey(bool markov, const SeriesParams& p) {
  // Not a baseline nor "auto": nothing to fall back to.
  if (p.fallback != "auto" && !make_baseline(p.fallback, p)) return nullptr;
  return std::make_unique<Grey>(markov, p);
}

}  // namespace strait
