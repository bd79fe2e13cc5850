// control_link.cpp — one control round per post (see control_link.hpp):
//   1. in each DC: MPI_Gather of the ranks' records (a described MPI struct) to the gateway;
//   2. gateways → DC 0 (rank 0): the DC's bundle, one Transport::execute with every DC's transfer;
//   3. rank 0: decide;
//   4. DC 0 → gateways: the reply, then (only when there is one) the decision record's bytes;
//   5. in each DC: MPI_Bcast of the reply and the record.
// Rounds run in post order on the link's thread, on communicators of their own.
#include "control/control_link.hpp"

#include <cstring>
#include <exception>

#include "core/check.hpp"

namespace strait {

namespace {
constexpr int kTagUp = 0, kTagReply = 1, kTagPlan = 2;  // Transport tag bases
}

ControlLink::ControlLink(const Topology& t, Transport& tr, bool threaded, Decide decide)
    : t_(t), tr_(tr), decide_(std::move(decide)), links_(t.num_dcs * t.num_dcs),
      threaded_(threaded) {
  MpiStruct<Completion> c;
  c.field(&Completion::step).field(&Completion::sync_ms).field(&Completion::wait_ms)
      .field(&Completion::optimizer_ms).field(&Completion::overlapped)
      .field(&Completion::iteration_ms);
  completion_ = MpiType(c.commit());
  MpiStruct<RankReport> r;
  r.field(&RankReport::step).field(&RankReport::stop).field(&RankReport::n_done)
      .field(&RankReport::batch).field(&RankReport::early).field(&RankReport::compute_ms).field(&RankReport::emulated_ms)
      .field(&RankReport::speed).field(&RankReport::reduce_ms).field(&RankReport::reshard_ms)
      .field(&RankReport::loss).field(&RankReport::split).field(&RankReport::ready_ms)
      .field(&RankReport::control_wait_ms).field(&RankReport::control_rtt_ms)
      .field(&RankReport::iteration_ms).nested(&RankReport::done, completion_.get());
  report_ = MpiType(r.commit());
  MpiStruct<LinkCounters> l;
  l.field(&LinkCounters::bytes).field(&LinkCounters::control_bytes)
      .field(&LinkCounters::wire_ms).field(&LinkCounters::latency_ms)
      .field(&LinkCounters::latency_samples).field(&LinkCounters::stream_bytes)
      .field(&LinkCounters::stream_ms).field(&LinkCounters::backed_bytes)
      .field(&LinkCounters::backed_ms).field(&LinkCounters::late_bytes)
      .field(&LinkCounters::late_ms).field(&LinkCounters::late_stream_bytes)
      .field(&LinkCounters::late_stream_ms).field(&LinkCounters::held_bytes)
      .field(&LinkCounters::held_ms).field(&LinkCounters::queued_ms)
      .field(&LinkCounters::shaper_busy_ms).field(&LinkCounters::route0_bytes)
      .field(&LinkCounters::route1_bytes).field(&LinkCounters::moved_bytes);
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

  MPI_CHECK(MPI_Comm_dup(t.dc_comm, &dc_));
  if (t.gateway_comm != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_dup(t.gateway_comm, &gw_));
  const int n = t.num_dcs;
  to_root_.assign(static_cast<size_t>(n) * n, {});
  from_root_.assign(static_cast<size_t>(n) * n, {});
  for (int d = 1; d < n; ++d) {
    to_root_[d * n + 0] = tr.fewest_hops(d, 0);
    from_root_[0 * n + d] = tr.fewest_hops(0, d);
    STRAIT_CHECK(!to_root_[d * n].empty() && !from_root_[d].empty(),
                 "datacenter " + std::to_string(d) + " cannot reach datacenter 0 and back");
  }
  if (t.is_gateway) dc_bundle_.resize(record_bytes_ * t.dc_size);
  if (t.world_rank == 0) all_bundles_.resize(record_bytes_ * t.world_size);
  if (threaded_) th_ = std::thread([this] { loop(); });
}

ControlLink::~ControlLink() {
  if (th_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Unwinding with rounds posted but not waited for: their peers wait in collectives that
      // will never come, so joining could hang the job. Take it down instead.
      if (!todo_.empty() && std::uncaught_exceptions() > 0)
        STRAIT_FATAL("an error unwound the step loop with controller rounds in flight");
      quit_ = true;
    }
    cv_.notify_all();
    th_.join();
  }
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) tr_.flush();  // the last replies may still wait for their delivery time on gw_
  if (!fin && dc_ != MPI_COMM_NULL) MPI_Comm_free(&dc_);
  if (!fin && gw_ != MPI_COMM_NULL) MPI_Comm_free(&gw_);
}

int64_t ControlLink::post(const RankReport& mine, const std::vector<LinkCounters>& my_links) {
  STRAIT_CHECK(static_cast<int>(my_links.size()) == links_, "link counters for another DC count");
  Posted p;
  p.record.resize(record_bytes_);
  std::memcpy(p.record.data(), &mine, sizeof(RankReport));
  std::memcpy(p.record.data() + links_offset_, my_links.data(), links_ * sizeof(LinkCounters));
  p.posted_at = MPI_Wtime();
  std::unique_lock<std::mutex> lock(mu_);
  p.seq = next_seq_++;
  if (!threaded_) {
    lock.unlock();
    round(p);
    return p.seq;
  }
  todo_.push_back(std::move(p));
  lock.unlock();
  cv_.notify_all();
  return next_seq_ - 1;
}

