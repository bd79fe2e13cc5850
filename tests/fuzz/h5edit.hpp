// h5edit.hpp — the fuzz targets' tamperer for HDF5 files strait wrote (checkpoints, traces):
// libFuzzer's bytes pick objects of a valid file and change them the ways a damaged or edited
// file differs — attributes removed or retyped, datasets removed, retyped, reshaped, resized or
// overwritten with arbitrary bytes. The readers under test then meet every kind of wrong file
// without the fuzzer spending its time inside HDF5's own superblock parser (third-party code).
#pragma once
#include <hdf5.h>
#include <unistd.h>

#include <fuzzer/FuzzedDataProvider.h>

#include <string>
#include <vector>

namespace strait::fuzz {

// Every object of the file ("/" first), as paths.
inline std::vector<std::string> objects(hid_t file) {
  std::vector<std::string> out{"/"};
  H5Ovisit2(
      file, H5_INDEX_NAME, H5_ITER_NATIVE,
      [](hid_t, const char* name, const H5O_info_t*, void* data) -> herr_t {
        if (std::string(name) != ".") static_cast<std::vector<std::string>*>(data)->push_back("/" + std::string(name));
        return 0;
      },
      &out, H5O_INFO_BASIC);
  return out;
}

inline void attr_int(hid_t obj, const std::string& name, long long v) {
  if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) H5Awrite(a, H5T_NATIVE_LLONG, &v), H5Aclose(a);
  H5Sclose(sp);
}

inline void attr_double(hid_t obj, const std::string& name, double v) {
  if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name.c_str(), H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) H5Awrite(a, H5T_NATIVE_DOUBLE, &v), H5Aclose(a);
  H5Sclose(sp);
}

// A variable-length string attribute: a scalar (n = 0) or an array of n strings.
inline void attr_strings(hid_t obj, const std::string& name, const std::vector<std::string>& v, bool scalar) {
  if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  const hsize_t n = v.size();
  hid_t sp = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr);
  std::vector<const char*> p;
  for (const auto& s : v) p.push_back(s.c_str());
  hid_t a = H5Acreate2(obj, name.c_str(), t, sp, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0 && (!scalar || !p.empty())) H5Awrite(a, t, p.data());
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
}

