// The worker's binding of a declared op to a C function: every parameter
// from the request by its declared name and kind, in the function's types.
#include <gtest/gtest.h>

#include <vector>

#include "harness/core/error.h"
#include "harness/worker/declared_binding.h"

namespace harness {
namespace {

using nlohmann::json;

struct Seen {
  const float* x = nullptr;
  int32_t layer = 0;
  float eps = 0;
  std::vector<int64_t> ids;
  int32_t count = 0;
  float* y = nullptr;
  void* stream = nullptr;
};
Seen seen;

int32_t probe(const float* x, int32_t layer, float eps, const int64_t* ids, int32_t count, float* y, int64_t* bytes,
              void* stream) {
  seen = Seen{x, layer, eps, std::vector<int64_t>(ids, ids + count), count, y, stream};
  *bytes = 4096;
  return 7;
}

int32_t answer() { return 42; }

OpDeclaration declaration() {
  const json config{
      {"abi",
       {{"header", "p.h"}, {"version", "P"}, {"version_function", "p_version"}, {"last_error_function", "p_error"}}},
      {"ops",
       {{{"op", "probe"},
         {"function", "probe"},
         {"parameters",
          {{{"name", "x"}, {"kind", "in"}, {"dtype", "float32"}, {"shape", {"n"}}},
           {{"name", "layer"}, {"kind", "scalar"}, {"dtype", "int32"}},
           {{"name", "eps"}, {"kind", "scalar"}, {"dtype", "float32"}},
           {{"name", "ids"}, {"kind", "list"}, {"dtype", "int64"}},
           {{"name", "count"}, {"kind", "count"}, {"dtype", "int32"}, {"of", "ids"}},
           {{"name", "y"}, {"kind", "out"}, {"dtype", "float32"}, {"shape", {"n"}}},
           {{"name", "bytes"}, {"kind", "result"}, {"dtype", "int64"}},
           {{"name", "stream"}, {"kind", "stream"}}}}},
        {{"op", "answer"},
         {"function", "answer"},
         {"parameters", json::array()},
         {"returns", {{"name", "value"}, {"kind", "result"}, {"dtype", "int32"}}}}}}};
  static const ChallengeOps ops = parse_challenge_ops("p", config);
  return ops.at("probe");
}

TEST(DeclaredBinding, EachParameterComesFromTheRequestByItsNameAndKind) {
  float x[2] = {1, 2};
  float y[2] = {0, 0};
  int stream_marker = 0;
  const json scalars{{"layer", 3}, {"eps", 0.5}, {"ids", {11, 22, 33}}};
  OpArguments args;
  args.scalars = &scalars;
  args.tensors = {{"x", x}, {"y", y}};
  args.stream = &stream_marker;
  const BoundCall call = bind_declared(&probe, declaration(), args);
  EXPECT_EQ(call.invoke(), 7);
  EXPECT_EQ(seen.x, x);
  EXPECT_EQ(seen.y, y);
  EXPECT_EQ(seen.layer, 3);
  EXPECT_FLOAT_EQ(seen.eps, 0.5f);
  EXPECT_EQ(seen.ids, (std::vector<int64_t>{11, 22, 33}));
  EXPECT_EQ(seen.count, 3);
  EXPECT_EQ(seen.stream, &stream_marker);
  ASSERT_TRUE(call.results);
  EXPECT_EQ(call.results(), (json{{"bytes", 4096}}));
}

TEST(DeclaredBinding, AReturnedResultIsTheOpsResultAndItsStatusIsOk) {
  const json config{
      {"abi",
       {{"header", "p.h"}, {"version", "P"}, {"version_function", "p_version"}, {"last_error_function", "p_error"}}},
      {"ops",
       {{{"op", "answer"},
         {"function", "answer"},
         {"parameters", json::array()},
         {"returns", {{"name", "value"}, {"kind", "result"}, {"dtype", "int32"}}}}}}};
  const ChallengeOps ops = parse_challenge_ops("p", config);
  const json scalars = json::object();
  OpArguments args;
  args.scalars = &scalars;
  const BoundCall call = bind_declared(&answer, ops.at("answer"), args);
  EXPECT_EQ(call.invoke(), 0);
  EXPECT_EQ(call.results(), (json{{"value", 42}}));
}

TEST(DeclaredBinding, AScalarThatDoesNotFitItsCTypeIsRefused) {
  float x[1] = {0};
  float y[1] = {0};
  const json scalars{{"layer", int64_t{1} << 40}, {"eps", 0.5}, {"ids", {1}}};
  OpArguments args;
  args.scalars = &scalars;
  args.tensors = {{"x", x}, {"y", y}};
  try {
    bind_declared(&probe, declaration(), args);
    FAIL() << "bound";
  } catch (const HarnessError& e) {
    EXPECT_NE(std::string(e.what()).find("scalar layer 1099511627776 does not fit"), std::string::npos) << e.what();
  }
}

TEST(DeclaredBinding, AFunctionWithAnotherNumberOfParametersIsRefused) {
  const json scalars = json::object();
  OpArguments args;
  args.scalars = &scalars;
  EXPECT_THROW(bind_declared(&answer, declaration(), args), HarnessError);
}

}  // namespace
}  // namespace harness
