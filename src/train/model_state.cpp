// model_state.cpp — gather, re-split, checkpoint assembly and start state (see the header).
#include "train/model_state.hpp"

#include "core/check.hpp"

namespace strait {

namespace {

void bcast_floats(std::vector<float>& v, size_t n, int root, MPI_Comm c) {
  v.resize(n);
  MPI_CHECK(MPI_Bcast(v.data(), static_cast<int>(n), MPI_FLOAT, root, c));
}

std::vector<float> flatten(const std::vector<NamedTensor>& ts) {
  std::vector<float> f;
  for (const auto& t : ts) f.insert(f.end(), t.data.begin(), t.data.end());
  return f;
}

}  // namespace

std::vector<Layout> dc_layouts(const ModelConfig& m, const std::vector<double>& split) {
  std::vector<Layout> out;
  for (const auto& s : shard_specs(m, split)) out.push_back(make_layout(m, s));
  return out;
}

bool gather_expert(const ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in,
                   std::vector<float>& p, std::vector<float>& m, std::vector<float>& v) {
  std::vector<float> sp, sm, sv;
  ps.shard_to_host(sp, sm, sv);
  gather_full_to_gateway(sp.data(), ch, in);
  if (in.topo->is_gateway) p = ch.full;
  gather_full_to_gateway(sm.data(), ch, in);
  if (in.topo->is_gateway) m = ch.full;
  gather_full_to_gateway(sv.data(), ch, in);
  if (in.topo->is_gateway) v = ch.full;
  return in.topo->is_gateway;
}

void reshard(std::vector<std::unique_ptr<ParamSet<float>>>& experts, std::vector<Layout>& layouts,
             std::vector<Layout> next, std::vector<SyncChannel>& channels, const Topology& topo,
             Backend<float>& be) {
  const SyncInput in_old{&topo, &layouts, 1.0};
  const size_t n = layouts[0].full_total;
  for (size_t k = 0; k < experts.size(); ++k) {
    std::vector<float> p, m, v;
    gather_expert(*experts[k], channels[k], in_old, p, m, v);
    bcast_floats(p, n, 0, channels[k].dc);
    bcast_floats(m, n, 0, channels[k].dc);
    bcast_floats(v, n, 0, channels[k].dc);
    const int64_t t = experts[k]->adam_t;
    experts[k] = std::make_unique<ParamSet<float>>(be, next[topo.local_rank]);
    experts[k]->load_full(p, m, v);
    experts[k]->adam_t = t;
  }
  layouts = std::move(next);
}

Checkpoint assemble_checkpoint(const Config& cfg, int64_t next_step,
                               const std::vector<std::vector<double>>& splits,
                               const std::vector<double>& shares,
                               const std::vector<std::unique_ptr<ParamSet<float>>>& experts,
                               const std::vector<Layout>& layouts,
                               std::vector<SyncChannel>& channels, const Topology& topo) {
  Checkpoint c;
  c.next_step = next_step;
  c.seed = cfg.train.seed;
  c.config_text = cfg.source_text;
  c.splits = splits;
  c.batch_shares = shares;
  if (topo.dc != 0) return c;
  const SyncInput in{&topo, &layouts, 1.0};
  for (size_t e = 0; e < experts.size(); ++e) {
    std::vector<float> p, m, v;
    if (!gather_expert(*experts[e], channels[e], in, p, m, v)) continue;
    CheckpointExpert ce;
    ce.adam_t = experts[e]->adam_t;
    size_t off = 0;
    for (const auto& t : layouts[0].tensors) {
      const size_t n = t.full_size();
      auto slice = [&](const std::vector<float>& f) {
        return NamedTensor{t.name, t.shape, std::vector<float>(f.begin() + off, f.begin() + off + n)};
      };
      ce.params.push_back(slice(p));
      ce.adam_m.push_back(slice(m));
      ce.adam_v.push_back(slice(v));
      off += n;
    }
    c.experts.push_back(std::move(ce));
  }
  return c;
}

StartState start_state(const Config& cfg, const Topology& topo, bool resume, Checkpoint&& ck) {
  const ModelConfig& mc = cfg.model;
  const int E = mc.experts;
  const bool root = topo.world_rank == 0;
  StartState s;
  for (const auto& dc : cfg.datacenters) s.splits.push_back(dc.split);
  s.shares = cfg.train.batch_shares;
  s.experts.resize(E);
  const Layout full = make_layout(mc, shard_specs(mc, {1.0})[0]);
  const size_t n = full.full_total;
  s.first_splits = s.splits;
  s.first_shares = s.shares;
  if (!resume) {
    for (int e = 0; e < E; ++e) {
      s.experts[e].p = init_full<float>(full, cfg.train.seed, e);
      s.experts[e].m.assign(n, 0.0f);
      s.experts[e].v.assign(n, 0.0f);
    }
    return s;
  }
  int64_t step = root ? ck.next_step : 0;
  MPI_CHECK(MPI_Bcast(&step, 1, MPI_INT64_T, 0, topo.world));
  s.step = step;
  for (size_t d = 0; d < s.splits.size(); ++d) {
    if (root) s.splits[d] = ck.splits[d];
    MPI_CHECK(MPI_Bcast(s.splits[d].data(), static_cast<int>(s.splits[d].size()), MPI_DOUBLE, 0,
                        topo.world));
  }
  if (root) s.shares = ck.batch_shares;
  MPI_CHECK(MPI_Bcast(s.shares.data(), static_cast<int>(s.shares.size()), MPI_DOUBLE, 0, topo.world));
  if (s.first_splits != s.splits || s.first_shares != s.shares) {
    const bool config_wins = cfg.control.balancer == "static";
    if (!config_wins) s.first_splits = s.splits, s.first_shares = s.shares;
    s.notice = "resume: the checkpoint's splits or batch shares differ from the config's; " +
               std::string(config_wins
                               ? "the config's apply from step " + std::to_string(s.step) +
                                     " (control.balancer \"static\": a re-split there)"
                               : "the checkpoint's hold (control.balancer \"" +
                                     cfg.control.balancer + "\" set them during the run)");
  }
  for (int e = 0; e < E; ++e) {
    auto& x = s.experts[e];
    if (root) {
      x.p = flatten(ck.experts[e].params);
      x.m = flatten(ck.experts[e].adam_m);
      x.v = flatten(ck.experts[e].adam_v);
      x.adam_t = ck.experts[e].adam_t;
      ck.experts[e] = CheckpointExpert{};  // free as we go: the model may be large
    }
    bcast_floats(x.p, n, 0, topo.world);
    bcast_floats(x.m, n, 0, topo.world);
    bcast_floats(x.v, n, 0, topo.world);
    MPI_CHECK(MPI_Bcast(&x.adam_t, 1, MPI_INT64_T, 0, topo.world));
  }
  return s;
}

}  // namespace strait
