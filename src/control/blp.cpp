// blp.cpp — the BLP linear program on GLPK, and the bandwidth lower bounds (see blp.hpp and
// docs/sync.md, "The LP"). Variables are scaled so that GLPK sees numbers near 1: flows are
// fractions of S, capacities fractions of the largest one, and τ = T · c_max / S.
#include "control/blp.hpp"

#include <glpk.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace strait {

namespace {

double seconds(double bytes, double gbps) { return bytes * 8 / (gbps * 1e9); }

void check_graph(const BlpGraph& g) {
  const size_t nn = static_cast<size_t>(g.n) * g.n;
  if (g.n < 1 || g.gbps.size() != nn || g.latency_ms.size() != nn)
    throw std::invalid_argument("blp: capacity and latency matrices must be n x n");
  if (!(g.bytes > 0)) throw std::invalid_argument("blp: the gradient must have bytes");
  for (size_t l = 0; l < nn; ++l)
    if (!(g.gbps[l] >= 0) || !(g.latency_ms[l] >= 0))
      throw std::invalid_argument("blp: a negative or NaN capacity or latency");
  if (g.n == 1) return;
  for (int d = 0; d < g.n; ++d) {
    bool out = false, in = false;
    for (int e = 0; e < g.n; ++e)
      if (e != d) out = out || g.gbps[d * g.n + e] > 0, in = in || g.gbps[e * g.n + d] > 0;
    if (!out || !in)
      throw std::invalid_argument("blp: datacenter " + std::to_string(d) + " has no " +
                                  (out ? "incoming" : "outgoing") +
                                  " link, so no allreduce can include it");
  }
}

}  // namespace

// The columns and rows, and GLPK's problem object.
struct BlpModel::Impl {
  enum Kind { kReduce = 0, kBroadcast = 1 };
  struct PathCol {
    int kind, from, to, col;
    std::vector<int> path;
    double latency_ms;
  };
  BlpGraph g;
  BlpTime time;
  int max_relays = 0;
  glp_prob* lp = nullptr;
  int tau_cols = 1;       // τ (joint) or τ_reduce, τ_broadcast (phased): columns 1..tau_cols
  int alpha0 = 0;         // column of α_0
  int tau_row = 0;        // Σ τ ≤ bound (free while minimising τ)
  std::vector<PathCol> paths;
  double max_latency = 0;  // over offered paths, for the tie-break weights
  int nnz = 0;

  ~Impl() {
    if (lp) glp_delete_prob(lp);
  }

  // Paths from s to t: direct, then through the relays k with both links — the max_relays
  // widest (by the narrower of the two links; then by latency, then index) when limited.
  std::vector<std::vector<int>> allowed(int s, int t) const {
    const int n = g.n;
    std::vector<std::vector<int>> out;
    if (g.gbps[s * n + t] > 0) out.push_back({s, t});
    std::vector<int> relays;
    for (int k = 0; k < n; ++k)
      if (k != s && k != t && g.gbps[s * n + k] > 0 && g.gbps[k * n + t] > 0) relays.push_back(k);
    if (max_relays > 0 && static_cast<int>(relays.size()) > max_relays) {
      auto width = [&](int k) { return std::min(g.gbps[s * n + k], g.gbps[k * n + t]); };
      auto lat = [&](int k) { return g.latency_ms[s * n + k] + g.latency_ms[k * n + t]; };
      std::stable_sort(relays.begin(), relays.end(), [&](int a, int b) {
        return width(a) != width(b) ? width(a) > width(b) : lat(a) < lat(b);
      });
      relays.resize(max_relays);
      std::sort(relays.begin(), relays.end());
    }
    for (int k : relays) out.push_back({s, k, t});
    return out;
  }
  double path_latency(const std::vector<int>& p) const {
    double l = 0;
    for (size_t h = 0; h + 1 < p.size(); ++h) l += g.latency_ms[p[h] * g.n + p[h + 1]];
    return l;
  }

  void build() {
    const int n = g.n;
    double cmax = 0;
    for (double c : g.gbps) cmax = std::max(cmax, c);
    for (int kind : {kReduce, kBroadcast})
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
          if (a == b) continue;
          for (auto& p : allowed(a, b)) {
            const double lat = path_latency(p);
            max_latency = std::max(max_latency, lat);
            paths.push_back({kind, a, b, 0, std::move(p), lat});
          }
        }

    lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    tau_cols = time == BlpTime::joint ? 1 : 2;
    alpha0 = tau_cols + 1;
    const int ncols = tau_cols + n + static_cast<int>(paths.size());
    glp_add_cols(lp, ncols);
    for (int c = 1; c <= ncols; ++c) glp_set_col_bnds(lp, c, GLP_LO, 0.0, 0.0);
    for (int c = 1; c <= tau_cols; ++c) glp_set_obj_coef(lp, c, 1.0);
    for (size_t i = 0; i < paths.size(); ++i) paths[i].col = alpha0 + n + static_cast<int>(i);

    std::vector<int> ia{0}, ja{0};
    std::vector<double> ar{0};
    auto put = [&](int r, int c, double v) { ia.push_back(r), ja.push_back(c), ar.push_back(v); };
    int row = 0;
    // Σ α = 1.
    glp_add_rows(lp, 1);
    ++row;
    glp_set_row_bnds(lp, row, GLP_FX, 1.0, 1.0);
    for (int j = 0; j < n; ++j) put(row, alpha0 + j, 1.0);
    // Each flow carries its owner's slice: Σ_p x_p − α_owner = 0. A flow without an allowed
    // path forces its owner's slice to 0.
    std::vector<int> flow_row(2 * n * n, 0);
    for (int kind : {kReduce, kBroadcast})
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
          if (a == b) continue;
          glp_add_rows(lp, 1);
          flow_row[kind * n * n + a * n + b] = ++row;
          glp_set_row_bnds(lp, row, GLP_FX, 0.0, 0.0);
          put(row, alpha0 + (kind == kReduce ? b : a), -1.0);
        }
    for (const auto& p : paths) put(flow_row[p.kind * n * n + p.from * n + p.to], p.col, 1.0);
    // Link loads: Σ flows crossing it − ĉ·τ_phase ≤ 0 (joint: both phases against one τ).
    const int phases = tau_cols;
    std::vector<int> link_row(static_cast<size_t>(phases) * n * n, 0);
    for (int ph = 0; ph < phases; ++ph)
      for (int u = 0; u < n; ++u)
        for (int v = 0; v < n; ++v)
          if (u != v && g.gbps[u * n + v] > 0) {
            glp_add_rows(lp, 1);
            link_row[ph * n * n + u * n + v] = ++row;
            glp_set_row_bnds(lp, row, GLP_UP, 0.0, 0.0);
            put(row, 1 + ph, -g.gbps[u * n + v] / cmax);
          }
    for (const auto& p : paths) {
      const int ph = phases == 1 ? 0 : p.kind;
      for (size_t h = 0; h + 1 < p.path.size(); ++h)
        put(link_row[ph * n * n + p.path[h] * n + p.path[h + 1]], p.col, 1.0);
    }
    // Σ τ ≤ bound: free until the tie-break pass pins the optimum.
    glp_add_rows(lp, 1);
    tau_row = ++row;
    glp_set_row_bnds(lp, row, GLP_FR, 0.0, 0.0);
    for (int c = 1; c <= tau_cols; ++c) put(row, c, 1.0);

    nnz = static_cast<int>(ia.size()) - 1;
    glp_load_matrix(lp, nnz, ia.data(), ja.data(), ar.data());
  }

  // Primal simplex from the current basis; true when optimal.
  bool simplex() {
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_OFF;  // keep the basis of the last solve
    if (glp_simplex(lp, &parm) != 0) {
      // A singular basis (rare after bound changes): start again from the standard one.
      glp_std_basis(lp);
      if (glp_simplex(lp, &parm) != 0) return false;
    }
    return glp_get_status(lp) == GLP_OPT;
  }
};

BlpModel::BlpModel(const BlpGraph& g, BlpTime time, int max_relays)
    : m_(std::make_unique<Impl>()) {
  check_graph(g);
  m_->g = g;
  m_->time = time;
  m_->max_relays = max_relays;
  if (g.n == 1) return;
  m_->build();
  for (const auto& p : m_->paths) latencies_.push_back(p.latency_ms);
  std::sort(latencies_.begin(), latencies_.end());
  latencies_.erase(std::unique(latencies_.begin(), latencies_.end()), latencies_.end());
}

BlpModel::~BlpModel() = default;

