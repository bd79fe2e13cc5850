// messages.hpp — the pieces of a config error message: the one-line format
// "<where>: <key>: <what>; expected <what>" (docs/config.md, "Error messages") and the phrasing
// of numbers, lists and sizes inside it. config/load.cpp and the checks one layer up
// (validate/) both build their lines from these, so every error reads alike.
#pragma once
#include <string>
#include <vector>

namespace strait::msg {

// "<where>: <key>: <what>; expected <expected>"; where is "file:line" or "--set:0". Control
// characters (a NUL in a key, say) are written as \xNN: the line arrives whole wherever it goes.
std::string line(const std::string& where, const std::string& key, const std::string& what,
                 const std::string& expected);
std::string printable(const std::string& s);       // control characters as \xNN

std::string join(const std::vector<std::string>& v, const char* sep = ", ");
std::string num(double x);                         // 6 significant digits, as iostream prints
std::string num(double x, int digits);             // as many significant digits as asked
std::string num_list(const std::vector<double>& v, int digits = 6);  // "[0.7, 0.3]"
std::string quote(const std::string& s);           // "\"s\""
std::string count(long long n, const std::string& noun);  // "1 rank", "3 ranks"
std::string gib(double bytes);                     // "1.5 GiB" (3 significant digits)

}  // namespace strait::msg
