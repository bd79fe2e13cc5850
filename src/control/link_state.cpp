// link_state.cpp — online link estimates from wire measurements (see link_state.hpp).
#include "control/link_state.hpp"

#include <algorithm>
#include <cmath>

#include "control/view.hpp"

namespace strait {
namespace {
// How far the reference may move before the levels are cut again from the kept measurements.
constexpr double kRebin = 0.05;
// Gaps longer than this teach the chain nothing: their ends are all but independent.
constexpr int64_t kMaxGap = 64;
constexpr size_t kKeptGaps = 512;  // the last ones; older ones leave the chain at the next refit
constexpr size_t kRefit = 16;      // new gaps before all are counted again
constexpr int kEmRounds = 8;
// A relayed link that streamed below this share of its upstream's pace was the bottleneck (and
// a relayed flow let through below this share of its part of a link was held back upstream).
constexpr double kPaced = 0.7;
// Params::burst_over under tc (LinkStates::kBurstOverTc), 3: a lower bound this many times a
// level's measured mean rules that level out (bound_level) — above the goodput a token bucket's
// burst lends a small flow on a slow link (under tc, 391 untimed parts of 3-100 KB on a 0.005
// Gbit/s link read 1.2x its rate at the median, 2.6x at most), below what a recovered link gave
// such a part (0.018 on detour3's 0.1 Gbit/s link, 3.6x level 0; untimed parts on clear 0.1
// links under tc: 4.8x a twentieth at the median). The software shaper lends no burst, and there
// the same 3 hid recoveries: markov3's a→b, back from a twentieth to a quarter, carried the small
// part of a split whose receiver was still busy with the ring step before (the part's chunks all
// found waiting: untimed), read 0.0145 Gbit/s (2.7x level 0's 0.0053), stood in level 0, and the
// split stayed sized for a twentieth for four steps (174 ms syncs where oracle-now's took 104;
// docs/paths.md, "A recovery read through a late receiver").
// Hysteresis of the levels, in bins: an exact sample one level from the last within this much
// of the edge between them keeps the last level (chain_level).
constexpr double kHysteresis = 0.5;
// A link whose last interval of a step read more than this factor above or below the step's
// whole figure changed within the step: the last interval is where it is now (now_gbps).
constexpr double kLateChange = 2.0;

// A change within the step: the step's rate blends the link before and after it (a recovery
// shows only in the bytes sent after it), and a decision made on the blend still sees the link
// congested — on markov3 a→b and b→a recovered in the middle of a sync while a→c fell, and the
// next decision split a→b's bytes onto the path through c (571 ms against 123 for the selector
// that read the truth). Where the link's last interval of the kind (`late`, over `late_ms` of
// the `whole_ms`: the last transfer that kept it busy, or the last streaming) read over
// kLateChange times the whole figure, or under 1/kLateChange of it, that interval is the
// sample: the link as it is now (docs/paths.md, "A change within the step"). Noise does not
// reach the factor: on markov3 steps whose link did not change, a backed rate's last interval
// was within 0.86–1.09 of the whole (1st–99th percentile; none of 5983 beyond the factor), a
// relayed hop's streaming one within 0.70–1.27 (8 of 1074 beyond it, its upstream's changes).
bool changed_within(double whole, double late, double whole_ms, double late_ms) {
  return late > 0 && late_ms < whole_ms && (late > kLateChange * whole || late * kLateChange < whole);
}
double now_gbps(double whole, double late, double whole_ms, double late_ms) {
  return changed_within(whole, late, whole_ms, late_ms) ? late : whole;
}

// A rate read under this share of what the link's flows demonstrably got through it (their
// goodput, over Params::goodput_over) is not the link's rate (observe). Noise stays above it:
// on markov3 and sparse-ring4 (9 runs, 8272 readings within 10% of the configured rate, their
// link unchanged from the step before) the reading was never under 0.983 times the goodput.
constexpr double kUnderGoodput = 0.95;
}  // namespace

Carriage::Carriage(int n, const std::vector<std::vector<int>>& paths)
    : first(static_cast<size_t>(n) * n, false), flows(static_cast<size_t>(n) * n, 0),
      upstream(static_cast<size_t>(n) * n) {
  for (const auto& p : paths)
    for (size_t h = 0; h + 1 < p.size(); ++h) {
      const int l = p[h] * n + p[h + 1];
      ++flows[l];
      if (h == 0) {
        first[l] = true;
        continue;
      }
      std::vector<int> before;
      for (size_t u = 0; u < h; ++u) before.push_back(p[u] * n + p[u + 1]);
      upstream[l].push_back(std::move(before));
    }
}

LinkStates::LinkStates(int n, std::vector<double> configured_gbps,
                       std::vector<double> configured_latency_ms, Params p)
    : n_(n), p_(p), nominal_(std::move(configured_gbps)),
      latency_prior_(std::move(configured_latency_ms)) {
  const size_t L = static_cast<size_t>(n) * n;
  last_ = ewma_ = ref_ = binned_ref_ = nominal_;
  series_.assign(L, {});
  held_.assign(L, {});
  held_ref_.assign(L, 0.0);
  gaps_.assign(L, {});
  fitted_.assign(L, 0);
  lat_ = latency_prior_;
  lat_seen_.assign(L, false);
  lat_window_.assign(L, {});
  last_step_.assign(L, -1);
  chain_step_.assign(L, -1);
  bel_step_.assign(L, -1);
  last_bound_.assign(L, false);
  last_untimed_.assign(L, false);
  seen_.assign(L, 0);
  chain_state_.assign(L, p_.states - 1);
  bel_.assign(L, std::vector<double>(p_.states, 0.0));
  for (auto& b : bel_) b.back() = 1.0;  // the top level: the configured prior
  counts_.assign(L, std::vector<double>(static_cast<size_t>(p_.states) * p_.states, 0.0));
  direct_ = counts_;
  sum_.assign(L, std::vector<double>(p_.states, 0.0));
  num_.assign(L, std::vector<double>(p_.states, 0.0));
}

int LinkStates::level(double gbps, double ref) const {
  if (ref <= 0) return 0;
  const int k = static_cast<int>(std::floor(gbps / ref * p_.states));
  return std::clamp(k, 0, p_.states - 1);
}

// Why hysteresis: under tc detour3's clear links delivered 0.07-0.10 Gbit/s from sync to sync
// against a reference of ~0.1, across the edge of the top two of five levels at 0.08; of the
// transitions counted in a run 15% were such flips (2% under the software shaper). They are
// measurement noise, not congestion coming and going, but the chain took them as transitions,
// and through the world's share of stays (smoothed) they set every young row's persistence: a
// link seen congested once was believed more likely recovered than not three unmeasured steps
// later (5 levels: stay 0.6 a step), and mdp sent a share of its bytes back over it to look,
// ~220 ms a try while it was still at a twentieth. A move of two levels or more, or one beyond
// half a bin from the edge, is taken at once: congestion onsets are not slowed.
int LinkStates::chain_level(int l, double gbps) const {
  const int k = level(gbps, binned_ref_[l]);
  if (chain_step_[l] < 0) return k;
  const int last = chain_state_[l];
  if (std::abs(k - last) != 1 || binned_ref_[l] <= 0) return k;
  const double bin = binned_ref_[l] / p_.states;
  const double edge = std::max(k, last) * bin;
  return std::fabs(gbps - edge) < kHysteresis * bin ? last : k;
}

int LinkStates::state_of(int s, int d, double gbps) const {
  return level(gbps, binned_ref_[s * n_ + d]);
}

void LinkStates::add(int l, int64_t step, double gbps, bool bound, bool untimed, bool may_name) {
  last_step_[l] = step;
  last_bound_[l] = bound;
  last_untimed_[l] = bound && untimed;
  if (bound) {
    take_bound(l, step, gbps, may_name);
    return;
  }
  const int k = chain_level(l, gbps);
  see_level(l, step, k);
  sum_[l][k] += gbps;
  num_[l][k] += 1;
}

// "At least gbps" at `step`: the belief loses the levels below (truncate) and the chain learns
// nothing — unless `may_name` (a relayed-only link's paced bound) and it leaves only the top
// level, which it then names (see_level).
void LinkStates::take_bound(int l, int64_t step, double gbps, bool may_name) {
  const int k = bound_level(l, gbps);
  if (may_name && k == p_.states - 1) see_level(l, step, k);
  else truncate(l, step, k);
}

// Link l was in level k at `step`: the chain counts the transition (or the gap) from the last
// level seen, and the belief is that level. An exact sample names its level; so does a relayed-only
// link's paced bound that leaves only the top one (bound_level), as nothing lies above it
// (observe says why not other bounds). Why those bounds too: a link
// carrying only relayed flows is measured by bounds (paced), and while bounds taught the chain
// nothing, what its few exact samples had taught stayed: on sparse-ring4 the way round's 2→1,
// read once at 0.009 while a relay's chunks trickled in (step 11), then bounded at 0.085 in the
// top level every step for 40 steps, kept a 5% chance a step of falling to that level — expected
// at 0.05 where it carried 0.085 — and the joint step left a tenth of a→b's bytes on congested
// a→b (117 ms a step where relaying all took 93).
void LinkStates::see_level(int l, int64_t step, int k) {
  const int K = p_.states;
  if (chain_step_[l] >= 0 && step == chain_step_[l] + 1) {
    direct_[l][static_cast<size_t>(chain_state_[l]) * K + k] += 1;
    counts_[l][static_cast<size_t>(chain_state_[l]) * K + k] += 1;
    ++seen_[l];
  } else if (chain_step_[l] >= 0 && step > chain_step_[l] + 1 && step - chain_step_[l] <= kMaxGap) {
    const Gap gap{chain_state_[l], k, step - chain_step_[l]};
    auto& gaps = gaps_[l];
    gaps.push_back(gap);
    if (gaps.size() > kKeptGaps) gaps.erase(gaps.begin()), fitted_[l] = std::max<size_t>(1, fitted_[l]) - 1;
    // At once by the chain as it stands; every kRefit gaps all of them again, until the
    // chain they give is the one they were counted with (below). While there are few (up to
    // kRefit), at every gap: a gap counted once by a chain still close to its prior teaches
    // that prior's persistence back to it (the fixed prior this file had, 5/8 with 4 levels:
    // a link measured congested at both ends of a 6-step gap "taught" that congestion ends
    // within a few steps, and mdp went back to it every few steps on detour3 under tc).
    expect_gap(smoothed(counts_[l], l), gap, counts_[l]);
    if (gaps.size() >= fitted_[l] + kRefit || gaps.size() <= kRefit) refit(l);
  }
  chain_state_[l] = k;
  chain_step_[l] = step;
  bel_[l].assign(static_cast<size_t>(K), 0.0);
  bel_[l][k] = 1.0;
  bel_step_[l] = step;
}

// A bound rules out the levels below its own, and also its own and those above while the level's
// mean as measured is under gbps / burst_over: the MDP prices a link in a level at that mean, and
// a link seen delivering at least that many times it is not in that level as the model knows it
// (under tc 3: twice was within a burst's reach, below). Why: on
// detour3 a→b recovered while mdp kept a sliver of a→b's bytes on it (a split at the congested
// rate); the sliver's flow was over before its chunks could be timed, so its goodput came as a
// bound, 0.018 Gbit/s on a link with reference 0.1 — level 0 of 5, whose mean was 0.005. Level 0
// stood, the bound raised the link's expected rate and so the split's share on it, the split
// then cost more in level 0 than the relay, and mdp relayed all of a→b's bytes round it, while it
// was clear, for the ~40 steps left (about 10 ms a step above oracle-now, in each of three runs).
// With twice, tc detour3's sliver on a→b while it was congested (~25 KB: four ring rounds of
// ~6 KB, each passing its first 3 KB on the htb bucket's burst) read 0.0084-0.0097 against level
// 0's mean of 0.0047, ruled level 0 out, and the next decision put a quarter of a→b's bytes on
// it: 240-500 ms steps, two to five a run (docs/paths.md, "A sliver that keeps looking").
int LinkStates::bound_level(int l, double gbps) const {
  int k = level(gbps, binned_ref_[l]);
  if (num_[l][k] == 0) return k;
  const std::vector<double> g = state_gbps(l / n_, l % n_);
  while (k + 1 < p_.states && num_[l][k] > 0 && g[k] * p_.burst_over < gbps) ++k;
  return k;
}

// A lower bound in level k at `step` (censored: the link delivered at least that much): the
// belief then, without the levels below k. Counted as the level it names — what bounds did
// before — it taught the chain congestion the link never had and held the link there: on
// markov3 links carrying small flows behind a slow ring hop (their receiver came late, so
// their goodput was a third of the link) sat in level 1 at their goodput, and mdp stopped
// splitting a congested pair over them.
void LinkStates::truncate(int l, int64_t step, int k) {
  // A bound above the level of the last exact sample says the link left that level in between:
  // a gap from it to the next exact sample would be counted as if it might have stayed, and
  // teach that the level lasts (a congested link, then the fast part of a split for 30 steps,
  // then congested again, would read as 30 steps of congestion). The gap is broken instead.
  if (chain_step_[l] >= 0 && k > chain_state_[l]) chain_step_[l] = -1;
  std::vector<double> b = belief(l / n_, l % n_, step);
  double mass = 0;
  for (int j = 0; j < p_.states; ++j) {
    if (j < k) b[j] = 0;
    mass += b[j];
  }
  if (mass > 0) {
    for (double& x : b) x /= mass;
  } else {
    std::fill(b.begin(), b.end(), 0.0);
    b[k] = 1.0;
  }
  bel_[l] = std::move(b);
  bel_step_[l] = step;
}

std::vector<double> LinkStates::smoothed(const std::vector<double>& c, int l) const {
  const int K = p_.states;
  const double w = 2.0 * K;
  // What the world's other links have done, row by row: a link seen a few times in a level
  // borrows how long that level lasts elsewhere, and a level a link has never left is not
  // given a chance of congestion the world has never shown. Under it a persistence-heavy base,
  // 2K pseudo-counts a row with p̄ on the diagonal and the rest evenly off it, p̄ the share of
  // all counted transitions (the world's and this link's) that stayed, with K + 1 pseudo-stays
  // in 2K. Each row of this link then gets 2K pseudo-counts spread as that prior row. With no
  // counts anywhere: one a cell and K more on the diagonal (p̄ = (K + 1)/2K) — a link with
  // little history is expected to stay where it is rather than to be anywhere.
  // Why: with that fixed prior (5/8 with four levels), a link seen congested at both ends of a
  // 6-step gap, on steps of 60 ms, was expected to have recovered within a few steps and mdp
  // went back to it again and again (detour3 under tc); and a clear link measured once was given
  // a 56% chance of levels never seen anywhere, at made-up capacities, so a relay over it looked
  // slower than the direct link it was to relieve (on clear3 mdp stopped splitting).
  std::vector<double> others(static_cast<size_t>(K) * K, 0.0);
  for (size_t m = 0; m < counts_.size(); ++m)
    if (static_cast<int>(m) != l)
      for (int x = 0; x < K * K; ++x) others[x] += counts_[m][x];
  double stay = K + 1, all = w;
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < K; ++j) {
      const double n = others[i * K + j] + c[i * K + j];
      all += n;
      if (i == j) stay += n;
    }
  const double pbar = stay / all;
  std::vector<double> P(static_cast<size_t>(K) * K);
  for (int i = 0; i < K; ++i) {
    double orow = w, row = w;
    for (int j = 0; j < K; ++j) orow += others[i * K + j], row += c[i * K + j];
    for (int j = 0; j < K; ++j) {
      const double base = w * (i == j ? pbar : (1 - pbar) / (K - 1));
      const double prior = (others[i * K + j] + base) / orow;  // the prior row, summing to 1
      P[i * K + j] = (c[i * K + j] + w * prior) / row;
    }
  }
  return P;
}

