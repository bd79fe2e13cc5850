// grey.cpp — GM(1,1) and its Markov correction (see grey.hpp). The least squares is Eigen's
// column-pivoting QR on the (n−1)×2 system, which reports a rank instead of dividing by a
// vanishing determinant.
#include "control/grey.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "config/messages.hpp"

namespace strait::grey {

using msg::num;

const char* check_name(Check c) {
  switch (c) {
    case Check::none:
      return "none";
    case Check::window:
      return "window";
    case Check::positivity:
      return "positivity";
    case Check::fit:
      return "fit";
    case Check::development:
      return "development";
    case Check::forecast:
      return "forecast";
    case Check::markov:
      return "markov";
    case Check::grade:
      return "grade";
    case Check::skill:
      return "skill";
  }
  return "?";
}

Band class_ratio_band(int n) {
  const double e = 2.0 / (n + 1);
  return {std::exp(-e), std::exp(e)};
}

namespace {

bool ratios_inside(const std::vector<double>& x, double c, Band band) {
  for (size_t k = 1; k < x.size(); ++k) {
    const double r = (x[k - 1] + c) / (x[k] + c);
    if (!(r > band.lo && r < band.hi)) return false;
  }
  return true;
}

// expm1(a)/a, continuous at a = 0.
double growth(double a) { return a == 0 ? 1.0 : std::expm1(a) / a; }

}  // namespace

double class_ratio_shift(const std::vector<double>& x) {
  const Band band = class_ratio_band(static_cast<int>(x.size()));
  if (ratios_inside(x, 0, band)) return 0;
  // (x(k−1)+c)/(x(k)+c) < hi  ⇔  c > (x(k−1) − hi·x(k))/(hi − 1), and
  // (x(k−1)+c)/(x(k)+c) > lo  ⇔  c > (lo·x(k) − x(k−1))/(1 − lo): the largest bound is the least
  // shift; the ratios move towards 1 as c grows, so anything above it passes.
  double least = 0, top = 0;
  for (size_t k = 1; k < x.size(); ++k) {
    least = std::max(least, (x[k - 1] - band.hi * x[k]) / (band.hi - 1));
    least = std::max(least, (band.lo * x[k] - x[k - 1]) / (1 - band.lo));
    top = std::max({top, x[k - 1], x[k]});
  }
  // Just above the bound (the band is open); widen the margin until rounding agrees.
  for (double margin = 1e-9; margin < 1; margin *= 10) {
    const double c = least + margin * (least + top);
    if (ratios_inside(x, c, band)) return c;
  }
  return 2 * least + top;  // far inside: ratios within a factor 1.5 of each other
}

std::string development_problem(double a) {
  if (!(std::fabs(a) < 2)) return "|a| = " + num(std::fabs(a)) + " >= 2: the model is meaningless";
  if (-a > 1) return "-a = " + num(-a) + " > 1: the series grows too fast for GM(1,1)";
  return "";
}

int grade_of(double c, double p) {
  if (c <= 0.35 && p >= 0.95) return 1;
  if (c <= 0.50 && p >= 0.80) return 2;
  if (c <= 0.65 && p >= 0.70) return 3;
  return 4;
}

double Gm11::forecast(int h) const {
  const double k = n + h - 1;
  return (b - a * x1) * growth(a) * std::exp(-a * k) - shift;
}

Gm11 fit_gm11(const std::vector<double>& x, bool shift) {
  Gm11 g;
  g.n = static_cast<int>(x.size());
  auto fail = [&](Check c, std::string why) {
    g.ok = false, g.failed = c, g.why = std::move(why);
    return g;
  };
  if (g.n < 4)
    return fail(Check::window, "GM(1,1) needs n >= 4 values, got " + std::to_string(g.n));
  for (int k = 0; k < g.n; ++k)
    if (!std::isfinite(x[k]) || x[k] <= 0)
      return fail(Check::positivity, "x0(" + std::to_string(k + 1) + ") = " + num(x[k]) +
                                         " is not > 0: GM(1,1) needs a positive series");

  g.ratio_ok = ratios_inside(x, 0, class_ratio_band(g.n));
  g.shift = shift && !g.ratio_ok ? class_ratio_shift(x) : 0;
  std::vector<double> y(x);
  for (double& v : y) v += g.shift;
  g.x1 = y[0];

  // AGO, background values z(k) = (x1(k) + x1(k−1))/2, and x0(k) + a·z(k) = b for k = 2..n.
  Eigen::MatrixXd B(g.n - 1, 2);
  Eigen::VectorXd Y(g.n - 1);
  double ago = y[0];
  for (int k = 1; k < g.n; ++k) {
    const double prev = ago;
    ago += y[k];
    B(k - 1, 0) = -(ago + prev) / 2;
    B(k - 1, 1) = 1;
    Y(k - 1) = y[k];
  }
  const auto qr = B.colPivHouseholderQr();
  if (qr.rank() < 2) return fail(Check::fit, "the least squares for (a, b) is rank-deficient");
  const Eigen::Vector2d ab = qr.solve(Y);
  g.a = ab(0), g.b = ab(1);
  if (!std::isfinite(g.a) || !std::isfinite(g.b))
    return fail(Check::fit, "the least squares gave a = " + num(g.a) + ", b = " + num(g.b));

  // Fitted values, C and P: over k = 1..n, with ε(1) = 0 (the initial condition is exact).
  g.fitted.assign(g.n, x[0]);
  for (int k = 1; k < g.n; ++k)
    g.fitted[k] = (g.b - g.a * g.x1) * growth(g.a) * std::exp(-g.a * k) - g.shift;
  double xm = 0, em = 0;
  for (int k = 0; k < g.n; ++k) xm += x[k] / g.n, em += (x[k] - g.fitted[k]) / g.n;
  double s1 = 0, s2 = 0;
  for (int k = 0; k < g.n; ++k) {
    s1 += (x[k] - xm) * (x[k] - xm) / g.n;
    const double e = x[k] - g.fitted[k] - em;
    s2 += e * e / g.n;
  }
  s1 = std::sqrt(s1), s2 = std::sqrt(s2);
  if (s1 <= 1e-12 * std::fabs(xm)) {
    g.c = 0, g.p = 1;  // a constant window: the fit (a = 0, b = x) is exact
  } else {
    g.c = s2 / s1;
    int close = 0;
    for (int k = 0; k < g.n; ++k) close += std::fabs(x[k] - g.fitted[k] - em) < 0.6745 * s1;
    g.p = static_cast<double>(close) / g.n;
  }
  g.grade = grade_of(g.c, g.p);

  if (std::string why = development_problem(g.a); !why.empty())
    return fail(Check::development, why);
  const double next = g.forecast(1);
  if (!std::isfinite(next) || next <= 0)
    return fail(Check::forecast, "the forecast " + num(next) + " is not a positive number");
  g.ok = true;
  return g;
}

Markov markov_correction(const std::vector<double>& x, const Gm11& fit, int states, int h) {
  Markov m;
  const int n = static_cast<int>(x.size());
  for (int k = 0; k < n; ++k) m.q.push_back((x[k] - fit.fitted[k]) / x[k]);
  const auto [lo_it, hi_it] = std::minmax_element(m.q.begin(), m.q.end());
  const double lo = *lo_it, hi = *hi_it;
  const double width = (hi - lo) / states;
  m.mid.resize(states);
  for (int j = 0; j < states; ++j) m.mid[j] = lo + (j + 0.5) * width;
  if (!(width > 1e-12 * (1 + std::fabs(hi)))) {
    // Every residual alike: one state, whose value is that residual.
    m.state.assign(n, 0);
    m.expected = m.q.back();
  } else {
    for (double q : m.q)
      m.state.push_back(std::min(states - 1, static_cast<int>((q - lo) / width)));
    m.transition.assign(states * states, 1.0);  // Laplace: one pseudo-count per cell
    for (int k = 1; k < n; ++k) m.transition[m.state[k - 1] * states + m.state[k]] += 1;
    for (int i = 0; i < states; ++i) {
      double row = 0;
      for (int j = 0; j < states; ++j) row += m.transition[i * states + j];
      for (int j = 0; j < states; ++j) m.transition[i * states + j] /= row;
    }
    m.next.assign(states, 0.0);
    m.next[m.state.back()] = 1;
    for (int step = 0; step < h; ++step) {
      std::vector<double> after(states, 0.0);
      for (int i = 0; i < states; ++i)
        for (int j = 0; j < states; ++j) after[j] += m.next[i] * m.transition[i * states + j];
      m.next = after;
    }
    m.expected = 0;
    for (int j = 0; j < states; ++j) m.expected += m.next[j] * m.mid[j];
  }
  if (!(1 - m.expected > 0)) {
    m.why = "the expected relative residual " + num(m.expected) + " leaves no corrected forecast";
    return m;
  }
  m.ok = true;
  return m;
}

}  // namespace strait::grey
