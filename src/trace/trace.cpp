// trace.cpp — TraceWriter: the HDF5 trace of one run, written by rank 0 alone.
// Layout and units: docs/trace.md. Every table is a 1-D chunked dataset extended by the rows
// of each append; append_step is the commit point of a step: it writes the step's corpus
// offsets, flushes the whole file (H5Fflush), then writes the step's row and flushes again, so
// a killed run leaves every committed step readable with all its rows. No SWMR: a killed SWMR
// writer leaves a mark that needs h5clear.
// A new trace is written under a temporary name and renamed into place, so it never truncates a
// file; a resumed run continues the trace it resumes (drops the rows it computes again, appends
// a segment). A failed HDF5 call throws TraceError with HDF5's reason (a full disk, say), and so
// does a trace that was removed, replaced or truncated under the run: the run then stops cleanly
// instead of writing into nothing.
#include "trace/trace.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "core/check.hpp"
#include "trace/h5util.hpp"
#include "trace/trace_schema.hpp"

// Here a failed HDF5 call is the trace's failure, not a bug: throw, do not abort the job.
#undef H5_CHECK
#define H5_CHECK(call) ::strait::trace_ok((call), #call)

namespace strait {

namespace {

template <class T>
T trace_ok(T rc, const char* call) {
  if (rc < 0) {
    const std::string cause = h5::error_cause();
    throw TraceError(std::string(call) + " failed" + (cause.empty() ? "" : ": " + cause));
  }
  return rc;
}

constexpr hsize_t kChunkRows = 256;            // rows per chunk of the 1-D tables
constexpr hsize_t kOffsetsChunkBytes = 1 << 18;  // target chunk size of /offsets

h5::Dataset create_table(hid_t file, const char* name, hid_t file_type) {
  const hsize_t dims[1] = {0}, maxdims[1] = {H5S_UNLIMITED}, chunk[1] = {kChunkRows};
  h5::Space space(H5_CHECK(H5Screate_simple(1, dims, maxdims)));
  h5::Plist dcpl(H5_CHECK(H5Pcreate(H5P_DATASET_CREATE)));
  H5_CHECK(H5Pset_chunk(dcpl, 1, chunk));
  return h5::Dataset(
      H5_CHECK(H5Dcreate2(file, name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)));
}

// Extends a 1-D table by count rows and writes them from buf (count rows of mem_type).
void append_rows(hid_t ds, hid_t mem_type, hsize_t& rows, const void* buf, hsize_t count) {
  if (count == 0) return;
  const hsize_t new_rows[1] = {rows + count};
  H5_CHECK(H5Dset_extent(ds, new_rows));
  h5::Space file_space(H5_CHECK(H5Dget_space(ds)));
  const hsize_t start[1] = {rows}, n[1] = {count};
  H5_CHECK(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, n, nullptr));
  h5::Space mem_space(H5_CHECK(H5Screate_simple(1, n, nullptr)));
  H5_CHECK(H5Dwrite(ds, mem_type, mem_space, file_space, H5P_DEFAULT, buf));
  rows += count;
}

// JSON string literal of s.
std::string json(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += static_cast<char>(c);
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else o += static_cast<char>(c);
  }
  return o + "\"";
}

// One entry of /meta "segments": a stretch of the run between a start (or resume) and its end.
// `missing`: steps before first_step that the trace never got (a run killed after its checkpoint
// but before those steps' rows were written), "" when none.
std::string segment(int64_t first_step, const RunMeta& m, const std::string& status,
                    const std::string& missing = "") {
  return "{\"first_step\": " + std::to_string(first_step) + ", \"start_time\": " +
         json(m.start_time) + ", \"commit\": " + json(m.commit) + ", \"resumed_from\": " +
         json(m.resumed_from) + ", \"status\": " + json(status) +
         (missing.empty() ? "" : ", \"missing_steps\": " + missing) + "}";
}

