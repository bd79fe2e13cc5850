// h5util.cpp — RAII/attribute helpers over the HDF5 C API (see h5util.hpp).
#include "trace/h5util.hpp"

#include <cstdlib>
#include <cstring>

namespace strait::h5 {

namespace {

std::string attr_what(const std::string& name, const char* action) {
  return std::string("cannot ") + action + " attribute '" + name + "'";
}

// Writes n elements (scalar when dims == nullptr) of mem_type from buf as attribute name,
// stored with file_type. An existing attribute with the same element count and type class is
// overwritten in place (that is how /meta "status" is rewritten); otherwise it is replaced.
void write_attr(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type,
                const void* buf, const hsize_t* dims) {
  const hssize_t n = dims ? static_cast<hssize_t>(dims[0]) : 1;
  if (has_attr(loc, name)) {
    Attr a(check(H5Aopen(loc, name.c_str(), H5P_DEFAULT), attr_what(name, "open")));
    Space s(check(H5Aget_space(a), attr_what(name, "read the shape of")));
    Type t(check(H5Aget_type(a), attr_what(name, "read the type of")));
    const bool same_shape = H5Sget_simple_extent_npoints(s) == n &&
                            (dims != nullptr) == (H5Sget_simple_extent_ndims(s) == 1);
    const bool same_class = H5Tget_class(t) == H5Tget_class(file_type) &&
                            H5Tis_variable_str(t) == H5Tis_variable_str(file_type);
    if (same_shape && same_class) {
      if (n > 0) check(H5Awrite(a, mem_type, buf), attr_what(name, "write"));
      return;
    }
    a.reset();
    check(H5Adelete(loc, name.c_str()), attr_what(name, "replace"));
  }
  Space s(dims ? H5Screate_simple(1, dims, nullptr) : H5Screate(H5S_SCALAR));
  check(s.get(), attr_what(name, "make a dataspace for"));
  Attr a(check(H5Acreate2(loc, name.c_str(), file_type, s, H5P_DEFAULT, H5P_DEFAULT),
               attr_what(name, "create")));
  if (n > 0) check(H5Awrite(a, mem_type, buf), attr_what(name, "write"));
}

struct OpenAttr {
  Attr attr;
  Space space;
  Type type;
  hssize_t n = 0;
};

OpenAttr open_attr(hid_t loc, const std::string& name) {
  if (!has_attr(loc, name)) throw std::runtime_error("missing attribute '" + name + "'");
  OpenAttr o;
  o.attr = Attr(check(H5Aopen(loc, name.c_str(), H5P_DEFAULT), attr_what(name, "open")));
  o.space = Space(check(H5Aget_space(o.attr), attr_what(name, "read the shape of")));
  o.type = Type(check(H5Aget_type(o.attr), attr_what(name, "read the type of")));
  o.n = H5Sget_simple_extent_npoints(o.space);
  check(o.n, attr_what(name, "read the size of"));
  return o;
}

template <class T>
std::vector<T> read_numbers(hid_t loc, const std::string& name, hid_t mem_type) {
  OpenAttr o = open_attr(loc, name);
  const H5T_class_t c = H5Tget_class(o.type);
  if (c != H5T_INTEGER && c != H5T_FLOAT)
    throw std::runtime_error("attribute '" + name + "' is not numeric");
  std::vector<T> v(static_cast<size_t>(o.n));
  if (!v.empty()) check(H5Aread(o.attr, mem_type, v.data()), attr_what(name, "read"));
  return v;
}

template <class T>
T read_scalar(hid_t loc, const std::string& name, hid_t mem_type) {
  std::vector<T> v = read_numbers<T>(loc, name, mem_type);
  if (v.size() != 1) throw std::runtime_error("attribute '" + name + "' is not a single number");
  return v[0];
}

}  // namespace

void init() { H5dont_atexit(); }

std::string error_cause() {
  struct Found {
    std::string innermost, os;
  } found;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* data) -> herr_t {
        auto* f = static_cast<Found*>(data);
        const std::string desc = e->desc ? e->desc : "";
        if (n == 0) f->innermost = desc;
        // The file drivers put the system's errno text in their description.
        const auto at = desc.find("error message = '");
        if (f->os.empty() && at != std::string::npos) {
          const auto from = at + 17, to = desc.find('\'', from);
          f->os = desc.substr(from, to == std::string::npos ? std::string::npos : to - from);
        }
        return 0;
      },
      &found);
  return found.os.empty() ? found.innermost : found.os;
}

Type vlen_string() {
  Type t(check(H5Tcopy(H5T_C_S1), "cannot copy the string type"));
  check(H5Tset_size(t, H5T_VARIABLE), "cannot make a variable-length string type");
  check(H5Tset_cset(t, H5T_CSET_UTF8), "cannot set UTF-8 on the string type");
  return t;
}

