// h5util.hpp — small helpers over the HDF5 C API shared by src/trace/ (trace writer, trace
// reader, checkpoint): RAII handles, a guard that silences HDF5's error-stack printing where a
// failure is expected and handled, and scalar/array attribute read/write.
// The helpers throw std::runtime_error (a message naming the item, not the file); callers add
// the path, and TraceWriter turns a failure into strait::fatal because the run cannot go on
// without its trace.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace strait::h5 {

// Owns one HDF5 id and closes it with Close.
template <herr_t (*Close)(hid_t)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(hid_t id) : id_(id) {}
  ~Owned() { reset(); }
  Owned(Owned&& o) noexcept : id_(o.release()) {}
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.release();
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  operator hid_t() const { return id_; }  // NOLINT: used directly in H5 calls
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  hid_t release() {
    const hid_t id = id_;
    id_ = -1;
    return id;
  }
  // Closes now; returns the close status (0 when nothing was open).
  herr_t reset() {
    herr_t rc = 0;
    if (id_ >= 0) rc = Close(id_);
    id_ = -1;
    return rc;
  }

 private:
  hid_t id_ = -1;
};

using File = Owned<H5Fclose>;
using Group = Owned<H5Gclose>;
using Dataset = Owned<H5Dclose>;
using Space = Owned<H5Sclose>;
using Type = Owned<H5Tclose>;
using Attr = Owned<H5Aclose>;
using Plist = Owned<H5Pclose>;

// Call first in main(), before any other HDF5 call: HDF5 then does not close itself at exit.
// Every file strait opens is closed explicitly; what is left at exit is a file HDF5 could not
// close (a failed create on a full disk), and HDF5's exit handler would only print "infinite
// loop closing library" over it after strait has said what went wrong.
void init();

// Why the last HDF5 call failed, from HDF5's error stack: the operating system's message when
// HDF5 recorded one ("No space left on device", "Read-only file system"), else its innermost
// description; "" when the stack is empty. Read it right after the failed call.
std::string error_cause();

// Throws std::runtime_error(what + ": " + the cause) when an HDF5 call returned a negative id or
// status.
template <class T>
T check(T rc, const std::string& what) {
  if (rc < 0) {
    const std::string cause = error_cause();
    throw std::runtime_error(cause.empty() ? what : what + ": " + cause);
  }
  return rc;
}

// While alive, HDF5 does not print its error stack (for failures we report ourselves).
class Quiet {
 public:
  Quiet() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~Quiet() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  Quiet(const Quiet&) = delete;
  Quiet& operator=(const Quiet&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// Variable-length UTF-8 string type (what h5py reads as str).
Type vlen_string();

// File-access property list. locking=false lets a reader open a file that a live writer holds
// (HDF5 >= 1.10.7 property; older libraries get HDF5_USE_FILE_LOCKING=FALSE in the environment).
// locking=true means "lock where the file system supports it" (best effort, e.g. on Lustre/NFS).
Plist file_access(bool locking);

bool exists(hid_t loc, const std::string& name);       // link (group/dataset) directly in loc
bool has_attr(hid_t loc, const std::string& name);

// Attribute writers: create, or overwrite when an attribute of that name exists (same type).
void set_attr(hid_t loc, const std::string& name, const std::string& value);
void set_attr(hid_t loc, const std::string& name, const std::vector<std::string>& values);
void set_attr(hid_t loc, const std::string& name, int32_t value);
void set_attr(hid_t loc, const std::string& name, int64_t value);
void set_attr(hid_t loc, const std::string& name, uint64_t value);
void set_attr(hid_t loc, const std::string& name, double value);
void set_attr(hid_t loc, const std::string& name, const std::vector<int32_t>& values);
void set_attr(hid_t loc, const std::string& name, const std::vector<double>& values);

// Attribute readers: throw when missing or not convertible. Strings may be fixed or variable
// length; numbers are converted by HDF5 to the requested native type.
std::string get_attr_string(hid_t loc, const std::string& name);
std::vector<std::string> get_attr_strings(hid_t loc, const std::string& name);
int64_t get_attr_i64(hid_t loc, const std::string& name);
uint64_t get_attr_u64(hid_t loc, const std::string& name);
double get_attr_f64(hid_t loc, const std::string& name);
std::vector<int32_t> get_attr_i32s(hid_t loc, const std::string& name);
std::vector<double> get_attr_f64s(hid_t loc, const std::string& name);

// Frees the variable-length data HDF5 allocated while reading buf with mem_type over space.
void reclaim(hid_t mem_type, hid_t space, void* buf);

}  // namespace strait::h5