Reply ControlLink::wait(int64_t seq, std::vector<char>& plan_bytes, double& blocked_ms,
                        double& rtt_ms) {
  const double t0 = MPI_Wtime();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_.count(seq) > 0; });
  Returned r = std::move(done_.at(seq));
  done_.erase(seq);
  lock.unlock();
  blocked_ms = (MPI_Wtime() - t0) * 1e3;
  rtt_ms = r.rtt_ms;
  plan_bytes = std::move(r.plan);
  return r.reply;
}

void ControlLink::loop() {
  for (;;) {
    Posted p;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return quit_ || !todo_.empty(); });
      if (todo_.empty()) return;  // quit, and nothing left to do
      p = std::move(todo_.front());
      todo_.pop_front();
    }
    round(p);
  }
}

void ControlLink::round(const Posted& p) {
  const int n = t_.num_dcs;
  // 1. The DC's records on its gateway.
  MPI_CHECK(MPI_Gather(p.record.data(), 1, record_.get(), t_.is_gateway ? dc_bundle_.data() : nullptr,
                       1, record_.get(), 0, dc_));
  Reply reply;
  std::vector<char> plan;
  if (t_.is_gateway) {
    // 2. Every DC's bundle to DC 0, through the transport.
    std::vector<Transfer> up;
    for (int d = 1; d < n; ++d) {
      Transfer x;
      x.path = to_root_[d * n];
      x.bytes = record_bytes_ * static_cast<size_t>(t_.dc_ranks[d]);
      if (t_.dc == d) x.sbuf = dc_bundle_.data();
      if (t_.dc == 0) x.rbuf = all_bundles_.data() + record_bytes_ * t_.dc_first_rank[d];
      up.push_back(std::move(x));
    }
    tr_.execute(gw_, t_.dc, up, kTagUp, true);
    // 3. Rank 0 decides.
    if (t_.world_rank == 0) {
      std::memcpy(all_bundles_.data(), dc_bundle_.data(), record_bytes_ * t_.dc_ranks[0]);
      Gathered g;
      g.seq = p.seq;
      g.ranks.resize(t_.world_size);
      g.links.assign(links_, LinkCounters{});
      for (int r = 0; r < t_.world_size; ++r) {
        const char* rec = all_bundles_.data() + static_cast<size_t>(r) * record_bytes_;
        std::memcpy(&g.ranks[r], rec, sizeof(RankReport));
        for (int l = 0; l < links_; ++l) {
          LinkCounters c;
          std::memcpy(&c, rec + links_offset_ + l * sizeof(LinkCounters), sizeof c);
          LinkCounters& s = g.links[l];
          s.bytes += c.bytes, s.control_bytes += c.control_bytes;
          s.wire_ms += c.wire_ms, s.latency_ms += c.latency_ms;
          s.latency_samples += c.latency_samples, s.queued_ms += c.queued_ms;
          s.stream_bytes += c.stream_bytes, s.stream_ms += c.stream_ms;
          s.backed_bytes += c.backed_bytes, s.backed_ms += c.backed_ms;
          s.late_bytes += c.late_bytes, s.late_ms += c.late_ms;  // one receiver a link
          s.late_stream_bytes += c.late_stream_bytes, s.late_stream_ms += c.late_stream_ms;
          s.held_bytes += c.held_bytes, s.held_ms += c.held_ms;
          s.shaper_busy_ms += c.shaper_busy_ms;
          s.route0_bytes += c.route0_bytes, s.route1_bytes += c.route1_bytes;
          s.moved_bytes += c.moved_bytes;
        }
      }
      reply = decide_(g, plan);
      reply.has_plan = plan.empty() ? 0 : 1;
      reply.plan_bytes = static_cast<int64_t>(plan.size());
    }
    // 4. The reply (and the record) back to every DC.
    std::vector<Transfer> down;
    for (int d = 1; d < n; ++d) {
      Transfer x;
      x.path = from_root_[d];
      x.bytes = sizeof(Reply);
      if (t_.dc == 0) x.sbuf = &reply;
      if (t_.dc == d) x.rbuf = &reply;
      down.push_back(std::move(x));
    }
    tr_.execute(gw_, t_.dc, down, kTagReply, true);
    if (reply.has_plan) {
      plan.resize(static_cast<size_t>(reply.plan_bytes));
      for (auto& x : down) {
        x.bytes = plan.size();
        if (x.sbuf) x.sbuf = plan.data();
        if (x.rbuf) x.rbuf = plan.data();
      }
      tr_.execute(gw_, t_.dc, down, kTagPlan, true);
    }
  }
  // 5. In the DC.
  MPI_CHECK(MPI_Bcast(&reply, 1, reply_.get(), 0, dc_));
  if (reply.has_plan) {
    plan.resize(static_cast<size_t>(reply.plan_bytes));
    MPI_CHECK(MPI_Bcast(plan.data(), static_cast<int>(plan.size()), MPI_BYTE, 0, dc_));
  }
  Returned r;
  r.reply = reply;
  r.plan = std::move(plan);
  r.rtt_ms = (MPI_Wtime() - p.posted_at) * 1e3;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_.emplace(p.seq, std::move(r));
  }
  cv_.notify_all();
}

void ControlLink::broadcast(std::vector<char>& bytes) {
  int64_t len = static_cast<int64_t>(bytes.size());
  MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT64_T, 0, t_.world));
  bytes.resize(static_cast<size_t>(len));
  MPI_CHECK(MPI_Bcast(bytes.data(), static_cast<int>(len), MPI_BYTE, 0, t_.world));
}

}  // namespace strait