Plist file_access(bool locking) {
  Plist fapl(check(H5Pcreate(H5P_FILE_ACCESS), "cannot create a file-access property list"));
#if H5_VERSION_GE(1, 10, 7)
  check(H5Pset_file_locking(fapl, locking, /*ignore_when_disabled=*/true),
        "cannot set file locking");
#else
  if (!locking) setenv("HDF5_USE_FILE_LOCKING", "FALSE", 1);
#endif
  return fapl;
}

bool exists(hid_t loc, const std::string& name) {
  Quiet q;
  return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0;
}

bool has_attr(hid_t loc, const std::string& name) {
  Quiet q;
  return H5Aexists(loc, name.c_str()) > 0;
}

void set_attr(hid_t loc, const std::string& name, const std::string& value) {
  Type t = vlen_string();
  const char* p = value.c_str();
  write_attr(loc, name, t, t, &p, nullptr);
}

void set_attr(hid_t loc, const std::string& name, const std::vector<std::string>& values) {
  Type t = vlen_string();
  std::vector<const char*> p;
  p.reserve(values.size());
  for (const auto& s : values) p.push_back(s.c_str());
  const hsize_t dims[1] = {values.size()};
  write_attr(loc, name, t, t, p.data(), dims);
}

void set_attr(hid_t loc, const std::string& name, int32_t value) {
  write_attr(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &value, nullptr);
}
void set_attr(hid_t loc, const std::string& name, int64_t value) {
  write_attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, nullptr);
}
void set_attr(hid_t loc, const std::string& name, uint64_t value) {
  write_attr(loc, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value, nullptr);
}
void set_attr(hid_t loc, const std::string& name, double value) {
  write_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, nullptr);
}
void set_attr(hid_t loc, const std::string& name, const std::vector<int32_t>& values) {
  const hsize_t dims[1] = {values.size()};
  write_attr(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, values.data(), dims);
}

void set_attr(hid_t loc, const std::string& name, const std::vector<double>& values) {
  const hsize_t dims[1] = {values.size()};
  write_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data(), dims);
}

std::vector<std::string> get_attr_strings(hid_t loc, const std::string& name) {
  OpenAttr o = open_attr(loc, name);
  if (H5Tget_class(o.type) != H5T_STRING)
    throw std::runtime_error("attribute '" + name + "' is not a string");
  const size_t n = static_cast<size_t>(o.n);
  std::vector<std::string> out;
  out.reserve(n);
  if (n == 0) return out;
  if (H5Tis_variable_str(o.type) > 0) {
    Type mt = vlen_string();
    std::vector<char*> p(n, nullptr);
    check(H5Aread(o.attr, mt, p.data()), attr_what(name, "read"));
    for (char* s : p) out.emplace_back(s ? s : "");
    reclaim(mt, o.space, p.data());
  } else {
    const size_t size = H5Tget_size(o.type);
    if (size == 0) throw std::runtime_error(attr_what(name, "size"));
    Type mt(check(H5Tcopy(H5T_C_S1), attr_what(name, "make a type for")));
    check(H5Tset_size(mt, size), attr_what(name, "make a type for"));
    std::vector<char> buf(n * size, '\0');
    check(H5Aread(o.attr, mt, buf.data()), attr_what(name, "read"));
    for (size_t i = 0; i < n; ++i) {
      const char* s = buf.data() + i * size;
      size_t len = strnlen(s, size);
      while (len > 0 && s[len - 1] == ' ') --len;  // space-padded strings
      out.emplace_back(s, len);
    }
  }
  return out;
}

std::string get_attr_string(hid_t loc, const std::string& name) {
  std::vector<std::string> v = get_attr_strings(loc, name);
  if (v.size() != 1) throw std::runtime_error("attribute '" + name + "' is not a single string");
  return v[0];
}

int64_t get_attr_i64(hid_t loc, const std::string& name) {
  return read_scalar<int64_t>(loc, name, H5T_NATIVE_INT64);
}
uint64_t get_attr_u64(hid_t loc, const std::string& name) {
  return read_scalar<uint64_t>(loc, name, H5T_NATIVE_UINT64);
}
double get_attr_f64(hid_t loc, const std::string& name) {
  return read_scalar<double>(loc, name, H5T_NATIVE_DOUBLE);
}
std::vector<int32_t> get_attr_i32s(hid_t loc, const std::string& name) {
  return read_numbers<int32_t>(loc, name, H5T_NATIVE_INT32);
}

std::vector<double> get_attr_f64s(hid_t loc, const std::string& name) {
  return read_numbers<double>(loc, name, H5T_NATIVE_DOUBLE);
}

void reclaim(hid_t mem_type, hid_t space, void* buf) {
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(mem_type, space, H5P_DEFAULT, buf);
#else
  H5Dvlen_reclaim(mem_type, space, H5P_DEFAULT, buf);
#endif
}

}  // namespace strait::h5