// Level i measured at step t, level j at t + g, nothing between (the link was not in use: a
// path selector left it). The g transitions in between are unknown; each (a → b) is counted by
// its probability given both ends under the chain P (the E-step of Baum–Welch with both ends
// known): Σ_t P^t[i,a]·P[a,b]·P^(g−1−t)[b,j] / P^g[i,j], g transitions in all. Without this a
// link left while congested taught the chain nothing when it was tried again and found still
// congested (or recovered), so how long congestion lasts was learned only from the steps the
// link was in use — the few steps of each onset.
void LinkStates::expect_gap(const std::vector<double>& P, const Gap& gap,
                            std::vector<double>& counts) const {
  const int K = p_.states;
  auto mul = [K](const std::vector<double>& A, const std::vector<double>& B) {
    std::vector<double> C(static_cast<size_t>(K) * K, 0.0);
    for (int r = 0; r < K; ++r)
      for (int m = 0; m < K; ++m)
        for (int c = 0; c < K; ++c) C[r * K + c] += A[r * K + m] * B[m * K + c];
    return C;
  };
  std::vector<std::vector<double>> pw(static_cast<size_t>(gap.g) + 1);
  pw[0].assign(static_cast<size_t>(K) * K, 0.0);
  for (int r = 0; r < K; ++r) pw[0][r * K + r] = 1.0;
  for (int64_t t = 0; t < gap.g; ++t) pw[t + 1] = mul(pw[t], P);
  const int i = gap.from, j = gap.to;
  const double z = pw[gap.g][i * K + j];
  if (!(z > 0)) return;
  for (int64_t t = 0; t < gap.g; ++t)
    for (int a = 0; a < K; ++a)
      for (int b = 0; b < K; ++b)
        counts[a * K + b] += pw[t][i * K + a] * P[a * K + b] * pw[gap.g - 1 - t][b * K + j] / z;
}

