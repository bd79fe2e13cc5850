// mpi_allreduce.hpp — sync strategy "mpi-allreduce" (see mpi_allreduce.cpp).
#pragma once
#include "sync/sync.hpp"

namespace strait {

class MpiAllreduceSync final : public SyncStrategy {
 public:
  std::string name() const override { return "mpi-allreduce"; }
  void sync(ParamSet<float>& ps, SyncChannel& ch, const SyncInput& in, Transport& tr) override;
};

}  // namespace strait