// A table of an existing trace, keeping the rows before `from`: the first row whose `column`
// (step, or effective_step for /decisions) is `from` or later goes, and every row after it (rows
// are appended in that order). Returns the rows kept in `rows`.
h5::Dataset open_table(hid_t file, const char* name, const char* column, int64_t from,
                       hsize_t& rows) {
  if (!h5::exists(file, name)) throw std::runtime_error(std::string("no /") + name);
  h5::Dataset ds(H5_CHECK(H5Dopen2(file, name, H5P_DEFAULT)));
  h5::Space space(H5_CHECK(H5Dget_space(ds)));
  hsize_t n = 0;
  if (H5Sget_simple_extent_ndims(space) != 1) throw std::runtime_error(std::string("/") + name + " is not a table");
  H5_CHECK(H5Sget_simple_extent_dims(space, &n, nullptr));
  hsize_t keep = n;
  if (n > 0) {
    h5::Type col(H5_CHECK(H5Tcreate(H5T_COMPOUND, sizeof(int64_t))));
    H5_CHECK(H5Tinsert(col, column, 0, H5T_NATIVE_INT64));
    std::vector<int64_t> v(n);
    H5_CHECK(H5Dread(ds, col, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()));
    keep = static_cast<hsize_t>(std::find_if(v.begin(), v.end(), [&](int64_t x) { return x >= from; }) -
                                v.begin());
  }
  if (keep < n) {
    const hsize_t dims[1] = {keep};
    H5_CHECK(H5Dset_extent(ds, dims));
  }
  rows = keep;
  return ds;
}

void write_meta(hid_t meta, const RunMeta& m) {
  h5::set_attr(meta, "schema", trace_schema::kSchemaVersion);
  h5::set_attr(meta, "status", std::string("running"));
  h5::set_attr(meta, "config_text", m.config_text);
  h5::set_attr(meta, "config_file", m.config_file);
  h5::set_attr(meta, "version", m.version);
  h5::set_attr(meta, "commit", m.commit);
  h5::set_attr(meta, "start_time", m.start_time);
  h5::set_attr(meta, "run_name", m.run_name);
  h5::set_attr(meta, "hosts", m.hosts);
  h5::set_attr(meta, "backends", m.backends);
  h5::set_attr(meta, "rank_dc", std::vector<int32_t>(m.rank_dc.begin(), m.rank_dc.end()));
  h5::set_attr(meta, "dc_names", m.dc_names);
  h5::set_attr(meta, "world_size", static_cast<int32_t>(m.world_size));
  h5::set_attr(meta, "seed", static_cast<uint64_t>(m.seed));
  h5::set_attr(meta, "experts", static_cast<int32_t>(m.experts));
  h5::set_attr(meta, "params_per_expert", static_cast<int64_t>(m.params_per_expert));
  h5::set_attr(meta, "corpus_entropy_bits", m.corpus_entropy_bits);
  h5::set_attr(meta, "corpus_bytes", static_cast<int64_t>(m.corpus_bytes));
  h5::set_attr(meta, "resumed_from", m.resumed_from);
  h5::set_attr(meta, "mpi_thread_level", static_cast<int32_t>(m.mpi_thread_level));
  h5::set_attr(meta, "clock_offset_ms", m.clock_offset_ms);
  h5::set_attr(meta, "clock_error_ms", m.clock_error_ms);
}

}  // namespace

struct TraceWriter::Impl {
  std::string path;
  // Declared first so it is closed last.
  h5::File file;
  h5::Group meta;
  h5::Dataset steps, offsets, ranks, links, decisions, forecasts;
  h5::Type step_t, rank_t, link_t, decision_t, forecast_t;  // in-memory row types
  hsize_t n_steps = 0, n_offsets = 0, n_ranks = 0, n_links = 0, n_decisions = 0, n_forecasts = 0;
  hsize_t offsets_width = 0;
  bool closed = false;
  int64_t last_step = -1;
  std::vector<std::string> segments;  // /meta "segments", the last one this run's
  RunMeta meta_now;                   // for the last segment's entry
  int64_t first_step = 0;
  std::string missing;                // this segment's "missing_steps", or ""
  // The file the run writes: dev/ino of the path once it is in place.
  bool placed = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;  // after the last flush: only this writer makes it grow, nobody shrinks it

