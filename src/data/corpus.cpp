// corpus.cpp — loading, de-duplication, entropy and sampling.
#include "data/corpus.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

#include "core/rng.hpp"

namespace fs = std::filesystem;

namespace strait {

namespace {
std::vector<uint8_t> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// The files of a corpus, in the order they are read.
std::vector<fs::path> corpus_files(const std::string& path) {
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file(ec)) files.push_back(it->path());
    std::sort(files.begin(), files.end());
  } else if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
  } else {
    throw std::runtime_error("corpus " + path + ": no such file or folder");
  }
  return files;
}
}  // namespace

Corpus load_corpus(const std::string& path) {
  Corpus c;
  const std::vector<fs::path> files = corpus_files(path);
  std::set<uint64_t> seen;  // content hashes: the licences folder links the same text twice
  for (const auto& f : files) {
    auto data = read_file(f);
    if (data.empty()) continue;
    uint64_t h = 1469598103934665603ull;
    for (uint8_t b : data) h = (h ^ b) * 1099511628211ull;
    if (!seen.insert(h ^ data.size()).second) continue;
    c.files.push_back(f.string());
    c.bytes.insert(c.bytes.end(), data.begin(), data.end());
  }
  if (c.bytes.empty()) throw std::runtime_error("corpus " + path + ": no readable non-empty file");
  c.entropy_bits = unigram_entropy_bits(c.bytes);
  return c;
}

uint64_t corpus_bytes_at_least(const std::string& path, uint64_t need) {
  // De-duplication keeps at least the largest file, so one readable file of `need` bytes settles
  // it without reading anything; only a corpus of small files is loaded to count exactly.
  for (const fs::path& f : corpus_files(path)) {
    std::error_code ec;
    const uint64_t n = fs::file_size(f, ec);
    if (!ec && n >= need && std::ifstream(f, std::ios::binary)) return n;
  }
  return load_corpus(path).bytes.size();
}

double unigram_entropy_bits(const std::vector<uint8_t>& bytes) {
  std::vector<double> count(256, 0.0);
  for (uint8_t b : bytes) count[b] += 1;
  double h = 0;
  for (double n : count)
    if (n > 0) {
      const double p = n / bytes.size();
      h -= p * std::log2(p);
    }
  return h;
}

std::vector<int64_t> batch_offsets(const Corpus& c, uint64_t seed, int64_t step, int global_batch,
                                   int seq_len) {
  // Offsets 0 .. span: a corpus of exactly seq_len + 1 bytes holds one sequence.
  const int64_t span = static_cast<int64_t>(c.bytes.size()) - seq_len - 1;
  if (span < 0) throw std::runtime_error("corpus is shorter than seq_len + 1 bytes");
  std::vector<int64_t> off(global_batch);
  for (int i = 0; i < global_batch; ++i)
    off[i] = static_cast<int64_t>(hash3(seed, 0xDA7Aull + static_cast<uint64_t>(step), i) %
                                  static_cast<uint64_t>(span + 1));
  return off;
}

void make_tokens(const Corpus& c, const std::vector<int64_t>& offsets, int begin, int count,
                 int seq_len, std::vector<int32_t>& tokens, std::vector<int32_t>& targets) {
  tokens.resize(static_cast<size_t>(count) * seq_len);
  targets.resize(tokens.size());
  for (int b = 0; b < count; ++b) {
    const uint8_t* p = c.bytes.data() + offsets[begin + b];
    for (int t = 0; t < seq_len; ++t) {
      tokens[static_cast<size_t>(b) * seq_len + t] = p[t];
      targets[static_cast<size_t>(b) * seq_len + t] = p[t + 1];
    }
  }
}

}  // namespace strait
