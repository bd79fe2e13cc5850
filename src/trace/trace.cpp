// trace.cpp — TraceWriter: the HDF5 trace of one run, written by rank 0 alone.
// Layout and units: docs/trace.md. Every table is a 1-D chunked dataset extended by the rows
// of each append; append_step is the commit point of a step: it writes the step's row and
// corpus offsets and flushes the whole file (H5Fflush), so a killed run leaves every
// committed step readable. No SWMR: a killed SWMR writer leaves a mark that needs h5clear.
#include "trace/trace.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "core/check.hpp"
#include "trace/h5util.hpp"
#include "trace/trace_schema.hpp"

namespace strait {

namespace {

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

  void check_open(const char* what) const {
    STRAIT_CHECK(!closed, std::string(what) + " after close() on trace " + path);
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
  {
    h5::Plist fapl = h5::file_access(/*locking=*/true);
    h5::Quiet quiet;  // the failure is reported below, with the path
    t.file = h5::File(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
  }
  if (!t.file.valid())
    throw std::runtime_error("cannot create trace " + path +
                             " (is the folder writable, or is the file open elsewhere?)");

  t.step_t = trace_schema::step_type(false);
  t.rank_t = trace_schema::rank_type(false);
  t.link_t = trace_schema::link_type(false);
  t.decision_t = trace_schema::decision_type(false);
  t.forecast_t = trace_schema::forecast_type(false);

  t.meta = h5::Group(H5_CHECK(H5Gcreate2(t.file, "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  try {
    write_meta(t.meta, meta);
    t.steps = create_table(t.file, "steps", trace_schema::step_type(true));
    t.ranks = create_table(t.file, "ranks", trace_schema::rank_type(true));
    t.links = create_table(t.file, "links", trace_schema::link_type(true));
    t.decisions = create_table(t.file, "decisions", trace_schema::decision_type(true));
    t.forecasts = create_table(t.file, "forecasts", trace_schema::forecast_type(true));
  } catch (const std::exception& e) {
    STRAIT_FATAL("trace " + path + ": " + e.what());
  }
  // /offsets is created by the first append_step, when the global batch size is known.
  flush();
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
  append_rows(t.steps, t.step_t, t.n_steps, &row, 1);
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
  H5_CHECK(H5Fflush(impl_->file, H5F_SCOPE_GLOBAL));
}

void TraceWriter::close(const std::string& status) {
  Impl& t = *impl_;
  if (t.closed) return;
  try {
    h5::set_attr(t.meta, "status", status);
  } catch (const std::exception& e) {
    STRAIT_FATAL("trace " + t.path + ": " + e.what());
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