  void check_open(const char* what) const {
    STRAIT_CHECK(!closed, std::string(what) + " after close() on trace " + path);
  }
  void place() {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw TraceError("cannot stat " + path + " after creating it");
    dev = st.st_dev, ino = st.st_ino, size = st.st_size, placed = true;
  }
  // Before a flush: the path is still this file, and nobody cut it shorter than it was after the
  // last one (HDF5 itself shrinks a file only while it flushes). after_flush() notes its size.
  void check_identity() const {
    if (!placed) return;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || st.st_dev != dev || st.st_ino != ino)
      throw TraceError("the file was removed or replaced by another process");
    if (st.st_size < size)
      throw TraceError("the file was truncated by another process (" + std::to_string(st.st_size) +
                       " bytes, " + std::to_string(size) + " were written)");
  }
  void after_flush() {
    struct stat st {};
    if (placed && ::stat(path.c_str(), &st) == 0) size = st.st_size;
  }
};

TraceWriter::TraceWriter(const std::string& path, bool force, const RunMeta& meta)
    : impl_(std::make_unique<Impl>()) {
  namespace fs = std::filesystem;
  Impl& t = *impl_;
  t.path = path;
  std::error_code ec;
  if (fs::exists(path, ec) && !force)
    throw std::runtime_error("trace " + path + " exists; pass --force to overwrite");
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec)
      throw std::runtime_error("cannot create folder " + parent.string() + " for trace " + path +
                               ": " + ec.message());
  }
  // Written beside the path and renamed onto it once its metadata is on disk: a trace that
  // cannot be started leaves whatever was at the path, and nothing is ever truncated.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  fs::remove(tmp, ec);  // a dead run's, with our pid
  {
    h5::Plist fapl = h5::file_access(/*locking=*/true);
    h5::Quiet quiet;  // the failure is reported below, with the path
    t.file = h5::File(H5Fcreate(tmp.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl));
    if (!t.file.valid()) {
      const std::string cause = h5::error_cause();
      throw std::runtime_error("cannot create trace " + path + " (" + tmp + ")" +
                               (cause.empty() ? "" : ": " + cause));
    }
  }
  t.meta_now = meta;
  t.segments = {segment(0, meta, "running")};

  t.step_t = trace_schema::step_type(false);
  t.rank_t = trace_schema::rank_type(false);
  t.link_t = trace_schema::link_type(false);
  t.decision_t = trace_schema::decision_type(false);
  t.forecast_t = trace_schema::forecast_type(false);

  try {
    h5::Quiet quiet;  // failures are thrown with HDF5's reason
    t.meta = h5::Group(H5_CHECK(H5Gcreate2(t.file, "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
    write_meta(t.meta, meta);
    h5::set_attr(t.meta, "reason", std::string());
    h5::set_attr(t.meta, "segments", t.segments);
    t.steps = create_table(t.file, "steps", trace_schema::step_type(true));
    t.ranks = create_table(t.file, "ranks", trace_schema::rank_type(true));
    t.links = create_table(t.file, "links", trace_schema::link_type(true));
    t.decisions = create_table(t.file, "decisions", trace_schema::decision_type(true));
    t.forecasts = create_table(t.file, "forecasts", trace_schema::forecast_type(true));
    // /offsets is created by the first append_step, when the global batch size is known.
    H5_CHECK(H5Fflush(t.file, H5F_SCOPE_GLOBAL));
    fs::rename(tmp, path, ec);
    if (ec) throw TraceError("cannot rename " + tmp + " onto it: " + ec.message());
    t.place();
  } catch (const std::exception& e) {
    t = Impl{};  // closes what is open (HDF5 may refuse to flush a file on a full disk)
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot create trace " + path + ": " + e.what());
  }
}

std::string TraceWriter::why_not_continue(const std::string& path, uint64_t seed,
                                          const std::vector<std::string>& dc_names,
                                          int world_size) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return "not a regular file";
  try {
    h5::Quiet quiet;
    h5::Plist fapl = h5::file_access(/*locking=*/false);
    h5::File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl));
    if (!file.valid()) return "not an HDF5 file";
    if (!h5::exists(file, "meta") || !h5::exists(file, "steps")) return "not a strait trace (no /meta or /steps)";
    h5::Group meta(H5_CHECK(H5Gopen2(file, "meta", H5P_DEFAULT)));
    // The same run: what the rows mean must not change under them.
    const int64_t schema = h5::has_attr(meta, "schema") ? h5::get_attr_i64(meta, "schema") : 0;
    if (schema != trace_schema::kSchemaVersion)
      return "it has trace schema " + std::to_string(schema) + ", this strait writes " +
             std::to_string(trace_schema::kSchemaVersion);
    if (!h5::has_attr(meta, "seed") || h5::get_attr_u64(meta, "seed") != seed)
      return "it was written with another seed";
    if (!h5::has_attr(meta, "dc_names") || h5::get_attr_strings(meta, "dc_names") != dc_names ||
        !h5::has_attr(meta, "world_size") || h5::get_attr_i64(meta, "world_size") != world_size)
      return "it was written by a run of other datacenters or ranks";
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TraceWriter::TraceWriter(const std::string& path, const RunMeta& meta, const TraceContinue& c)
    : impl_(std::make_unique<Impl>()) {
  Impl& t = *impl_;
  t.path = path;
  try {
    if (const std::string why = why_not_continue(path, meta.seed, meta.dc_names, meta.world_size);
        !why.empty())
      throw std::runtime_error(why);
    h5::Quiet quiet;
    {
      h5::Plist fapl = h5::file_access(/*locking=*/true);
      t.file = h5::File(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl));
      if (!t.file.valid()) throw std::runtime_error("not an HDF5 file, or in use: " + h5::error_cause());
    }
    if (!h5::exists(t.file, "meta") || !h5::exists(t.file, "steps"))
      throw std::runtime_error("not a strait trace (no /meta or /steps)");
    t.meta = h5::Group(H5_CHECK(H5Gopen2(t.file, "meta", H5P_DEFAULT)));
    t.step_t = trace_schema::step_type(false);
    t.rank_t = trace_schema::rank_type(false);
    t.link_t = trace_schema::link_type(false);
    t.decision_t = trace_schema::decision_type(false);
    t.forecast_t = trace_schema::forecast_type(false);
    t.steps = open_table(t.file, "steps", "step", c.from_step, t.n_steps);
    t.ranks = open_table(t.file, "ranks", "step", c.from_step, t.n_ranks);
    t.links = open_table(t.file, "links", "step", c.from_step, t.n_links);
    t.decisions = open_table(t.file, "decisions", "effective_step", c.from_step, t.n_decisions);
    t.forecasts = open_table(t.file, "forecasts", "step", c.from_step, t.n_forecasts);
    if (t.n_steps > 0) {  // the last step kept
      h5::Type col(H5_CHECK(H5Tcreate(H5T_COMPOUND, sizeof(int64_t))));
      H5_CHECK(H5Tinsert(col, "step", 0, H5T_NATIVE_INT64));
      h5::Space fs_(H5_CHECK(H5Dget_space(t.steps)));
      const hsize_t start[1] = {t.n_steps - 1}, one[1] = {1};
      H5_CHECK(H5Sselect_hyperslab(fs_, H5S_SELECT_SET, start, nullptr, one, nullptr));
      h5::Space ms(H5_CHECK(H5Screate_simple(1, one, nullptr)));
      H5_CHECK(H5Dread(t.steps, col, ms, fs_, H5P_DEFAULT, &t.last_step));
    }
    if (h5::exists(t.file, "offsets")) {  // one row per /steps row
      t.offsets = h5::Dataset(H5_CHECK(H5Dopen2(t.file, "offsets", H5P_DEFAULT)));
      h5::Space sp(H5_CHECK(H5Dget_space(t.offsets)));
      hsize_t dims[2] = {0, 0};
      H5_CHECK(H5Sget_simple_extent_dims(sp, dims, nullptr));
      t.offsets_width = dims[1];
      dims[0] = t.n_steps;
      H5_CHECK(H5Dset_extent(t.offsets, dims));
      t.n_offsets = t.n_steps;
    }
    // /meta: this segment's attributes (hosts, backends, clock offsets, config), the run's start.
    if (h5::has_attr(t.meta, "segments")) {
      t.segments = h5::get_attr_strings(t.meta, "segments");
    } else {  // a trace from before segments: its run as one
      const std::string was =
          h5::has_attr(t.meta, "status") ? h5::get_attr_string(t.meta, "status") : "running";
      t.segments = {"{\"first_step\": 0, \"status\": " + json(was) + "}"};
    }
    const std::string first_start =
        h5::has_attr(t.meta, "start_time") ? h5::get_attr_string(t.meta, "start_time") : meta.start_time;
    if (!t.segments.empty() && t.segments.back().find("\"status\": \"running\"") != std::string::npos)
      t.segments.back().replace(t.segments.back().rfind("\"running\""), 9, "\"killed\"");
    t.first_step = c.from_step;
    t.meta_now = meta;
    t.meta_now.resumed_from = c.resumed_from;
    if (t.last_step + 1 < c.from_step) {
      // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "[" + string&&.
      t.missing = "[";
      t.missing += std::to_string(t.last_step + 1);
      t.missing += ", ";
      t.missing += std::to_string(c.from_step - 1);
      t.missing += "]";
    }
    t.segments.push_back(segment(c.from_step, t.meta_now, "running", t.missing));
    write_meta(t.meta, t.meta_now);
    h5::set_attr(t.meta, "start_time", first_start);
    h5::set_attr(t.meta, "reason", std::string());
    h5::set_attr(t.meta, "segments", t.segments);
    H5_CHECK(H5Fflush(t.file, H5F_SCOPE_GLOBAL));
    t.place();
  } catch (const std::exception& e) {
    t = Impl{};
    throw std::runtime_error("trace " + path + " cannot be continued: " + e.what());
  }
}

