// exchange.cpp — the per-step gather and broadcast (see exchange.hpp). The wire record is
// RankReport followed by n·n LinkCounters, described to MPI as one struct type, so one
// MPI_Gather carries everything a rank has to say.
#include "control/exchange.hpp"

#include <cstring>

#include "core/check.hpp"

namespace strait {

Exchange::Exchange(const Topology& t) : t_(t), links_(t.num_dcs * t.num_dcs) {
  MpiStruct<Completion> c;
  c.field(&Completion::step).field(&Completion::sync_ms).field(&Completion::wait_ms)
      .field(&Completion::optimizer_ms).field(&Completion::overlapped);
  completion_ = MpiType(c.commit());
  MpiStruct<RankReport> r;
  r.field(&RankReport::step).field(&RankReport::stop).field(&RankReport::n_done)
      .field(&RankReport::compute_ms).field(&RankReport::emulated_ms).field(&RankReport::loss)
      .field(&RankReport::split).field(&RankReport::ready_ms)
      .nested(&RankReport::done, completion_.get());
  report_ = MpiType(r.commit());
  MpiStruct<LinkCounters> l;
  l.field(&LinkCounters::bytes).field(&LinkCounters::wire_ms).field(&LinkCounters::latency_ms)
      .field(&LinkCounters::latency_samples).field(&LinkCounters::queued_ms)
      .field(&LinkCounters::shaper_busy_ms);
  counters_ = MpiType(l.commit());

  // The record: one RankReport, then the link counters; its extent is the byte stride.
  links_offset_ = sizeof(RankReport);
  record_bytes_ = links_offset_ + static_cast<size_t>(links_) * sizeof(LinkCounters);
  int counts[2] = {1, links_};
  MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(links_offset_)};
  MPI_Datatype types[2] = {report_.get(), counters_.get()};
  MPI_Datatype raw = MPI_DATATYPE_NULL, rec = MPI_DATATYPE_NULL;
  MPI_CHECK(MPI_Type_create_struct(2, counts, displs, types, &raw));
  MPI_CHECK(MPI_Type_create_resized(raw, 0, static_cast<MPI_Aint>(record_bytes_), &rec));
  MPI_CHECK(MPI_Type_free(&raw));
  MPI_CHECK(MPI_Type_commit(&rec));
  record_ = MpiType(rec);
  MpiStruct<Reply> rp;
  rp.field(&Reply::stop).field(&Reply::has_plan).field(&Reply::loss).field(&Reply::plan_bytes);
  reply_ = MpiType(rp.commit());
  send_.resize(record_bytes_);
  if (t.world_rank == 0) recv_.resize(record_bytes_ * t.world_size);
}

Reply Exchange::run(const RankReport& mine, const std::vector<LinkCounters>& my_links,
                    const Decide& decide, std::vector<char>& plan_bytes) {
  STRAIT_CHECK(static_cast<int>(my_links.size()) == links_, "link counters for another DC count");
  std::memcpy(send_.data(), &mine, sizeof(RankReport));
  std::memcpy(send_.data() + links_offset_, my_links.data(), links_ * sizeof(LinkCounters));
  MPI_CHECK(MPI_Gather(send_.data(), 1, record_.get(), recv_.data(), 1, record_.get(), 0, t_.world));
  Reply reply;
  if (t_.world_rank == 0) {
    Gathered g;
    g.ranks.resize(t_.world_size);
    g.links.assign(links_, LinkCounters{});
    for (int r = 0; r < t_.world_size; ++r) {
      const char* rec = recv_.data() + static_cast<size_t>(r) * record_bytes_;
      std::memcpy(&g.ranks[r], rec, sizeof(RankReport));
      for (int l = 0; l < links_; ++l) {
        LinkCounters c;
        std::memcpy(&c, rec + links_offset_ + l * sizeof(LinkCounters), sizeof c);
        LinkCounters& t = g.links[l];
        t.bytes += c.bytes, t.wire_ms += c.wire_ms, t.latency_ms += c.latency_ms;
        t.latency_samples += c.latency_samples, t.queued_ms += c.queued_ms;
        t.shaper_busy_ms += c.shaper_busy_ms;
      }
    }
    plan_bytes.clear();
    reply = decide(g, plan_bytes);
    reply.has_plan = plan_bytes.empty() ? 0 : 1;
    reply.plan_bytes = static_cast<int64_t>(plan_bytes.size());
  }
  MPI_CHECK(MPI_Bcast(&reply, 1, reply_.get(), 0, t_.world));
  if (reply.has_plan) {
    plan_bytes.resize(static_cast<size_t>(reply.plan_bytes));
    MPI_CHECK(MPI_Bcast(plan_bytes.data(), static_cast<int>(plan_bytes.size()), MPI_BYTE, 0, t_.world));
  }
  return reply;
}

void Exchange::broadcast(std::vector<char>& bytes) {
  int64_t n = static_cast<int64_t>(bytes.size());
  MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT64_T, 0, t_.world));
  bytes.resize(static_cast<size_t>(n));
  MPI_CHECK(MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_BYTE, 0, t_.world));
}

}  // namespace strait
