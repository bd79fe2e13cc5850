// messages.cpp — see messages.hpp.
#include "config/messages.hpp"

#include <cstdio>
#include <sstream>

namespace strait::msg {

std::string line(const std::string& where, const std::string& key, const std::string& what,
                 const std::string& expected) {
  return printable(where + ": " + key + ": " + what + "; expected " + expected);
}

std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
      continue;
    }
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string num(double x) {
  std::ostringstream ss;
  ss << x;
  return ss.str();
}

std::string num(double x, int digits) {
  std::ostringstream ss;
  ss.precision(digits);
  ss << x;
  return ss.str();
}

std::string num_list(const std::vector<double>& v, int digits) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + num(v[i], digits);
  return s + "]";
}

std::string quote(const std::string& s) { return "\"" + s + "\""; }

std::string count(long long n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string gib(double bytes) {
  std::ostringstream ss;
  ss.precision(3);
  ss << bytes / 1073741824.0 << " GiB";
  return ss.str();
}

}  // namespace strait::msg
