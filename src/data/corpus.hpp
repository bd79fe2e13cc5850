// corpus.hpp — the training text and deterministic batch sampling.
// A corpus is the bytes of a file, or of every regular file under a folder (sorted by path,
// identical contents counted once). Batch offsets are a pure function of (seed, step, index),
// so every rank and every layout draws the same global batch, and the trace can record them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace strait {

struct Corpus {
  std::vector<uint8_t> bytes;
  std::vector<std::string> files;  // the files used, in order
  double entropy_bits = 0;         // unigram byte entropy
};

// Throws std::runtime_error naming the path when nothing readable is there.
Corpus load_corpus(const std::string& path);
double unigram_entropy_bits(const std::vector<uint8_t>& bytes);
// The corpus's size as load_corpus would find it, or, when a single file already holds `need`
// bytes, that file's size (>= need) without reading anything. Throws as load_corpus.
uint64_t corpus_bytes_at_least(const std::string& path, uint64_t need);

// Offsets of the `global_batch` sequences of `step`; each sequence needs seq_len + 1 bytes.
std::vector<int64_t> batch_offsets(const Corpus& c, uint64_t seed, int64_t step, int global_batch,
                                   int seq_len);

// Tokens and next-byte targets (B, seq_len) for offsets[begin, begin + count).
void make_tokens(const Corpus& c, const std::vector<int64_t>& offsets, int begin, int count,
                 int seq_len, std::vector<int32_t>& tokens, std::vector<int32_t>& targets);

}  // namespace strait
