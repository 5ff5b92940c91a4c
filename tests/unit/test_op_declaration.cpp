// The declaration of a challenge's ops: parsing (malformed declarations are
// named), the C signature it implies, and the check of a call against it.
#include <gtest/gtest.h>

#include "harness/challenge_api/challenge.h"
#include "harness/core/error.h"
#include "harness/core/files.h"
#include "harness/definitions/op_call_check.h"
#include "harness/definitions/op_declaration.h"
#include "harness/definitions/op_table.h"

namespace harness {
namespace {

using nlohmann::json;

json abi() {
  return json{{"header", "x.h"},
              {"version", "X_ABI_VERSION"},
              {"version_function", "x_abi_version"},
              {"last_error_function", "x_last_error"}};
}

json config_with(const json& ops) { return json{{"abi", abi()}, {"ops", ops}}; }

std::string parse_error(const json& ops) {
  try {
    parse_challenge_ops("x", config_with(ops));
  } catch (const HarnessError& e) {
    return e.what();
  }
  return "(parsed)";
}

TEST(OpDeclaration, MalformedDeclarationsNameTheFileTheOpAndTheParameter) {
  EXPECT_NE(
      parse_error(
          json::array({{{"op", "f"}, {"function", "x_f"}, {"parameters", {{{"name", "a"}, {"kind", "sideways"}}}}}}))
          .find("challenges/x/challenge.json, op 'f', parameter 'a': kind 'sideways'"),
      std::string::npos);
  EXPECT_NE(parse_error(json::array({{{"op", "f"},
                                      {"function", "x_f"},
                                      {"parameters", {{{"name", "a"}, {"kind", "in"}, {"dtype", "float32"}}}}}}))
                .find("parameter 'a': a tensor needs a shape"),
            std::string::npos);
  EXPECT_NE(
      parse_error(
          json::array({{{"op", "f"},
                        {"function", "x_f"},
                        {"parameters", {{{"name", "n"}, {"kind", "count"}, {"dtype", "int32"}, {"of", "missing"}}}}}}))
          .find("count 'n' is of 'missing', which is not a list"),
      std::string::npos);
  EXPECT_NE(parse_error(json::array({{{"op", "f"},
                                      {"function", "x_f"},
                                      {"parameters",
                                       {{{"name", "a"}, {"kind", "scalar"}, {"dtype", "int64"}},
                                        {{"name", "a"}, {"kind", "scalar"}, {"dtype", "int64"}}}}}}))
                .find("parameter 'a' declared twice"),
            std::string::npos);
  EXPECT_NE(parse_error(json::array({{{"op", "f"}, {"parameters", json::array()}}})).find("no C function"),
            std::string::npos);
  EXPECT_NE(parse_error(json::array()).find("no \"ops\""), std::string::npos);
}

TEST(OpDeclaration, TheCSignatureFollowsTheKindsAndDtypes) {
  const ChallengeOps ops = parse_challenge_ops(
      "x", config_with(json::array({{{"op", "f"},
                                     {"function", "x_f"},
                                     {"parameters",
                                      {{{"name", "a"}, {"kind", "in"}, {"dtype", "float32"}, {"shape", {"n"}}},
                                       {{"name", "s"}, {"kind", "state"}, {"dtype", "bytes"}, {"shape", {"b"}}},
                                       {{"name", "r"}, {"kind", "in"}, {"dtype", "bytes"}, {"shape", {"b"}}},
                                       {{"name", "n"}, {"kind", "scalar"}, {"dtype", "int64"}},
                                       {{"name", "ids"}, {"kind", "list"}, {"dtype", "int32"}},
                                       {{"name", "count"}, {"kind", "count"}, {"dtype", "int32"}, {"of", "ids"}},
                                       {{"name", "out"}, {"kind", "out"}, {"dtype", "int32"}, {"shape", {"n"}}},
                                       {{"name", "bytes"}, {"kind", "result"}, {"dtype", "int64"}},
                                       {{"name", "h"}, {"kind", "handle"}, {"c", "struct thing*"}},
                                       {{"name", "stream"}, {"kind", "stream"}}}}}})));
  EXPECT_EQ(ops.at("f").c_signature(),
            "harness_status x_f(const float* a, void* s, const void* r, int64_t n, const int32_t* ids, int32_t count, "
            "int32_t* out, int64_t* bytes, struct thing* h, void* stream)");
  EXPECT_FALSE(ops.bindable_without_adapter());
}

TEST(OpDeclaration, EveryChallengeDeclaresItsOpsAndTheirCSignaturesAreItsHeaders) {
  for (const auto& challenge : all_challenges()) {
    const ChallengeOps& ops = challenge->config().ops;
    EXPECT_FALSE(ops.ops.empty()) << challenge->name();
    EXPECT_EQ(ops.header, challenge->name() + ".h");
  }
  EXPECT_EQ(find_challenge("softmax_topk").config().ops.at("softmax_topk").c_signature(),
            "harness_status softmax_topk_run(const float* logits, int64_t rows, int64_t vocab, int64_t k, "
            "float* probs, int32_t* indices, void* stream)");
}

TEST(OpDeclaration, TheProtocolDocsExampleIsWhatHarnessOpsPrints) {
  const std::string doc = read_text_file(std::string(HARNESS_SOURCE_DIR) + "/docs/PROCESS_PROTOCOL.md");
  const std::string open = "<!-- harness ops softmax_topk -->\n";
  const size_t start = doc.find(open);
  const size_t end = doc.find("<!-- end -->", start);
  ASSERT_NE(start, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc.substr(start + open.size(), end - start - open.size()),
            op_table_markdown({&find_challenge("softmax_topk").config().ops}));
}

class CallCheck : public ::testing::Test {
 protected:
  const ChallengeOps& kv = find_challenge("kv_cache").config().ops;
  const ChallengeOps& topk = find_challenge("softmax_topk").config().ops;