// Every gap counted again by the chain the counts give, a few times over (EM: each round's
// chain fits the data at least as well as the last). Counted once, by the chain of its own
// time, each gap keeps the bias of that chain: on a link that stays with probability 0.9 a
// step, measured every 5th step, the once-counted chain settled at 0.79.
void LinkStates::refit(int l) {
  std::vector<double> c = counts_[l];
  for (int round = 0; round < kEmRounds; ++round) {
    const std::vector<double> P = smoothed(c, l);
    c = direct_[l];
    for (const Gap& gap : gaps_[l]) expect_gap(P, gap, c);
  }
  counts_[l] = std::move(c);
  fitted_[l] = gaps_[l].size();
}

void LinkStates::rebin(int l) {
  binned_ref_[l] = ref_[l];
  std::fill(counts_[l].begin(), counts_[l].end(), 0.0);
  std::fill(direct_[l].begin(), direct_[l].end(), 0.0);
  std::fill(sum_[l].begin(), sum_[l].end(), 0.0);
  std::fill(num_[l].begin(), num_[l].end(), 0.0);
  gaps_[l].clear();
  fitted_[l] = 0;
  seen_[l] = 0;
  last_step_[l] = chain_step_[l] = bel_step_[l] = -1;
  chain_state_[l] = p_.states - 1;
  std::fill(bel_[l].begin(), bel_[l].end(), 0.0);
  bel_[l].back() = 1.0;
  for (const Sample& x : series_[l]) add(l, x.step, x.gbps, x.bound, x.untimed, x.may_name);
  if (!gaps_[l].empty()) refit(l);
}