TraceWriter::~TraceWriter() = default;  // handles close; /meta status stays "running"

void TraceWriter::append_step(const StepRow& row, const std::vector<int64_t>& offsets) {
  Impl& t = *impl_;
  t.check_open("append_step");
  if (!t.offsets.valid()) {
    t.offsets_width = offsets.size();
    const hsize_t width = t.offsets_width;
    hsize_t chunk_rows = kOffsetsChunkBytes / (sizeof(int64_t) * std::max<hsize_t>(width, 1));
    chunk_rows = std::clamp<hsize_t>(chunk_rows, 1, kChunkRows);
    const hsize_t dims[2] = {0, width}, maxdims[2] = {H5S_UNLIMITED, H5S_UNLIMITED};
    const hsize_t chunk[2] = {chunk_rows, std::max<hsize_t>(width, 1)};
    h5::Space space(H5_CHECK(H5Screate_simple(2, dims, maxdims)));
    h5::Plist dcpl(H5_CHECK(H5Pcreate(H5P_DATASET_CREATE)));
    H5_CHECK(H5Pset_chunk(dcpl, 2, chunk));
    t.offsets = h5::Dataset(H5_CHECK(
        H5Dcreate2(t.file, "offsets", H5T_STD_I64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)));
  }
  STRAIT_CHECK(offsets.size() == t.offsets_width,
               "step " + std::to_string(row.step) + " has " + std::to_string(offsets.size()) +
                   " corpus offsets, the trace's /offsets rows have " +
                   std::to_string(t.offsets_width));
  // Offsets first, then the step row: a visible step row always has its offsets.
  const hsize_t dims[2] = {t.n_offsets + 1, t.offsets_width};
  H5_CHECK(H5Dset_extent(t.offsets, dims));
  if (t.offsets_width > 0) {
    h5::Space file_space(H5_CHECK(H5Dget_space(t.offsets)));
    const hsize_t start[2] = {t.n_offsets, 0}, count[2] = {1, t.offsets_width};
    H5_CHECK(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr));
    h5::Space mem_space(H5_CHECK(H5Screate_simple(2, count, nullptr)));
    H5_CHECK(H5Dwrite(t.offsets, H5T_NATIVE_INT64, mem_space, file_space, H5P_DEFAULT,
                      offsets.data()));
  }
  ++t.n_offsets;
  // The step's rows (offsets, and the ranks and links appended before) reach the file before
  // the step row exists: calling them in order is not enough, since HDF5 writes its cached
  // metadata back in its own order, so a job killed inside one flush could leave /steps one
  // row longer than /offsets (seen in CI; test_trace KilledAtEveryWrite...). Two flushes a step.
  flush();
  append_rows(t.steps, t.step_t, t.n_steps, &row, 1);
  t.last_step = row.step;
  flush();  // the commit point of the step
}