// Replaces the dataset at `path` with one of another type and shape, filled with fuzz bytes.
inline void replace_dataset(hid_t file, const std::string& path, FuzzedDataProvider& in) {
  const hid_t types[] = {H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE, H5T_NATIVE_INT32, H5T_NATIVE_INT64,
                         H5T_NATIVE_UINT8};
  const hid_t type = types[in.ConsumeIntegralInRange<int>(0, 4)];
  const int rank = in.ConsumeIntegralInRange<int>(0, 3);
  hsize_t dims[3] = {0, 0, 0};
  size_t n = 1;
  for (int i = 0; i < rank; ++i) n *= (dims[i] = in.ConsumeIntegralInRange<hsize_t>(0, 6));
  H5Ldelete(file, path.c_str(), H5P_DEFAULT);
  hid_t sp = rank ? H5Screate_simple(rank, dims, nullptr) : H5Screate(H5S_SCALAR);
  hid_t ds = H5Dcreate2(file, path.c_str(), type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (ds >= 0) {
    std::vector<unsigned char> buf(n * H5Tget_size(type));
    for (auto& b : buf) b = in.ConsumeIntegral<unsigned char>();
    if (!buf.empty()) H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
    H5Dclose(ds);
  }
  H5Sclose(sp);
}

// Overwrites a dataset's values with fuzz bytes, keeping its type and shape (not for types that
// hold pointers: variable-length strings or sequences).
inline void scribble(hid_t ds, FuzzedDataProvider& in) {
  hid_t t = H5Dget_type(ds);
  hid_t sp = H5Dget_space(ds);
  const hssize_t n = H5Sget_simple_extent_npoints(sp);
  const bool pointers = H5Tdetect_class(t, H5T_VLEN) > 0 || H5Tis_variable_str(t) > 0 ||
                        (H5Tget_class(t) == H5T_COMPOUND && [&] {
                          for (int i = 0; i < H5Tget_nmembers(t); ++i) {
                            hid_t m = H5Tget_member_type(t, static_cast<unsigned>(i));
                            const bool v = H5Tis_variable_str(m) > 0;
                            H5Tclose(m);
                            if (v) return true;
                          }
                          return false;
                        }());
  if (!pointers && n > 0 && n < (1 << 20)) {
    std::vector<unsigned char> buf(static_cast<size_t>(n) * H5Tget_size(t));
    const std::vector<unsigned char> fz = in.ConsumeBytes<unsigned char>(buf.size());
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = fz.empty() ? 0xFF : fz[i % fz.size()];
    H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
  }
  H5Sclose(sp);
  H5Tclose(t);
}

// One tampering of the file: which object and what is done to it come from the fuzzer.
inline void tamper(hid_t file, FuzzedDataProvider& in) {
  const std::vector<std::string> objs = objects(file);
  const std::string path = objs[in.ConsumeIntegralInRange<size_t>(0, objs.size() - 1)];
  hid_t obj = H5Oopen(file, path.c_str(), H5P_DEFAULT);
  if (obj < 0) return;
  H5O_info_t info;
  H5Oget_info2(obj, &info, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS);
  std::string attr = in.ConsumeRandomLengthString(16);
  if (info.num_attrs > 0 && in.ConsumeBool()) {  // mostly one of its own attributes
    char name[256] = {0};
    H5Aget_name_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_NATIVE,
                       in.ConsumeIntegralInRange<hsize_t>(0, info.num_attrs - 1), name, sizeof name,
                       H5P_DEFAULT);
    attr = name;
  }
  const bool dataset = info.type == H5O_TYPE_DATASET;
  switch (in.ConsumeIntegralInRange<int>(0, 8)) {
    case 0:
      if (!attr.empty() && H5Aexists(obj, attr.c_str()) > 0) H5Adelete(obj, attr.c_str());
      break;
    case 1:
      if (!attr.empty()) attr_int(obj, attr, in.ConsumeIntegral<long long>());
      break;
    case 2:
      if (!attr.empty()) attr_strings(obj, attr, {in.ConsumeRandomLengthString(24)}, true);
      break;
    case 3: {
      std::vector<std::string> v(in.ConsumeIntegralInRange<size_t>(0, 4));
      for (auto& s : v) s = in.ConsumeRandomLengthString(12);
      if (!attr.empty()) attr_strings(obj, attr, v, false);
      break;
    }
    case 4:
      if (!attr.empty()) attr_double(obj, attr, in.ConsumeFloatingPoint<double>());
      break;
    case 5:
      H5Oclose(obj);
      if (path != "/") H5Ldelete(file, path.c_str(), H5P_DEFAULT);
      return;
    case 6:
      if (dataset) scribble(obj, in);
      break;
    case 7:
      if (dataset) {
        H5Oclose(obj);
        replace_dataset(file, path, in);
        return;
      }
      break;
    case 8:
      if (dataset) {  // another extent (only a chunked dataset can change it)
        hsize_t dims[4] = {0, 0, 0, 0};
        hid_t sp = H5Dget_space(obj);
        const int r = H5Sget_simple_extent_dims(sp, dims, nullptr);
        H5Sclose(sp);
        if (r > 0 && r <= 4) {
          dims[0] = in.ConsumeIntegralInRange<hsize_t>(0, 2 * dims[0] + 2);
          H5Dset_extent(obj, dims);
        }
      }
      break;
  }
  H5Oclose(obj);
}

// A file name of this process's own, in memory where there is a tmpfs for it (a checkpoint is
// fsynced: on a disk that alone would cap the target at a few dozen inputs a second).
inline std::string scratch(const char* what) {
  const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return std::string(dir) + "/strait-fuzz-" + what + "-" + std::to_string(::getpid()) + ".h5";
}

}  // namespace strait::fuzz
