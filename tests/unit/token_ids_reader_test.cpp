// The token-id JSONL trace: detected by its keys, timestamps in ns, the
// prompt's full 16-token blocks given chained ids (BATCHING.md section 3),
// checked on a file made by hand and on the three llmservingsim workloads.
#include "trace/token_ids_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <vector>

#include "core/input_error.hpp"
#include "test_support.hpp"
#include "trace/trace_reader.hpp"

namespace infersim {
namespace {
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::vector<std::uint32_t> run(std::uint32_t first, std::uint32_t n) {
  std::vector<std::uint32_t> tokens(n);
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

std::vector<std::uint32_t> operator+(std::vector<std::uint32_t> a,
                                     const std::vector<std::uint32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string record(std::int64_t t_ns, const std::vector<std::uint32_t>& prompt,
                   std::uint32_t output) {
  std::string ids;
  for (const std::uint32_t token : prompt)
    ids += (ids.empty() ? "" : ", ") + std::to_string(token);
  return "{\"input_toks\": " + std::to_string(prompt.size()) +
         ", \"output_toks\": " + std::to_string(output) +
         ", \"arrival_time_ns\": " + std::to_string(t_ns) + ", \"input_tok_ids\": [" + ids +
         "], \"output_tok_ids\": [" + std::string(output > 0 ? "5" : "") + "]}\n";
}

class TokenIdsReader : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_dir(); }
  std::string file(const std::string& name, const std::string& bytes) {
    return test::write_file(dir_ / name, bytes).string();
  }
  static Trace read(const std::string& path) {
    TraceSource source;
    source.path = path;
    return read_trace(source);
  }
  // The message of the InputError reading `path` must throw.
  static std::string error_of(const std::string& path) {
    return test::error_of([&] { read(path); });
  }
  static std::vector<std::uint32_t> ids(const Trace& trace, std::size_t i) {
    const auto span = trace.hash_ids_of(i);
    return {span.begin(), span.end()};
  }
  std::filesystem::path dir_;
};

TEST_F(TokenIdsReader, FullBlocksGetChainedIds) {
  const auto a = run(1, 16);
  auto a2 = a;
  a2.back() = 1000;  // A with its last token changed
  const auto b = run(17, 16);
  // Ids by first appearance: (-, A) 0, (0, B) 1, (-, B) 2, (2, A) 3, (0, A) 4,
  // (-, A') 5, (5, B) 6.
  const std::string text = record(100, a + b + run(99, 1), 3) +  // [0, 1], tail of 1 token
                           record(200, a + b, 1) +               // [0, 1]: same tokens, same ids
                           record(300, b + a, 1) +               // [2, 3]: B first is not B after A
                           record(400, a + a, 1) +               // [0, 4]
                           record(500, run(1, 15), 1) +          // []: no full block
                           record(600, a2 + b, 0);               // [5, 6]: B after A' is new
  const Trace trace = read(file("hand.jsonl", text));
  EXPECT_EQ(trace.format, "token-ids-jsonl");
  EXPECT_EQ(trace.timestamp_unit, "ns");
  EXPECT_EQ(trace.block_id_tokens, 16u);
  ASSERT_EQ(trace.records.size(), 6u);
  EXPECT_EQ(trace.origin_ns, 100);
  EXPECT_EQ(trace.records[5].offset_ns, 500);
  EXPECT_EQ(trace.records[0].context_tokens, 33u);
  EXPECT_EQ(trace.records[0].generated_tokens, 3u);
  EXPECT_THAT(ids(trace, 0), ElementsAre(0u, 1u));
  EXPECT_THAT(ids(trace, 1), ElementsAre(0u, 1u));
  EXPECT_THAT(ids(trace, 2), ElementsAre(2u, 3u));
  EXPECT_THAT(ids(trace, 3), ElementsAre(0u, 4u));
  EXPECT_THAT(ids(trace, 4), IsEmpty());
  EXPECT_THAT(ids(trace, 5), ElementsAre(5u, 6u));
}

TEST_F(TokenIdsReader, IdsFollowTheirRecordThroughTheSort) {
  const Trace trace =
      read(file("late.jsonl", record(900, run(1, 32), 1) + record(100, run(50, 16), 1)));
  EXPECT_EQ(trace.out_of_order, 1u);
  EXPECT_EQ(trace.records[0].context_tokens, 16u);
  EXPECT_THAT(ids(trace, 0), ElementsAre(2u));
  EXPECT_THAT(ids(trace, 1), ElementsAre(0u, 1u));
}

TEST_F(TokenIdsReader, PromptBlocksAreExactNotHashed) {
  ChainedBlockIds blocks;
  std::array<std::uint32_t, 16> tokens{};
  // Every block after the same previous block, differing in one token: all distinct.
  for (std::uint32_t i = 0; i < 1000; ++i) {
    tokens[i % 16] = i;
    EXPECT_EQ(blocks.id_of(ChainedBlockIds::kNone, tokens), i);
  }
  EXPECT_EQ(blocks.id_of(7, tokens), 1000u);  // the same tokens after another block
  EXPECT_EQ(blocks.size(), 1001u);
}

TEST_F(TokenIdsReader, BadRecordsNameTheirLineAndField) {
  const std::string good = record(0, run(1, 4), 1);
  const auto mismatch =
      file("n.jsonl", good + R"({"input_toks": 4, "output_toks": 1, "arrival_time_ns": 5, )"
                             R"("input_tok_ids": [1, 2, 3], "output_tok_ids": [1]})"
                             "\n");
  EXPECT_EQ(error_of(mismatch),
            mismatch + ":2: input_tok_ids: holds 3 token ids, input_toks says 4");
  const auto missing =
      file("m.jsonl", good + R"({"input_toks": 1, "output_toks": 1, "input_tok_ids": [1]})"
                             "\n");
  EXPECT_EQ(error_of(missing), missing + ":2: arrival_time_ns: missing from the object");
  const auto negative =
      file("neg.jsonl", good + R"({"input_toks": 1, "output_toks": 1, "arrival_time_ns": 5, )"
                               R"("input_tok_ids": [-1]})"
                               "\n");
  EXPECT_THAT(error_of(negative),
              StartsWith(negative + ":2: input_tok_ids: expected a list of token ids"));
  const auto bad_output =
      file("out.jsonl", good + R"({"input_toks": 1, "output_toks": 1, "arrival_time_ns": 5, )"
                               R"("input_tok_ids": [1], "output_tok_ids": [1,,2]})"
                               "\n");
  EXPECT_THAT(error_of(bad_output), StartsWith(bad_output + ":2: output_tok_ids[1]: "));
}

// The workloads as a Python reference counts them (json.load each line; a map
// from (previous id, 16 tokens) to ids): blocks and distinct ids per file.
TEST_F(TokenIdsReader, ReadsTheLlmservingsimWorkloads) {
  const std::filesystem::path dir = test::measured_path("workloads");
  ASSERT_TRUE(std::filesystem::is_directory(dir));
  const struct {
    const char* name;
    std::size_t blocks, distinct;
  } kFiles[] = {{"sharegpt-llama-3.1-8b-300-sps10.jsonl", 15942, 14722},
                {"sharegpt-qwen3-30b-a3b-300-sps10.jsonl", 16034, 14756},
                {"sharegpt-qwen3-32b-300-sps10.jsonl", 16034, 14756}};
  for (const auto& f : kFiles) {
    SCOPED_TRACE(f.name);
    const Trace trace = read((dir / f.name).string());
    EXPECT_EQ(trace.format, "token-ids-jsonl");
    ASSERT_EQ(trace.records.size(), 300u);
    EXPECT_EQ(trace.out_of_order, 0u);
    EXPECT_EQ(trace.origin_ns, 46'926'808);
    EXPECT_EQ(trace.records.back().offset_ns, 29'183'763'203 - 46'926'808);
    EXPECT_EQ(trace.hash_ids.size(), f.blocks);
    EXPECT_EQ(std::set<std::uint32_t>(trace.hash_ids.begin(), trace.hash_ids.end()).size(),
              f.distinct);
    for (std::size_t i = 0; i < trace.records.size(); ++i)
      ASSERT_EQ(trace.hash_ids_of(i).size(), trace.records[i].context_tokens / 16) << i;
  }
}

}  // namespace
}  // namespace infersim