void TraceWriter::append_ranks(const std::vector<RankRow>& rows) {
  impl_->check_open("append_ranks");
  append_rows(impl_->ranks, impl_->rank_t, impl_->n_ranks, rows.data(), rows.size());
}

void TraceWriter::append_links(const std::vector<LinkRow>& rows) {
  impl_->check_open("append_links");
  append_rows(impl_->links, impl_->link_t, impl_->n_links, rows.data(), rows.size());
}

void TraceWriter::append_decision(const DecisionRow& row) {
  impl_->check_open("append_decision");
  const trace_schema::DecisionRec rec{row.step, row.effective_step, row.slot.c_str(),
                                      row.policy.c_str(), row.detail.c_str()};
  append_rows(impl_->decisions, impl_->decision_t, impl_->n_decisions, &rec, 1);
}

void TraceWriter::append_forecasts(const std::vector<ForecastRow>& rows) {
  impl_->check_open("append_forecasts");
  std::vector<trace_schema::ForecastRec> recs;
  for (const ForecastRow& r : rows)
    recs.push_back({r.step, r.rank, r.made_after, r.forecast_ms, r.load_ms, r.model.c_str(),
                    r.why.c_str(), r.c, r.p});
  append_rows(impl_->forecasts, impl_->forecast_t, impl_->n_forecasts, recs.data(), recs.size());
}

