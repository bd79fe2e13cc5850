// grey.hpp — the series math of the grey forecasters: GM(1,1) with its checks, and the Markov
// correction of its relative residuals (Grey-Markov), exactly as ../shared/brief/system.md gives
// them (Deng 1982; Liu & Lin, *Grey Systems*, Springer 2010). Pure functions of one window of a
// series, oldest value first: no MPI, no controller, so the forecaster policies (control/) and
// `strait forecast` (cli/) run the same code. Every check that fails says why, with its numbers.
// Where system.md is silent we chose, and docs/forecast.md says so: residuals and C, P over
// k = 1..n (Liu & Lin; ε(1) = 0), equal-width Markov states between the smallest and largest
// residual, the smallest class-ratio shift.
#pragma once
#include <limits>
#include <string>
#include <vector>

namespace strait::grey {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The check that sent a window to the fallback, by stable name (what `strait forecast` counts).
enum class Check {
  none,         // the model answered
  window,       // fewer values than the window holds
  positivity,   // a value <= 0 or not finite: GM(1,1) is defined for x0 > 0
  fit,          // the least squares for (a, b) has no unique solution
  development,  // -a > 1 (unsuitable) or |a| >= 2 (meaningless)
  forecast,     // the forecast is not finite or not > 0
  markov,       // the Markov-corrected forecast is undefined (1 - Σ P m <= 0)
  grade,        // C and P give grade IV (unqualified)
  skill,        // no significant skill over the fallback on past forecasts (series.hpp)
};
const char* check_name(Check c);

// The class-ratio band (e^{-2/(n+1)}, e^{2/(n+1)}) of a window of n values.
struct Band {
  double lo = 0, hi = 0;
};
Band class_ratio_band(int n);

// The smallest shift c >= 0 (just above it) that puts every ratio (x(k-1)+c)/(x(k)+c) inside the
// band; 0 when the window passes as it is. x > 0.
double class_ratio_shift(const std::vector<double>& x);

// What is wrong with a development coefficient: "" when fine, else why: −a > 1 is unsuitable for
// GM(1,1), |a| >= 2 meaningless. (Positive windows keep |a| < 2 — searched, not proved — and a
// window shifted into the class-ratio band keeps −a below about 0.4, so fits rarely reach these.)
std::string development_problem(double a);

// Grade of a fit from the posterior variance ratio C and the small-error probability P:
// 1 good (C <= 0.35, P >= 0.95), 2 qualified (0.5, 0.8), 3 barely qualified (0.65, 0.7),
// 4 unqualified.
int grade_of(double c, double p);

// A GM(1,1) fit of one window.
struct Gm11 {
  bool ok = false;
  Check failed = Check::none;
  std::string why;  // what failed, with its numbers ("" when ok)
  int n = 0;
  bool ratio_ok = false;       // the window passed the class-ratio test as it was
  double shift = 0;            // added to every value before the fit (class-ratio test)
  double a = 0, b = 0;         // development coefficient and grey input (shifted series)
  double x1 = 0;               // the first shifted value: the forecast's initial condition
  std::vector<double> fitted;  // x̂0(1..n), series units; fitted[0] = x0(1)
  double c = kNaN, p = kNaN;   // posterior variance ratio, small-error probability
  int grade = 0;               // 1..4 (0 when no fit was made)
  // x̂0(n + h), series units: (b − a·x0(1))·(expm1(a)/a)·e^{−a(n+h−1)} − shift (b when a = 0).
  double forecast(int h) const;
};

// Fits GM(1,1) to a window (n >= 4) and runs the checks that make the model undefined:
// positivity, class ratio (by shifting), a unique least-squares solution, the development
// coefficient limits, a finite positive forecast one step ahead. C, P and the grade are always
// filled when the fit was made; acting on the grade is the caller's choice.
// shift = false fits the window as it is whatever its class ratios (for tests and comparisons:
// only an unshifted window can reach the development-coefficient limits; docs/forecast.md).
Gm11 fit_gm11(const std::vector<double>& x, bool shift = true);

// The Markov correction of a fit's relative residuals q(k) = (x0(k) − x̂0(k))/x0(k), k = 1..n:
// `states` equal-width states between min q and max q, transition counts between consecutive
// residuals with one pseudo-count per cell (Laplace), the distribution h steps on from the
// state of q(n), and E = Σ_j P_ij m_j over the state midpoints m_j. The corrected forecast is
// x̂ / (1 − E). When every residual is the same, E is that residual.
struct Markov {
  bool ok = false;
  std::string why;
  std::vector<double> q;           // relative residuals, k = 1..n
  std::vector<int> state;          // state of each residual
  std::vector<double> mid;         // state midpoints m_j
  std::vector<double> transition;  // states × states, row-major, rows sum to 1
  std::vector<double> next;        // the distribution h steps ahead
  double expected = 0;             // E = Σ_j next_j m_j
  double correct(double forecast) const { return forecast / (1 - expected); }
};
Markov markov_correction(const std::vector<double>& x, const Gm11& fit, int states, int h);

}  // namespace strait::grey
