// InputStage: new inputs staged beside the sets and written, only where
// they differ, when the round is published.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "harness/challenge_api/input_stage.h"
#include "harness/core/error.h"
#include "harness/memory/shared_tensor.h"

namespace harness {
namespace {

// New inputs are staged, and only what differs is written (InputStage).
TEST(InputStage, WritesOnlyTheWordsThatDifferAndOnlyWhenPublished) {
  SharedTensor t(1, TensorSpec{"x", DType::f32, {5}});  // 20 bytes: two words and a 4-byte tail
  for (int i = 0; i < 5; ++i) t.as<float>()[i] = static_cast<float>(i);
  float next[5] = {0, 1, 2, 30, 40};
  InputStage stage;
  stage.stage(t, next);
  EXPECT_EQ(stage.changed_bytes(), 12u);  // the word of elements 2-3, the tail (element 4)
  EXPECT_EQ(t.as<float>()[3], 3.0f);      // nothing visible before publish()
  std::vector<unsigned char> snapshot(static_cast<const unsigned char*>(t.raw()),
                                      static_cast<const unsigned char*>(t.raw()) + t.bytes());
  EXPECT_TRUE(stage.apply(t, snapshot.data()));
  EXPECT_EQ(std::memcmp(snapshot.data(), next, sizeof next), 0);
  stage.publish();
  EXPECT_EQ(std::memcmp(t.raw(), next, sizeof next), 0);
  SharedTensor other(2, TensorSpec{"z", DType::f32, {5}});
  EXPECT_FALSE(stage.apply(other, snapshot.data()));
}

// A refresh that knows what it wrote has only those elements staged: the rest
// is not read, even where it differs.
TEST(InputStage, StagesTheElementsAKnowingRefreshNamesAndNothingElse) {
  SharedTensor t(1, TensorSpec{"x", DType::f32, {6}});
  for (int i = 0; i < 6; ++i) t.as<float>()[i] = static_cast<float>(i);
  const float next[6] = {0, 10, 20, 3, 40, 50};
  InputStage stage;
  stage.stage_elements(t, next, {1, 2, 4});
  EXPECT_EQ(stage.changed_bytes(), 12u);
  stage.publish();
  const float expected[6] = {0, 10, 20, 3, 40, 5};  // element 5 differs but was not named
  EXPECT_EQ(std::memcmp(t.raw(), expected, sizeof expected), 0);
  EXPECT_THROW(stage.stage_elements(t, next, {2, 1}), HarnessError);
  EXPECT_THROW(stage.stage_elements(t, next, {6}), HarnessError);
}

}  // namespace
}  // namespace harness