double BlpModel::min_feasible_cap_ms() const {
  const int n = m_->g.n;
  if (n == 1) return 0;
  constexpr double kNone = std::numeric_limits<double>::infinity();
  std::vector<double> shortest(static_cast<size_t>(n) * n, kNone);  // over offered paths
  for (const auto& p : m_->paths) {
    double& s = shortest[p.from * n + p.to];
    s = std::min(s, p.latency_ms);
  }
  double best = kNone;
  for (int j = 0; j < n; ++j) {
    double worst = 0;
    for (int d = 0; d < n; ++d)
      if (d != j) worst = std::max({worst, shortest[d * n + j], shortest[j * n + d]});
    best = std::min(best, worst);
  }
  return best;
}

int BlpModel::rows() const { return m_->lp ? glp_get_num_rows(m_->lp) : 0; }
int BlpModel::cols() const { return m_->lp ? glp_get_num_cols(m_->lp) : 0; }
int BlpModel::nonzeros() const { return m_->nnz; }

BlpSolution BlpModel::solve(double cap_ms) {
  const BlpGraph& g = m_->g;
  const int n = g.n;
  BlpSolution s;
  s.max_path_latency_ms = cap_ms;
  if (n == 1) {
    s.feasible = true;
    s.owner_fraction = {1.0};
    s.reduce.assign(1, {});
    s.broadcast.assign(1, {});
    return s;
  }
  glp_prob* lp = m_->lp;
  for (const auto& p : m_->paths)
    glp_set_col_bnds(lp, p.col, p.latency_ms <= cap_ms * (1 + 1e-12) ? GLP_LO : GLP_FX, 0.0, 0.0);
  ++solves_;
  if (!m_->simplex()) {
    s.why = "no owner plan over direct-or-one-relay paths of latency <= " + std::to_string(cap_ms) +
            " ms reaches every datacenter";
    return s;
  }
  // Tie-break among the optima: fewest byte-hops, then the lowest latency-weighted bytes.
  const double tau = glp_get_obj_val(lp);
  glp_set_row_bnds(lp, m_->tau_row, GLP_UP, 0.0, tau * (1 + 1e-7) + 1e-12);
  for (int c = 1; c <= m_->tau_cols; ++c) glp_set_obj_coef(lp, c, 0.0);
  const double lat_scale = m_->max_latency > 0 ? 0.5 / m_->max_latency : 0;
  for (const auto& p : m_->paths)
    glp_set_obj_coef(lp, p.col, static_cast<double>(p.path.size() - 1) + p.latency_ms * lat_scale);
  const bool tidy = m_->simplex();
  std::vector<double> x(glp_get_num_cols(lp) + 1, 0.0);
  for (int c = 1; c < static_cast<int>(x.size()); ++c) x[c] = glp_get_col_prim(lp, c);
  // Back to minimising τ for the next cap.
  glp_set_row_bnds(lp, m_->tau_row, GLP_FR, 0.0, 0.0);
  for (const auto& p : m_->paths) glp_set_obj_coef(lp, p.col, 0.0);
  for (int c = 1; c <= m_->tau_cols; ++c) glp_set_obj_coef(lp, c, 1.0);
  if (!tidy) {
    s.why = "GLPK failed on the tie-break pass";
    return s;
  }

  // The plan: slices and route fractions, with crumbs of the simplex's arithmetic swept away.
  constexpr double kCrumb = 1e-9;
  s.owner_fraction.assign(n, 0.0);
  for (int j = 0; j < n; ++j) s.owner_fraction[j] = x[m_->alpha0 + j] < kCrumb ? 0 : x[m_->alpha0 + j];
  const double total = std::accumulate(s.owner_fraction.begin(), s.owner_fraction.end(), 0.0);
  for (double& a : s.owner_fraction) a /= total;
  s.reduce.assign(static_cast<size_t>(n) * n, {});
  s.broadcast.assign(static_cast<size_t>(n) * n, {});
  for (const auto& p : m_->paths) {
    const int owner = p.kind == Impl::kReduce ? p.to : p.from;
    const double alpha = x[m_->alpha0 + owner];
    if (s.owner_fraction[owner] == 0 || x[p.col] < kCrumb * alpha) continue;
    auto& flow = (p.kind == Impl::kReduce ? s.reduce : s.broadcast)[p.from * n + p.to];
    flow.push_back(Route{p.path, x[p.col] / alpha});
  }
  for (auto* flows : {&s.reduce, &s.broadcast})
    for (auto& rs : *flows) {
      double sum = 0;
      for (const auto& r : rs) sum += r.fraction;
      for (auto& r : rs) r.fraction /= sum;
    }

  // Times of the plan as it will run (not of the LP's raw numbers).
  SyncPlan plan;
  plan.owner_fraction = s.owner_fraction, plan.reduce = s.reduce, plan.broadcast = s.broadcast;
  const auto loads = owner_plan_loads(plan, n, g.bytes);
  double joint = 0;
  for (int l = 0; l < n * n; ++l) {
    if (!(g.gbps[l] > 0)) continue;
    s.reduce_s = std::max(s.reduce_s, seconds(loads[0][l], g.gbps[l]));
    s.broadcast_s = std::max(s.broadcast_s, seconds(loads[1][l], g.gbps[l]));
    joint = std::max(joint, seconds(loads[0][l] + loads[1][l], g.gbps[l]));
  }
  if (m_->time == BlpTime::joint) s.reduce_s = s.broadcast_s = joint;
  s.bandwidth_s = m_->time == BlpTime::joint ? joint : s.reduce_s + s.broadcast_s;
  double lr = 0, lb = 0;
  for (const auto& rs : s.reduce)
    for (const auto& r : rs) lr = std::max(lr, m_->path_latency(r.path));
  for (const auto& rs : s.broadcast)
    for (const auto& r : rs) lb = std::max(lb, m_->path_latency(r.path));
  s.latency_s = (lr + lb) / 1e3;
  s.feasible = true;
  return s;
}

