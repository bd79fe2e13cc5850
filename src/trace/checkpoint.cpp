// checkpoint.cpp — write_checkpoint / read_checkpoint (layout in docs/checkpoint.md).
// The file is written as "<path>.tmp.<pid>", fsynced, and renamed onto path, so a checkpoint is
// either complete or absent; a crash mid-write leaves at most a stale .tmp.<pid>. Tensor order is
// stored explicitly (attribute "order") because HDF5 iterates a group's members by name, not by
// creation. Format 2 adds a CRC-32 per dataset (attribute "crc32", of the values as stored:
// little-endian float32 or float64), checked on read with the types, finiteness and format.
#include "trace/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "trace/h5util.hpp"

namespace strait {

uint32_t crc32(const void* data, size_t n, uint32_t crc) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

namespace {

constexpr int32_t kFormatVersion = 2;
// A tensor of more elements than this is not one of ours (parameters per expert are bounded by
// 2^31 - 1, validate/), and reading it would allocate without end.
constexpr uint64_t kMaxElements = (uint64_t{1} << 31) - 1;
static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE single and double");

h5::Space make_space(const std::vector<hsize_t>& dims) {
  if (dims.empty()) return h5::Space(h5::check(H5Screate(H5S_SCALAR), "cannot make a dataspace"));
  return h5::Space(h5::check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                             "cannot make a dataspace"));
}

void write_array(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type,
                 const std::vector<hsize_t>& dims, const void* data, size_t count, size_t elem) {
  const std::string what = "cannot write " + name;
  h5::Space space = make_space(dims);
  h5::Dataset ds(h5::check(
      H5Dcreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), what));
  if (count > 0) h5::check(H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), what);
  // Of the values as stored (little endian), which on this host are the bytes in memory.
  h5::set_attr(ds, "crc32", static_cast<int64_t>(crc32(data, count * elem)));
}