void LinkStates::observe(const StepRecord& r, const Carriage* carried) {
  // The rate each link measured in this step (0: none), for the pacing test: backed where a
  // first hop's flow streamed on it, else its streaming rate — each over the link's last such
  // interval when the link changed within the step (now_gbps): the pacing test then compares
  // what a relayed link and its upstream delivered at the same end of the step.
  //
  // A streaming rate with no first hop's flow timed (no backed rate) that reads under what the
  // link's flows got through it over the step — their goodput, a lower bound on its rate
  // (every byte crossed within its flow's wire time) — timed relayed flows' trickle, paced
  // upstream, while the link's own flows went untimed (their receiver, still in the ring step
  // before, found their chunks waiting): no reading of the link. On markov3 c→b, clear at 0.1
  // Gbit/s, carried the first hop of c's relayed part and a sliver of a→b's hop relayed from a→c
  // at 0.025: its own part went untimed, the sliver streamed, and the link read 0.0249 with a
  // goodput of 0.0504; believed at a quarter, the relay through it looked full, the next plan
  // gave a→b's hop one path and no standby, and a→b's collapse under it took 1080 ms where
  // oracle-now's split took 321 (docs/paths.md, "A reading under the goodput"). Such a reading
  // (`understated`) counts as the goodput does for flows too fast to time: a lower bound.
  // A backed rate (a first hop's flow timed) under the goodput is the link's, read low: the
  // goodput, the nearer figure, is the sample. Taken as a bound, such a reading of a twentieth
  // (0.0027 of 0.005, goodput 0.0048) left b→a in its level from before its collapse, and the
  // next splits sent 71 KB a step on it where 16-21 went (113 ms syncs against 64); over 48
  // markov3 runs 513 of 578 such goodputs were within 15% of the configured rate, their backed
  // rates at 0.79 of it at the median. Neither where the link changed within the step (its last
  // interval read apart from the whole): the goodput blends before and after, and the last
  // interval is the link now.
  const int L = n_ * n_;
  std::vector<double> rate(static_cast<size_t>(L), 0.0);
  std::vector<bool> understated(static_cast<size_t>(L), false);
  for (int l = 0; l < L && l < static_cast<int>(r.links.size()); ++l) {
    const LinkStep& m = r.links[l];
    // The rate the step's figure gives, or the goodput where the figure reads under it (`under`).
    const double got = m.goodput_gbps() / p_.goodput_over;
    bool under = false;
    auto read = [&](double whole, double late, double whole_ms, double late_ms) {
      under = !changed_within(whole, late, whole_ms, late_ms) && whole < kUnderGoodput * got;
      return under ? got : now_gbps(whole, late, whole_ms, late_ms);
    };
    if (m.backed_ms > 0 && m.backed_bytes > 0)
      rate[l] = read(m.backed_gbps(), m.late_gbps(), m.backed_ms, m.late_ms);
    else if (m.stream_ms > 0 && m.stream_bytes > 0) {
      rate[l] = read(m.stream_gbps(), m.late_stream_gbps(), m.stream_ms, m.late_stream_ms);
      understated[l] = under;  // backed: the goodput is a sample; streaming only: a bound
    }
  }
  for (int s = 0; s < n_; ++s)
    for (int d = 0; d < n_; ++d) {
      const int l = s * n_ + d;
      if (s == d || nominal_[l] <= 0 || l >= static_cast<int>(r.links.size())) continue;
      const LinkStep& m = r.links[l];
      if (m.latency_samples > 0) {
        // The least of the recent steps' one-way times: a control message sent while the link
        // carried sync bytes waited behind them (under tc a 2 ms link measured 4.5 ms as the
        // median and 9 at the 90th percentile on clear3), and that wait is what the cost
        // model's bytes / rate already counts — taken twice, a relay's second hop looked like
        // 4 messages × 5 ms more and mdp left clear links idle. A real change of latency shows
        // within the window (kLatencyWindow sampled steps).
        auto& win = lat_window_[l];
        win.push_back(m.latency_ms);
        if (win.size() > kLatencyWindow) win.pop_front();
        lat_[l] = *std::min_element(win.begin(), win.end());
        lat_seen_[l] = true;
      }
      // What the link is believed to deliver: its last level's mean capacity.
      const int k_now = last_state(s, d);
      const double believed =
          num_[l][k_now] > 0 ? sum_[l][k_now] / num_[l][k_now] : binned_ref_[l];
      // Above what the link is believed to deliver, or above its best so far.
      auto above_belief = [&](double g) { return g > believed || g > ref_[l]; };
      // An understated reading (above) is none: the link's goodput stands for it.
      const bool streamed = m.stream_ms > 0 && m.stream_bytes > 0 && !understated[l];
      // A first hop's flow streamed: the link's own rate, whatever else crossed it (see the top).
      const bool backed = m.backed_ms > 0 && m.backed_bytes > 0;
      // Streaming held up on the way (software shaper, net/delivery.hpp paced_only) timed the
      // host's hand-over, not the link: no sample of it. Kept only for what a link never
      // measured is believed at (prior_gbps), by the median of its held-up rates: such an
      // interval mostly reads low (0.26-0.48 Gbit/s on mesh6-c's 1 Gbit/s us-west→eu-west
      // in steps whose exact sample read 0.85-1.04), but one whose first chunks were held
      // too reads high (0.59 on a 0.03 Gbit/s link), so it is no lower bound on a link's level.
      if (m.held_ms > 0 && m.held_bytes > 0) {
        auto& h = held_[l];
        h.push_back(m.held_gbps());
        if (h.size() > kKept) h.pop_front();
        std::vector<double> v(h.begin(), h.end());
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
        held_ref_[l] = v[v.size() / 2];
      }
      // Sync bytes but no streaming rate: the flows were over before their chunks could be
      // timed — a fast link. Their goodput (latency included) is a lower bound on its rate:
      // without it a link carrying a fast part of a split was never measured, its belief drifted
      // back towards congestion, and the split kept shifting bytes off it (markov3).
      const bool timed_out = !streamed && m.bytes - m.control_bytes > 0 && m.wire_ms > 0;
      // A bound not taken (below what the link is believed at) still rules out the levels below
      // it (truncate); it does not move the estimates.
      // A link that carried only relayed flows: its paced bound that leaves only the top level
      // names it (see_level) — once, when not taken: not replayed by rebin. Not a link with a
      // flow of its own: under tc a sliver's few chunks on a congested link can stream on the
      // htb burst, and named, such readings taught detour3's congested b→a recoveries it never
      // had (a tenth of a hop sent back onto it every 5-8 steps, 150-180 ms each).
      const bool relayed_only = carried && !carried->first[l] && !carried->upstream[l].empty();
      auto only_truncate = [&](double g) {
        if (last_step_[l] >= 0) take_bound(l, r.step, g, streamed && relayed_only);
      };
      if (!streamed && !timed_out) continue;
      if (!streamed && (last_step_[l] < 0 || !above_belief(m.goodput_gbps()))) {
        only_truncate(m.goodput_gbps());
        continue;
      }
      // The step's rate as the pacing test has it (above: backed, else streaming, each as its
      // last interval found it when the link changed within the step); untimed, the goodput.
      const double g = rate[l] > 0 ? rate[l] : m.goodput_gbps();
      bool bound = !streamed;
      if (!backed && streamed && carried && !carried->upstream[l].empty()) {
        // What the hops before it let through: per relayed flow, its slowest upstream link's
        // rate over that link's flows; the link's own rate counts all its flows together.
        const int here = std::max(1, carried->flows[l]);
        double pace = 0;
        bool held_back = false;  // some relayed flow trickled in (see below)
        for (const std::vector<int>& before : carried->upstream[l]) {
          double p = 1e300;
          for (int u : before)
            p = std::min(p, (rate[u] > 0 ? rate[u] : ewma_[u]) / std::max(1, carried->flows[u]));
          pace += p;
          held_back |= p < kPaced * believed / here && g >= kPaced * here * p;
        }
        // Paced, it is a lower bound: taken when it says the link is better than believed
        // (above its last level's mean, or above its best so far), else it says nothing; a
        // bound moves the link's level and reference, not its levels' mean capacities.
        // A link with flows of its own too is paced when one of its relayed flows was let
        // through well below its part of this link (its pace under kPaced × the believed rate
        // over the link's flows) and the link still carried at least kPaced × that pace for
        // every flow: its streaming then lasted as long as that flow trickled (detour3: a→c,
        // carrying a→c→b of its own and b→a→c while b→a had just dropped to a twentieth, read
        // as congested, and mdp kept half of a→b's bytes on a→b for two more steps because the
        // detour looked congested too). Slower than that, the link was a bottleneck itself
        // (and when it and the hop before it congest together, that is what it shows).
        const bool paced = carried->first[l] ? held_back : g >= kPaced * pace;
        if (paced) {
          if (last_step_[l] < 0 || !above_belief(g)) {
            only_truncate(g);
            continue;
          }
          bound = true;
        }
      }
      ewma_[l] = last_step_[l] >= 0 ? (1 - p_.ewma_alpha) * ewma_[l] + p_.ewma_alpha * g : g;
      last_[l] = g;
      auto& ser = series_[l];
      const bool names = bound && streamed && relayed_only;
      ser.push_back({r.step, g, bound, !streamed, names});
      if (ser.size() > kKept) ser.pop_front();
      // The reference: the 90th percentile (nearest rank) of the kept measurements — high
      // enough to be the link at its best when it is congested most of the time, low enough
      // that one measurement above what the link carries (a burst the receiver found late)
      // does not become the link's best.
      std::vector<double> v;
      v.reserve(ser.size());
      for (const Sample& x : ser) v.push_back(x.gbps);
      const size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(v.size()))) - 1;
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank), v.end());
      ref_[l] = v[rank];
      if (std::fabs(ref_[l] - binned_ref_[l]) > kRebin * binned_ref_[l]) rebin(l);
      else add(l, r.step, g, bound, !streamed, names);
    }
}