void TraceWriter::flush() {
  impl_->check_open("flush");
  h5::Quiet quiet;  // a failure is thrown with HDF5's reason
  impl_->check_identity();
  H5_CHECK(H5Fflush(impl_->file, H5F_SCOPE_GLOBAL));
  impl_->after_flush();
}

int64_t TraceWriter::last_step() const { return impl_->last_step; }

void TraceWriter::close(const std::string& status, const std::string& reason) {
  Impl& t = *impl_;
  if (t.closed) return;
  try {
    h5::Quiet quiet;
    h5::set_attr(t.meta, "status", status);
    h5::set_attr(t.meta, "reason", reason);
    if (!t.segments.empty()) {
      t.segments.back() = segment(t.first_step, t.meta_now, status, t.missing);
      h5::set_attr(t.meta, "segments", t.segments);
    }
  } catch (const std::exception& e) {
    throw TraceError(std::string("cannot record status ") + status + ": " + e.what());
  }
  flush();
  t.closed = true;
  t.step_t.reset();
  t.rank_t.reset();
  t.link_t.reset();
  t.decision_t.reset();
  t.forecast_t.reset();
  H5_CHECK(t.steps.reset());
  H5_CHECK(t.offsets.reset());
  H5_CHECK(t.ranks.reset());
  H5_CHECK(t.links.reset());
  H5_CHECK(t.decisions.reset());
  H5_CHECK(t.forecasts.reset());
  H5_CHECK(t.meta.reset());
  H5_CHECK(t.file.reset());
}

}  // namespace strait
