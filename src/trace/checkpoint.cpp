// checkpoint.cpp — write_checkpoint / read_checkpoint (layout in docs/checkpoint.md).
// The file is written as "<path>.tmp", fsynced, and renamed onto path, so a checkpoint is
// either complete or absent; a crash mid-write leaves at most a stale .tmp that the next write
// truncates. Tensor order is stored explicitly (attribute "order") because HDF5 iterates a
// group's members by name, not by creation.
#include "trace/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "trace/h5util.hpp"

namespace strait {

namespace {

constexpr int32_t kFormatVersion = 1;

h5::Space make_space(const std::vector<hsize_t>& dims) {
  if (dims.empty()) return h5::Space(h5::check(H5Screate(H5S_SCALAR), "cannot make a dataspace"));
  return h5::Space(h5::check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                             "cannot make a dataspace"));
}

void write_array(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type,
                 const std::vector<hsize_t>& dims, const void* data, size_t count) {
  const std::string what = "cannot write " + name;
  h5::Space space = make_space(dims);
  h5::Dataset ds(h5::check(
      H5Dcreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), what));
  if (count > 0) h5::check(H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), what);
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
    write_array(g, t.name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, t.data.data(), n);
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
  if (!f.valid()) throw std::runtime_error("cannot create " + tmp);
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
                  s.data(), s.size());
    }
  }
  write_array(f, "batch_shares", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {ck.batch_shares.size()},
              ck.batch_shares.data(), ck.batch_shares.size());
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

std::vector<double> read_f64(hid_t loc, const std::string& name, const std::string& where) {
  if (!h5::exists(loc, name)) throw std::runtime_error("missing " + where);
  const std::string what = "cannot read " + where;
  h5::Dataset ds(h5::check(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), what));
  h5::Space space(h5::check(H5Dget_space(ds), what));
  const hssize_t n = h5::check(H5Sget_simple_extent_npoints(space), what);
  std::vector<double> v(static_cast<size_t>(n));
  if (n > 0) h5::check(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), what);
  return v;
}

std::vector<NamedTensor> read_tensors(hid_t parent, const char* group, const std::string& where) {
  if (!h5::exists(parent, group)) throw std::runtime_error("missing " + where);
  h5::Group g(h5::check(H5Gopen2(parent, group, H5P_DEFAULT), "cannot open " + where));
  if (!h5::has_attr(g, "order")) throw std::runtime_error("missing attribute " + where + "@order");
  std::vector<NamedTensor> out;
  for (const std::string& name : h5::get_attr_strings(g, "order")) {
    const std::string item = where + "/" + name;
    if (!h5::exists(g, name)) throw std::runtime_error("missing " + item);
    const std::string what = "cannot read " + item;
    h5::Dataset ds(h5::check(H5Dopen2(g, name.c_str(), H5P_DEFAULT), what));
    h5::Space space(h5::check(H5Dget_space(ds), what));
    const int rank = h5::check(H5Sget_simple_extent_ndims(space), what);
    std::vector<hsize_t> dims(static_cast<size_t>(rank));
    if (rank > 0) h5::check(H5Sget_simple_extent_dims(space, dims.data(), nullptr), what);
    NamedTensor t;
    t.name = name;
    size_t n = 1;
    for (hsize_t d : dims) {
      t.shape.push_back(static_cast<int64_t>(d));
      n *= static_cast<size_t>(d);
    }
    t.data.resize(n);
    if (n > 0)
      h5::check(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data.data()), what);
    out.push_back(std::move(t));
  }
  return out;
}

int64_t need_i64(hid_t loc, const char* name) {
  if (!h5::has_attr(loc, name)) throw std::runtime_error(std::string("missing attribute ") + name);
  return h5::get_attr_i64(loc, name);
}

}  // namespace

void write_checkpoint(const std::string& path, const Checkpoint& ck) {
  namespace fs = std::filesystem;
  const std::string tmp = path + ".tmp";
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
    ck.next_step = need_i64(f, "next_step");
    if (!h5::has_attr(f, "seed")) throw std::runtime_error("missing attribute seed");
    ck.seed = h5::get_attr_u64(f, "seed");
    if (!h5::has_attr(f, "config_text")) throw std::runtime_error("missing attribute config_text");
    ck.config_text = h5::get_attr_string(f, "config_text");
    const int64_t num_experts = need_i64(f, "num_experts");
    if (num_experts < 0) throw std::runtime_error("negative num_experts");
    {
      if (!h5::exists(f, "splits")) throw std::runtime_error("missing /splits");
      h5::Group g(h5::check(H5Gopen2(f, "splits", H5P_DEFAULT), "cannot open /splits"));
      if (!h5::has_attr(g, "num_dcs")) throw std::runtime_error("missing attribute /splits@num_dcs");
      const int64_t num_dcs = h5::get_attr_i64(g, "num_dcs");
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
      ex.params = read_tensors(g, "params", "/" + name + "/params");
      ex.adam_m = read_tensors(g, "adam_m", "/" + name + "/adam_m");
      ex.adam_v = read_tensors(g, "adam_v", "/" + name + "/adam_v");
      ck.experts.push_back(std::move(ex));
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": " + e.what());
  }
  return ck;
}

}  // namespace strait
