// trace_reader.cpp — read_trace(): a strait trace back into vectors (see trace_reader.hpp).
#include "trace/trace_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "trace/h5util.hpp"
#include "trace/trace_schema.hpp"

namespace strait {

namespace {

// Rows of a 1-D compound table, converted to mem_type (fields matched by name).
template <class T>
std::vector<T> read_table(hid_t file, const char* name, hid_t mem_type) {
  if (!h5::exists(file, name)) throw std::runtime_error(std::string("missing dataset /") + name);
  const std::string what = std::string("cannot read /") + name;
  h5::Dataset ds(h5::check(H5Dopen2(file, name, H5P_DEFAULT), what));
  h5::Space space(h5::check(H5Dget_space(ds), what));
  if (H5Sget_simple_extent_ndims(space) != 1) throw std::runtime_error(what + ": not 1-D");
  hsize_t n = 0;
  h5::check(H5Sget_simple_extent_dims(space, &n, nullptr), what);
  std::vector<T> rows(n);
  if (n > 0) h5::check(H5Dread(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), what);
  return rows;
}

// Optional string/number attributes: an older or partial /meta leaves the default.
void opt(hid_t meta, const char* name, std::string& v) {
  if (h5::has_attr(meta, name)) v = h5::get_attr_string(meta, name);
}
void opt(hid_t meta, const char* name, std::vector<std::string>& v) {
  if (h5::has_attr(meta, name)) v = h5::get_attr_strings(meta, name);
}
template <class T>
void opt_int(hid_t meta, const char* name, T& v) {
  if (h5::has_attr(meta, name)) v = static_cast<T>(h5::get_attr_i64(meta, name));
}

RunMeta read_meta(hid_t meta) {
  RunMeta m;
  opt(meta, "config_text", m.config_text);
  opt(meta, "config_file", m.config_file);
  opt(meta, "version", m.version);
  opt(meta, "commit", m.commit);
  opt(meta, "start_time", m.start_time);
  opt(meta, "run_name", m.run_name);
  opt(meta, "hosts", m.hosts);
  opt(meta, "backends", m.backends);
  if (h5::has_attr(meta, "rank_dc")) {
    const std::vector<int32_t> v = h5::get_attr_i32s(meta, "rank_dc");
    m.rank_dc.assign(v.begin(), v.end());
  }
  opt(meta, "dc_names", m.dc_names);
  opt_int(meta, "world_size", m.world_size);
  if (h5::has_attr(meta, "seed")) m.seed = h5::get_attr_u64(meta, "seed");
  opt_int(meta, "experts", m.experts);
  opt_int(meta, "params_per_expert", m.params_per_expert);
  if (h5::has_attr(meta, "corpus_entropy_bits"))
    m.corpus_entropy_bits = h5::get_attr_f64(meta, "corpus_entropy_bits");
  opt_int(meta, "corpus_bytes", m.corpus_bytes);
  opt(meta, "resumed_from", m.resumed_from);
  opt_int(meta, "mpi_thread_level", m.mpi_thread_level);
  if (h5::has_attr(meta, "clock_offset_ms"))
    m.clock_offset_ms = h5::get_attr_f64s(meta, "clock_offset_ms");
  if (h5::has_attr(meta, "clock_error_ms"))
    m.clock_error_ms = h5::get_attr_f64s(meta, "clock_error_ms");
  return m;
}

std::vector<DecisionRow> read_decisions(hid_t file) {
  h5::Type mt = trace_schema::decision_type(false);
  std::vector<trace_schema::DecisionRec> recs =
      read_table<trace_schema::DecisionRec>(file, "decisions", mt);
  std::vector<DecisionRow> out;
  out.reserve(recs.size());
  for (const auto& r : recs) {
    out.push_back(DecisionRow{r.step, r.effective_step, r.slot ? r.slot : "",
                              r.policy ? r.policy : "", r.detail ? r.detail : ""});
  }
  if (!recs.empty()) {
    const hsize_t n[1] = {recs.size()};
    h5::Space space(H5Screate_simple(1, n, nullptr));
    if (space.valid()) h5::reclaim(mt, space, recs.data());
  }
  return out;
}

// /forecasts (schema 4 on; absent in older traces).
std::vector<ForecastRow> read_forecasts(hid_t file) {
  if (!h5::exists(file, "forecasts")) return {};
  h5::Type mt = trace_schema::forecast_type(false);
  std::vector<trace_schema::ForecastRec> recs =
      read_table<trace_schema::ForecastRec>(file, "forecasts", mt);
  std::vector<ForecastRow> out;
  out.reserve(recs.size());
  for (const auto& r : recs)
    out.push_back(ForecastRow{r.step, r.rank, r.made_after, r.forecast_ms, r.load_ms,
                              r.model ? r.model : "", r.why ? r.why : "", r.c, r.p});
  if (!recs.empty()) {
    const hsize_t n[1] = {recs.size()};
    h5::Space space(H5Screate_simple(1, n, nullptr));
    if (space.valid()) h5::reclaim(mt, space, recs.data());
  }
  return out;
}

void read_offsets(hid_t file, TraceData& d) {
  if (!h5::exists(file, "offsets")) return;  // created with the first step
  const std::string what = "cannot read /offsets";
  h5::Dataset ds(h5::check(H5Dopen2(file, "offsets", H5P_DEFAULT), what));
  h5::Space space(h5::check(H5Dget_space(ds), what));
  if (H5Sget_simple_extent_ndims(space) != 2) throw std::runtime_error(what + ": not 2-D");
  hsize_t dims[2] = {0, 0};
  h5::check(H5Sget_simple_extent_dims(space, dims, nullptr), what);
  const hsize_t rows = std::min<hsize_t>(dims[0], d.steps.size());
  d.offsets_width = static_cast<int64_t>(dims[1]);
  d.offsets.assign(rows * dims[1], 0);
  if (rows == 0 || dims[1] == 0) return;
  const hsize_t start[2] = {0, 0}, count[2] = {rows, dims[1]};
  h5::check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr), what);
  h5::Space mem(h5::check(H5Screate_simple(2, count, nullptr), what));
  h5::check(H5Dread(ds, H5T_NATIVE_INT64, mem, space, H5P_DEFAULT, d.offsets.data()), what);
}