SyncBounds sync_bounds(const BlpGraph& g) {
  check_graph(g);
  const int n = g.n;
  SyncBounds b;
  if (n == 1) return b;
  double sum = 0;
  std::vector<double> out(n, 0.0);
  for (int u = 0; u < n; ++u)
    for (int v = 0; v < n; ++v)
      if (u != v) sum += g.gbps[u * n + v], out[u] += g.gbps[u * n + v];
  b.traffic_s = seconds(2.0 * (n - 1) * g.bytes, sum);
  bool homogeneous = true;
  for (int u = 1; u < n; ++u) homogeneous = homogeneous && std::fabs(out[u] - out[0]) <= 1e-9 * out[0];
  if (homogeneous) b.ring_s = seconds(2.0 * (n - 1) * g.bytes, n * out[0]);
  if (n > 20) return b;
  // c⁺(A) = Σ_{u∈A} out(u) − inner(A), inner(A) = capacity of links with both ends in A, built
  // up from A without its lowest member.
  const uint32_t full = (1u << n) - 1;
  std::vector<double> inner(static_cast<size_t>(full) + 1, 0.0), outsum(inner.size(), 0.0);
  double worst = 0;  // the smallest c⁺
  uint32_t arg = 0;
  for (uint32_t a = 1; a < full; ++a) {
    const int u = std::countr_zero(a);
    const uint32_t rest = a & (a - 1);
    double in = inner[rest];
    for (uint32_t r = rest; r; r &= r - 1) {
      const int v = std::countr_zero(r);
      in += g.gbps[u * n + v] + g.gbps[v * n + u];
    }
    inner[a] = in;
    outsum[a] = outsum[rest] + out[u];
    const double cplus = outsum[a] - in;
    if (arg == 0 || cplus < worst) worst = cplus, arg = a;
  }
  b.cut_s = worst > 0 ? seconds(g.bytes, worst) : std::numeric_limits<double>::infinity();
  for (int d = 0; d < n; ++d)
    if (arg >> d & 1) b.cut_set.push_back(d);
  return b;
}

std::vector<std::vector<double>> owner_plan_loads(const SyncPlan& p, int n, double bytes) {
  std::vector<std::vector<double>> load(2, std::vector<double>(static_cast<size_t>(n) * n, 0.0));
  for (int j = 0; j < n; ++j) {
    const double slice = p.owner_fraction[j] * bytes;
    if (slice <= 0) continue;
    for (int d = 0; d < n; ++d) {
      if (d == j) continue;
      for (int ph = 0; ph < 2; ++ph)
        for (const Route& r : (ph == 0 ? p.reduce[d * n + j] : p.broadcast[j * n + d]))
          for (size_t h = 0; h + 1 < r.path.size(); ++h)
            load[ph][r.path[h] * n + r.path[h + 1]] += slice * r.fraction;
    }
  }
  return load;
}

}  // namespace strait
