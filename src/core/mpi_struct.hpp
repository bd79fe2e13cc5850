// mpi_struct.hpp — MPI datatypes described field by field from C++ structs, so that records
// exchanged between ranks (the per-step measurements, src/control/exchange.cpp) are typed on the
// wire instead of hand-packed arrays of doubles. Usage:
//   MpiStruct<Rec> d;  d.field(&Rec::step).field(&Rec::ms);  MPI_Datatype t = d.commit();
// The committed type's extent is sizeof(Rec), so arrays of Rec can be sent with a count.
// The caller frees the type (MPI_Type_free), or wraps it in MpiType.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/check.hpp"

namespace strait {

template <typename T>
MPI_Datatype mpi_type_of();
template <> inline MPI_Datatype mpi_type_of<double>() { return MPI_DOUBLE; }
template <> inline MPI_Datatype mpi_type_of<int64_t>() { return MPI_INT64_T; }
template <> inline MPI_Datatype mpi_type_of<int32_t>() { return MPI_INT32_T; }
template <> inline MPI_Datatype mpi_type_of<uint64_t>() { return MPI_UINT64_T; }

// Owns a committed datatype.
class MpiType {
 public:
  MpiType() = default;
  explicit MpiType(MPI_Datatype t) : t_(t) {}
  ~MpiType() { reset(); }
  MpiType(MpiType&& o) noexcept : t_(o.t_) { o.t_ = MPI_DATATYPE_NULL; }
  MpiType& operator=(MpiType&& o) noexcept {
    if (this != &o) reset(), t_ = o.t_, o.t_ = MPI_DATATYPE_NULL;
    return *this;
  }
  MpiType(const MpiType&) = delete;
  MpiType& operator=(const MpiType&) = delete;
  MPI_Datatype get() const { return t_; }
  void reset() {
    int fin = 0;
    MPI_Finalized(&fin);
    if (t_ != MPI_DATATYPE_NULL && !fin) MPI_Type_free(&t_);
    t_ = MPI_DATATYPE_NULL;
  }

 private:
  MPI_Datatype t_ = MPI_DATATYPE_NULL;
};

template <typename S>
class MpiStruct {
 public:
  // A scalar member, or a fixed array member (T m[N]) of scalars.
  template <typename T>
  MpiStruct& field(T S::*m) {
    add(m, mpi_type_of<T>(), 1);
    return *this;
  }
  template <typename T, size_t N>
  MpiStruct& field(T (S::*m)[N]) {
    add(m, mpi_type_of<T>(), static_cast<int>(N));
    return *this;
  }
  // A member that is itself a described struct (or an array of them), with its committed type.
  template <typename T>
  MpiStruct& nested(T S::*m, MPI_Datatype t, int count = 1) {
    add(m, t, count);
    return *this;
  }
  template <typename T, size_t N>
  MpiStruct& nested(T (S::*m)[N], MPI_Datatype t) {
    add(m, t, static_cast<int>(N));
    return *this;
  }
  MPI_Datatype commit() const {
    MPI_Datatype raw = MPI_DATATYPE_NULL, t = MPI_DATATYPE_NULL;
    MPI_CHECK(MPI_Type_create_struct(static_cast<int>(types_.size()), counts_.data(),
                                     displs_.data(), types_.data(), &raw));
    MPI_CHECK(MPI_Type_create_resized(raw, 0, static_cast<MPI_Aint>(sizeof(S)), &t));
    MPI_CHECK(MPI_Type_free(&raw));
    MPI_CHECK(MPI_Type_commit(&t));
    return t;
  }

 private:
  template <typename M>
  void add(M S::*m, MPI_Datatype t, int count) {
    static const S probe{};
    displs_.push_back(reinterpret_cast<const char*>(&(probe.*m)) -
                      reinterpret_cast<const char*>(&probe));
    types_.push_back(t);
    counts_.push_back(count);
  }
  std::vector<int> counts_;
  std::vector<MPI_Aint> displs_;
  std::vector<MPI_Datatype> types_;
};

}  // namespace strait
