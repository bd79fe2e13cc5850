// plan.cpp — encodings of the decision record (see plan.hpp).
#include "control/plan.hpp"

#include <sstream>

#include "core/wire.hpp"

namespace strait {

const char* to_string(Overlap o) { return o == Overlap::pipelined ? "pipelined" : "sequential"; }

std::vector<char> encode(const Plan& p) {
  wire::Writer w;
  w.put(p.made_after);
  w.put(p.effective);
  w.put(p.splits);
  w.put(p.shares);
  w.put(p.paths);
  w.put<uint64_t>(p.routes.size());
  for (const auto& rs : p.routes) {
    w.put<uint64_t>(rs.size());
    for (const auto& r : rs) w.put(r.path), w.put(r.fraction), w.put(r.gbps);
  }
  encode(w, p.sync);
  w.put(static_cast<int32_t>(p.overlap));
  return w.take();
}

Plan decode_plan(const std::vector<char>& bytes) {
  wire::Reader r(bytes);
  Plan p;
  r.get(p.made_after);
  r.get(p.effective);
  r.get(p.splits);
  r.get(p.shares);
  r.get(p.paths);
  p.routes.resize(r.get<uint64_t>());
  for (auto& rs : p.routes) {
    rs.resize(r.get<uint64_t>());
    for (auto& x : rs) r.get(x.path), r.get(x.fraction), r.get(x.gbps);
  }
  decode(r, p.sync);
  const auto o = r.get<int32_t>();
  if (o != 0 && o != 1) throw std::runtime_error("decision record: unknown overlap mode");
  p.overlap = static_cast<Overlap>(o);
  if (!r.done()) throw std::runtime_error("decision record: trailing bytes");
  return p;
}

std::string to_json(const Plan& p) {
  std::ostringstream js;
  js.precision(10);
  js << "{\"made_after\":" << p.made_after << ",\"effective\":" << p.effective << ",\"splits\":[";
  for (size_t d = 0; d < p.splits.size(); ++d) {
    js << (d ? "," : "") << "[";
    for (size_t i = 0; i < p.splits[d].size(); ++i) js << (i ? "," : "") << p.splits[d][i];
    js << "]";
  }
  js << "],\"shares\":[";
  for (size_t d = 0; d < p.shares.size(); ++d) js << (d ? "," : "") << p.shares[d];
  js << "],\"paths\":[";
  bool first = true;
  for (const auto& path : p.paths) {
    if (path.empty()) continue;
    js << (first ? "" : ",") << "[";
    for (size_t i = 0; i < path.size(); ++i) js << (i ? "," : "") << path[i];
    js << "]";
    first = false;
  }
  js << "]";
  bool any = false;
  for (size_t k = 0; k < p.routes.size(); ++k)
    for (const auto& rt : p.routes[k]) {
      js << (any ? "," : ",\"routes\":[") << "{\"path\":[";
      for (size_t i = 0; i < rt.path.size(); ++i) js << (i ? "," : "") << rt.path[i];
      js << "],\"fraction\":" << rt.fraction;
      if (rt.gbps > 0) js << ",\"gbps\":" << rt.gbps;
      js << "}";
      any = true;
    }
  if (any) js << "]";
  js << ",\"sync\":" << to_json(p.sync) << ",\"overlap\":\"" << to_string(p.overlap) << "\"}";
  return js.str();
}

}  // namespace strait