double LinkStates::last_gbps(int s, int d) const { return last_[s * n_ + d]; }
double LinkStates::ewma_gbps(int s, int d) const { return ewma_[s * n_ + d]; }
double LinkStates::latency_ms(int s, int d) const { return lat_[s * n_ + d]; }
int LinkStates::last_state(int s, int d) const {
  const auto& b = bel_[s * n_ + d];
  return static_cast<int>(std::max_element(b.begin(), b.end()) - b.begin());
}

std::vector<double> LinkStates::transition(int s, int d) const {
  return smoothed(counts_[s * n_ + d], s * n_ + d);
}

std::vector<double> LinkStates::state_gbps(int s, int d) const {
  const int K = p_.states, l = s * n_ + d;
  // A link never measured: its levels cut from the prior (prior_gbps), not its configured figure.
  const double ref = measured(s, d) ? binned_ref_[l] : std::min(binned_ref_[l], prior_gbps(s, d));
  std::vector<double> g(K);
  for (int k = 0; k < K; ++k)
    g[k] = num_[l][k] > 0   ? sum_[l][k] / num_[l][k]
           : k == K - 1 ? ref  // "at or above the reference": the reference
                        : ref * (k + 0.5) / K;
  return g;
}

double LinkStates::prior_gbps(int s, int d) const {
  const int l = s * n_ + d;
  std::vector<double> refs;
  for (int k = 0; k < n_ * n_; ++k)
    if (last_step_[k] >= 0) refs.push_back(ref_[k]);
    else if (held_ref_[k] > 0) refs.push_back(held_ref_[k]);
  if (refs.empty()) return nominal_[l];
  std::nth_element(refs.begin(), refs.begin() + static_cast<std::ptrdiff_t>(refs.size() / 2), refs.end());
  return std::min(nominal_[l], refs[refs.size() / 2]);
}