  std::string check(const ChallengeOps& ops, const std::string& op, const json& scalars,
                    const std::vector<CallTensor>& tensors) {
    return call_disagreement(ops, ops.at(op), scalars, tensors);
  }
};

TEST_F(CallCheck, ACallThatMatchesItsDeclarationPasses) {
  EXPECT_EQ(check(topk, "softmax_topk", {{"rows", 4}, {"vocab", 100}, {"k", 5}},
                  {{"logits", DType::f32, {4, 100}}, {"probs", DType::f32, {4, 5}}, {"indices", DType::i32, {4, 5}}}),
            "");
  EXPECT_EQ(check(kv, "attend", {{"layer", 0}, {"sequences", {7, 9}}, {"query_lengths", {1, 3}}},
                  {{"q", DType::f32, {4, 8, 64}}, {"out", DType::f32, {4, 8, 64}}}),
            "");
  EXPECT_EQ(check(kv, "format", json(), {}), "");  // `{}` in C++ is a null
}

TEST_F(CallCheck, EachDisagreementIsNamedWithTheDeclaration) {
  const json scalars{{"rows", 4}, {"vocab", 100}, {"k", 5}};
  const CallTensor logits{"logits", DType::f32, {4, 100}};
  const CallTensor probs{"probs", DType::f32, {4, 5}};
  const CallTensor indices{"indices", DType::i32, {4, 5}};
  auto mismatch = [&](const json& s, const std::vector<CallTensor>& t) { return check(topk, "softmax_topk", s, t); };
  EXPECT_NE(mismatch(scalars, {logits, probs, {"indices", DType::i64, {4, 5}}}).find("tensor 'indices' is int64[4, 5]"),
            std::string::npos);
  EXPECT_NE(mismatch(scalars, {logits, {"probs", DType::f32, {4, 6}}, indices}).find("dimension 1 (k) should be 5"),
            std::string::npos);
  EXPECT_NE(mismatch(scalars, {logits, probs}).find("tensor 'indices' is missing"), std::string::npos);
  EXPECT_NE(mismatch(scalars, {logits, probs, indices, {"extra", DType::f32, {1}}}).find("'extra' is not declared"),
            std::string::npos);
  EXPECT_NE(mismatch({{"rows", 4}, {"vocab", 100}}, {logits, probs, indices}).find("scalar 'k' is missing"),
            std::string::npos);
  EXPECT_NE(mismatch({{"rows", 4}, {"vocab", 100}, {"k", 5.5}}, {logits, probs, indices}).find("not an integer"),
            std::string::npos);
  const std::string named = mismatch(scalars, {logits, probs});
  EXPECT_NE(named.find("challenges/softmax_topk/challenge.json"), std::string::npos) << named;
  EXPECT_NE(named.find("harness_status softmax_topk_run("), std::string::npos) << named;
}

TEST_F(CallCheck, ASymbolThatIsNoScalarMustBeTheSameWhereverTheCallUsesIt) {
  const json scalars{{"layer", 0}, {"sequence", 3}, {"n", 2}};
  EXPECT_EQ(check(kv, "append", scalars, {{"k", DType::f32, {2, 4, 64}}, {"v", DType::f32, {2, 4, 64}}}), "");
  EXPECT_NE(check(kv, "append", scalars, {{"k", DType::f32, {2, 4, 64}}, {"v", DType::f32, {2, 4, 128}}})
                .find("dimension 2 (head_dim) should be 64"),
            std::string::npos);
  // sum(query_lengths): the queries of every sequence together.
  EXPECT_NE(check(kv, "attend", {{"layer", 0}, {"sequences", {7, 9}}, {"query_lengths", {1, 3}}},
                  {{"q", DType::f32, {3, 8, 64}}, {"out", DType::f32, {3, 8, 64}}})
                .find("dimension 0 (sum(query_lengths)) should be 4"),
            std::string::npos);
}

}  // namespace
}  // namespace harness