template <class Row>
void drop_uncommitted(std::vector<Row>& rows, int64_t last_step) {
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](const Row& r) { return r.step > last_step; }),
             rows.end());
}

}  // namespace

TraceData read_trace(const std::string& path, bool with_offsets) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw std::runtime_error("trace " + path + " does not exist");
  // HDF5 would open a FIFO and wait for a writer forever.
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error("trace " + path + " is not a regular file");
  TraceData d;
  try {
    h5::File file;
    {
      h5::Quiet quiet;
      h5::Plist fapl = h5::file_access(/*locking=*/false);
      file = h5::File(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl));
      if (!file.valid()) {
        // When this process itself holds the file open (a TraceWriter, which locks), HDF5
        // shares that open file and refuses a different locking flag; open it as the writer
        // did. From another process this would fail on the lock, hence the order.
        h5::Plist locking = h5::file_access(/*locking=*/true);
        file = h5::File(H5Fopen(path.c_str(), H5F_ACC_RDONLY, locking));
      }
    }
    if (!file.valid()) throw std::runtime_error("not an HDF5 file, or unreadable");
    h5::Quiet quiet;  // every failure below becomes an exception naming the item
    if (!h5::exists(file, "meta") || !h5::exists(file, "steps"))
      throw std::runtime_error("not a strait trace (no /meta or /steps)");
    {
      h5::Group meta(h5::check(H5Gopen2(file, "meta", H5P_DEFAULT), "cannot open /meta"));
      d.meta = read_meta(meta);
      d.status = h5::has_attr(meta, "status") ? h5::get_attr_string(meta, "status") : "unknown";
      if (h5::has_attr(meta, "reason")) d.reason = h5::get_attr_string(meta, "reason");
      if (h5::has_attr(meta, "segments")) d.segments = h5::get_attr_strings(meta, "segments");
      if (h5::has_attr(meta, "schema"))
        d.schema = static_cast<int>(h5::get_attr_i64(meta, "schema"));
    }
    {
      h5::Type t = trace_schema::step_type(false);
      d.steps = read_table<StepRow>(file, "steps", t);
    }
    if (with_offsets) {
      read_offsets(file, d);
      // A live writer extends /offsets before /steps: keep both at the same length.
      if (d.offsets_width > 0)
        d.steps.resize(std::min<size_t>(d.steps.size(), d.offsets.size() / d.offsets_width));
    }
    {
      h5::Type t = trace_schema::rank_type(false);
      d.ranks = read_table<RankRow>(file, "ranks", t);
    }
    {
      h5::Type t = trace_schema::link_type(false);
      d.links = read_table<LinkRow>(file, "links", t);
    }
    d.decisions = read_decisions(file);
    d.forecasts = read_forecasts(file);
  } catch (const std::exception& e) {
    throw std::runtime_error("trace " + path + ": " + e.what());
  }
  const int64_t last = d.steps.empty() ? INT64_MIN : d.steps.back().step;
  drop_uncommitted(d.ranks, last);
  drop_uncommitted(d.links, last);
  drop_uncommitted(d.decisions, last);
  drop_uncommitted(d.forecasts, last);
  return d;
}

}  // namespace strait