std::vector<double> LinkStates::belief(int s, int d, int64_t at) const {
  const int K = p_.states, l = s * n_ + d;
  std::vector<double> b = bel_[l];
  if (bel_step_[l] < 0) return b;
  const std::vector<double> P = transition(s, d);
  // Past a few hundred steps the chain has long forgotten where it started.
  const int64_t steps = std::clamp<int64_t>(at - bel_step_[l], 0, 256);
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<double> next(K, 0.0);
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < K; ++j) next[j] += b[i] * P[i * K + j];
    b = std::move(next);
  }
  return b;
}

// The rate at which a link is expected to carry bytes at step `at`: the one that gives the
// expected transfer time, 1 / Σ_k b_k / g_k over its belief then (b) and its levels' mean
// measured capacities (g) — not Σ b_k g_k, which a 10% chance of the clear level lifts from a
// twentieth to a seventh of the link; a link never measured, its smoothed figure (the prior).
double LinkStates::expected_gbps(int s, int d, int64_t at) const {
  const int l = s * n_ + d;
  if (!measured(s, d)) return std::min(ewma_[l], prior_gbps(s, d));
  const std::vector<double> bel = belief(s, d, at);
  const std::vector<double> lv = level_gbps(s, d);
  double per_gbit = 0;
  for (size_t j = 0; j < bel.size(); ++j) per_gbit += bel[j] / std::max(lv[j], 1e-12);
  return 1 / per_gbit;
}