void write_tensors(hid_t parent, const char* group, const std::vector<NamedTensor>& tensors,
                   const std::string& where) {
  h5::Group g(h5::check(H5Gcreate2(parent, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        "cannot create " + where));
  std::vector<std::string> order;
  for (const NamedTensor& t : tensors) {
    const std::string item = where + "/" + t.name;
    if (t.name.empty() || t.name.find('/') != std::string::npos || t.name == ".")
      throw std::runtime_error("bad tensor name '" + t.name + "' in " + where);
    size_t n = 1;
    std::vector<hsize_t> dims;
    for (int64_t d : t.shape) {
      if (d < 0) throw std::runtime_error(item + ": negative dimension");
      n *= static_cast<size_t>(d);
      dims.push_back(static_cast<hsize_t>(d));
    }
    if (n != t.data.size())
      throw std::runtime_error(item + ": shape holds " + std::to_string(n) + " elements, data has " +
                               std::to_string(t.data.size()));
    write_array(g, t.name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, t.data.data(), n, sizeof(float));
    order.push_back(t.name);
  }
  h5::set_attr(g, "order", order);
}

void write_file(const std::string& tmp, const Checkpoint& ck) {
  h5::Plist fapl = h5::file_access(/*locking=*/true);
  h5::File f;
  {
    h5::Quiet quiet;
    f = h5::File(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
  }
  if (!f.valid()) {
    const std::string cause = h5::error_cause();
    throw std::runtime_error("cannot create " + tmp + (cause.empty() ? "" : ": " + cause));
  }
  h5::set_attr(f, "format", std::string("strait checkpoint"));
  h5::set_attr(f, "format_version", kFormatVersion);
  h5::set_attr(f, "next_step", ck.next_step);
  h5::set_attr(f, "seed", ck.seed);
  h5::set_attr(f, "config_text", ck.config_text);
  h5::set_attr(f, "num_experts", static_cast<int64_t>(ck.experts.size()));
  {
    h5::Group g(h5::check(H5Gcreate2(f, "splits", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                          "cannot create /splits"));
    h5::set_attr(g, "num_dcs", static_cast<int64_t>(ck.splits.size()));
    for (size_t i = 0; i < ck.splits.size(); ++i) {
      const auto& s = ck.splits[i];
      write_array(g, "dc" + std::to_string(i), H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {s.size()},
                  s.data(), s.size(), sizeof(double));
    }
  }
  write_array(f, "batch_shares", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {ck.batch_shares.size()},
              ck.batch_shares.data(), ck.batch_shares.size(), sizeof(double));
  for (size_t e = 0; e < ck.experts.size(); ++e) {
    const CheckpointExpert& ex = ck.experts[e];
    const std::string name = "expert" + std::to_string(e);
    h5::Group g(h5::check(H5Gcreate2(f, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                          "cannot create /" + name));
    h5::set_attr(g, "adam_t", ex.adam_t);
    write_tensors(g, "params", ex.params, "/" + name + "/params");
    write_tensors(g, "adam_m", ex.adam_m, "/" + name + "/adam_m");
    write_tensors(g, "adam_v", ex.adam_v, "/" + name + "/adam_v");
  }
  h5::check(H5Fflush(f, H5F_SCOPE_GLOBAL), "cannot flush " + tmp);
  h5::check(f.reset(), "cannot close " + tmp);
}

// Durability across power loss, not only process death: data, then the directory entry.
void fsync_path(const std::string& p, bool directory) {
  const int fd = ::open(p.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

// The element count of a dataset of `bytes`-byte floats, refusing another type, a count beyond
// kMaxElements, or a count its storage cannot hold (a tampered header).
uint64_t float_elements(hid_t ds, size_t bytes, const std::string& where) {
  const std::string what = "cannot read " + where;
  h5::Type type(h5::check(H5Dget_type(ds), what));
  if (H5Tget_class(type) != H5T_FLOAT || H5Tget_size(type) != bytes)
    throw std::runtime_error(where + " is not float" + std::to_string(bytes * 8) +
                             " (its type was changed after it was written)");
  h5::Space space(h5::check(H5Dget_space(ds), what));
  const hssize_t n = h5::check(H5Sget_simple_extent_npoints(space), what);
  if (static_cast<uint64_t>(n) > kMaxElements)
    throw std::runtime_error(where + " has " + std::to_string(n) + " elements, more than any model");
  if (n > 0 && H5Dget_storage_size(ds) < static_cast<hsize_t>(n) * bytes)
    throw std::runtime_error(where + " holds less data than its shape says");
  return static_cast<uint64_t>(n);
}

// The checksum of what was read against the one written with it.
void check_crc(hid_t ds, const void* data, size_t bytes, const std::string& where) {
  if (!h5::has_attr(ds, "crc32")) throw std::runtime_error("missing attribute " + where + "@crc32");
  const uint32_t want = static_cast<uint32_t>(h5::get_attr_i64(ds, "crc32"));
  if (crc32(data, bytes) != want)
    throw std::runtime_error(where + ": checksum mismatch (the data was changed or damaged after "
                             "it was written)");
}

std::vector<double> read_f64(hid_t loc, const std::string& name, const std::string& where) {
  if (!h5::exists(loc, name)) throw std::runtime_error("missing " + where);
  const std::string what = "cannot read " + where;
  h5::Dataset ds(h5::check(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), what));
  std::vector<double> v(float_elements(ds, sizeof(double), where));
  if (!v.empty()) h5::check(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), what);
  check_crc(ds, v.data(), v.size() * sizeof(double), where);
  for (double x : v)
    if (!std::isfinite(x)) throw std::runtime_error(where + " holds a non-finite value");
  return v;
}

std::vector<NamedTensor> read_tensors(hid_t parent, const char* group, const std::string& where) {
  if (!h5::exists(parent, group)) throw std::runtime_error("missing " + where);
  h5::Group g(h5::check(H5Gopen2(parent, group, H5P_DEFAULT), "cannot open " + where));
  if (!h5::has_attr(g, "order")) throw std::runtime_error("missing attribute " + where + "@order");
  std::vector<NamedTensor> out;
  std::set<std::string> seen;
  for (const std::string& name : h5::get_attr_strings(g, "order")) {
    const std::string item = where + "/" + name;
    if (name.empty() || name.find('/') != std::string::npos || !seen.insert(name).second)
      throw std::runtime_error(where + "@order: bad or repeated tensor name '" + name + "'");
    if (!h5::exists(g, name)) throw std::runtime_error("missing " + item);
    const std::string what = "cannot read " + item;
    h5::Dataset ds(h5::check(H5Dopen2(g, name.c_str(), H5P_DEFAULT), what));
    const uint64_t n = float_elements(ds, sizeof(float), item);
    h5::Space space(h5::check(H5Dget_space(ds), what));
    const int rank = h5::check(H5Sget_simple_extent_ndims(space), what);
    std::vector<hsize_t> dims(static_cast<size_t>(rank));
    if (rank > 0) h5::check(H5Sget_simple_extent_dims(space, dims.data(), nullptr), what);
    NamedTensor t;
    t.name = name;
    for (hsize_t d : dims) t.shape.push_back(static_cast<int64_t>(d));
    t.data.resize(n);
    if (n > 0)
      h5::check(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data.data()), what);
    check_crc(ds, t.data.data(), n * sizeof(float), item);
    out.push_back(std::move(t));
  }
  return out;
}

int64_t need_i64(hid_t loc, const char* name) {
  if (!h5::has_attr(loc, name)) throw std::runtime_error(std::string("missing attribute ") + name);
  return h5::get_attr_i64(loc, name);
}

}  // namespace

std::string nonfinite_in(const Checkpoint& ck) {
  for (size_t e = 0; e < ck.experts.size(); ++e) {
    const CheckpointExpert& x = ck.experts[e];
    const std::pair<const char*, const std::vector<NamedTensor>*> groups[] = {
        {"params", &x.params}, {"adam_m", &x.adam_m}, {"adam_v", &x.adam_v}};
    for (const auto& [group, tensors] : groups)
      for (const NamedTensor& t : *tensors)
        for (size_t i = 0; i < t.data.size(); ++i) {
          const float v = t.data[i];
          if (std::isfinite(v)) continue;
          char buf[32];
          std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
          return "expert " + std::to_string(e) + ": " + group + "/" + t.name + "[" +
                 std::to_string(i) + "] = " + buf;
        }
  }
  return "";
}

void write_checkpoint(const std::string& path, const Checkpoint& ck) {
  namespace fs = std::filesystem;
  if (const std::string bad = nonfinite_in(ck); !bad.empty())
    throw std::runtime_error("checkpoint " + path + " not written: " + bad +
                             " is not finite (the previous checkpoint, if any, is kept)");
  // Our own name: a second writer of the same path (which OutputLock forbids anyway) or a stale
  // file is never truncated under someone.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec)
      throw std::runtime_error("checkpoint " + path + ": cannot create folder " +
                               parent.string() + ": " + ec.message());
  }
  try {
    h5::Quiet quiet;
    write_file(tmp, ck);
  } catch (const std::exception& e) {
    fs::remove(tmp, ec);
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
  fsync_path(tmp, false);
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("checkpoint " + path + ": cannot rename " + tmp + ": " + ec.message());
  }
  fsync_path(parent.empty() ? std::string(".") : parent.string(), true);
}

Checkpoint read_checkpoint(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw std::runtime_error("checkpoint " + path + " does not exist");
  if (!std::filesystem::is_regular_file(path, ec))  // HDF5 would wait on a FIFO
    throw std::runtime_error("checkpoint " + path + " is not a regular file");
  Checkpoint ck;
  try {
    h5::Plist fapl = h5::file_access(/*locking=*/true);
    h5::File f;
    {
      h5::Quiet quiet;
      f = h5::File(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl));
    }
    if (!f.valid()) throw std::runtime_error("not an HDF5 file, or unreadable");
    h5::Quiet quiet;
    if (!h5::has_attr(f, "format") || h5::get_attr_string(f, "format") != "strait checkpoint")
      throw std::runtime_error("not a strait checkpoint (attribute format is not \"strait checkpoint\")");
    const int64_t version = need_i64(f, "format_version");
    if (version != kFormatVersion)
      throw std::runtime_error("format_version " + std::to_string(version) + "; expected " +
                               std::to_string(kFormatVersion) +
                               (version < kFormatVersion ? " (written by an older strait, without "
                                                           "checksums: resume it with that version)"
                                                         : ""));
    ck.next_step = need_i64(f, "next_step");
    if (!h5::has_attr(f, "seed")) throw std::runtime_error("missing attribute seed");
    ck.seed = h5::get_attr_u64(f, "seed");
    if (!h5::has_attr(f, "config_text")) throw std::runtime_error("missing attribute config_text");
    ck.config_text = h5::get_attr_string(f, "config_text");
    const int64_t num_experts = need_i64(f, "num_experts");
    if (num_experts < 0) throw std::runtime_error("negative num_experts");
    if (ck.next_step < 0) throw std::runtime_error("negative next_step");
    {
      if (!h5::exists(f, "splits")) throw std::runtime_error("missing /splits");
      h5::Group g(h5::check(H5Gopen2(f, "splits", H5P_DEFAULT), "cannot open /splits"));
      if (!h5::has_attr(g, "num_dcs")) throw std::runtime_error("missing attribute /splits@num_dcs");
      const int64_t num_dcs = h5::get_attr_i64(g, "num_dcs");
      if (num_dcs < 0) throw std::runtime_error("negative /splits@num_dcs");
      for (int64_t i = 0; i < num_dcs; ++i) {
        const std::string name = "dc" + std::to_string(i);
        ck.splits.push_back(read_f64(g, name, "/splits/" + name));
      }
    }
    ck.batch_shares = read_f64(f, "batch_shares", "/batch_shares");
    for (int64_t e = 0; e < num_experts; ++e) {
      const std::string name = "expert" + std::to_string(e);
      if (!h5::exists(f, name)) throw std::runtime_error("missing /" + name);
      h5::Group g(h5::check(H5Gopen2(f, name.c_str(), H5P_DEFAULT), "cannot open /" + name));
      CheckpointExpert ex;
      if (!h5::has_attr(g, "adam_t")) throw std::runtime_error("missing attribute /" + name + "@adam_t");
      ex.adam_t = h5::get_attr_i64(g, "adam_t");
      if (ex.adam_t < 0) throw std::runtime_error("negative /" + name + "@adam_t");
      ex.params = read_tensors(g, "params", "/" + name + "/params");
      ex.adam_m = read_tensors(g, "adam_m", "/" + name + "/adam_m");
      ex.adam_v = read_tensors(g, "adam_v", "/" + name + "/adam_v");
      ck.experts.push_back(std::move(ex));
    }
    if (const std::string bad = nonfinite_in(ck); !bad.empty())
      throw std::runtime_error(bad + " is not finite");
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
  return ck;
}

}  // namespace strait