std::vector<double> LinkStates::level_gbps(int s, int d) const {
  const int l = s * n_ + d;
  std::vector<double> lv = state_gbps(s, d);
  // In the level it was last measured in, the link is where it was last measured: a level
  // spans a factor (with four levels the lowest held a quarter and a twentieth of a link
  // alike). A bound says "at least": the level's capacity, or the bound if above it.
  if (!measured(s, d)) return lv;  // its prior's levels (state_gbps)
  // The level the chain put the last sample in (hysteresis, chain_level), if it was exact.
  const int k = !last_bound_[l] && chain_step_[l] == last_step_[l] ? chain_state_[l]
                                                                   : level(last_[l], binned_ref_[l]);
  // An untimed part's goodput is "at least" only up to the burst that lent it speed: it proves
  // 1 / burst_over of itself (as bound_level reads it; under tc a third). Taken whole, tc detour3's sliver
  // on congested a→b (~26 KB, read 0.0085 against level 0's 0.005) raised the link's figure by
  // 70%, the next sliver was 65 KB, and it took 100 ms where the relay took 60 (steps of 80-100
  // ms against 71, a few each congested spell).
  const double at_least = last_untimed_[l] ? last_[l] / p_.burst_over : last_[l];
  lv[k] = last_bound_[l] ? std::max(lv[k], at_least) : last_[l];
  return lv;
}

}  // namespace strait
