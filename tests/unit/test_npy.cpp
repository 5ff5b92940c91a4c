// .npy reading and writing: what NumPy writes is read back, anything the
// protocol does not accept is refused with a message that says why.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/core/error.h"
#include "harness/core/npy.h"
#include "support/test_support.h"

namespace harness {
namespace {

std::string npy_bytes(const std::string& header, size_t data_bytes, int major = 1) {
  std::string padded = header;
  while ((10 + padded.size() + 1) % 64 != 0) padded += ' ';
  padded += '\n';
  std::string bytes = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  bytes += static_cast<char>(padded.size() & 0xFF);
  bytes += static_cast<char>(padded.size() >> 8);
  return bytes + padded + std::string(data_bytes, '\x01');
}

std::string npy_error_of(const std::string& bytes) {
  try {
    parse_npy(bytes, "t.npy");
  } catch (const UntrustedInputError& e) {
    return e.what();
  }
  return "";
}

TEST(Npy, WriteThenReadRoundTripsEveryDtype) {
  testing::TempFolder tmp;
  const float f[6] = {1.5f, -2, 3, 4, 5, 6};
  write_npy(tmp.path("f.npy"), DType::f32, {2, 3}, f);
  const NpyArray a = read_npy(tmp.path("f.npy"));
  EXPECT_EQ(a.dtype, DType::f32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::memcmp(a.data.data(), f, sizeof f), 0);
  const int64_t i[3] = {1, -2, 3};
  write_npy(tmp.path("i.npy"), DType::i64, {3}, i);
  EXPECT_EQ(read_npy(tmp.path("i.npy")).shape, (std::vector<int64_t>{3}));
  const unsigned char u[1] = {7};
  write_npy(tmp.path("u.npy"), DType::u8, {}, u);
  EXPECT_TRUE(read_npy(tmp.path("u.npy")).shape.empty());
}

TEST(Npy, NumpysOwnFilesAreReadWhenNumpyIsHere) {
  testing::TempFolder tmp;
  const auto r = testing::run_shell("/usr/bin/python3 -c \"import numpy as np; np.save('" + tmp.path("n.npy") +
                                    "', np.arange(12, dtype=np.int32).reshape(3, 4))\"");
  if (r.exit_code != 0) GTEST_SKIP() << "no NumPy for /usr/bin/python3: " << r.output;
  const NpyArray a = read_npy(tmp.path("n.npy"));
  EXPECT_EQ(a.dtype, DType::i32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(reinterpret_cast<const int32_t*>(a.data.data())[11], 11);
}

TEST(Npy, MalformedFilesAreRefusedWithTheReason) {
  const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(npy_error_of(npy_bytes(good, 24)), "");
  EXPECT_NE(npy_error_of("PK\x03\x04 a zip file").find("magic"), std::string::npos);
  EXPECT_NE(
      npy_error_of(npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24)).find("dtype '>f4'"),
      std::string::npos);
  EXPECT_NE(npy_error_of(npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16)).find("dtype '|O'"),
            std::string::npos);
  EXPECT_NE(npy_error_of(npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24))
                .find("fortran_order True"),
            std::string::npos);
  EXPECT_NE(npy_error_of(npy_bytes(good, 20)).find("24 data bytes"), std::string::npos);
  EXPECT_NE(npy_error_of(npy_bytes(good, 28)).find("but the file holds 28"), std::string::npos);
  EXPECT_NE(
      npy_error_of(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 24)).find("non-negative"),
      std::string::npos);
  EXPECT_NE(npy_error_of(npy_bytes("{'descr': '<f4', 'fortran_order': False}", 4)).find("no 'shape'"),
            std::string::npos);
  EXPECT_NE(npy_error_of(npy_bytes(good, 24, 4)).find("format version 4"), std::string::npos);
  EXPECT_NE(npy_error_of(npy_bytes(good, 24).substr(0, 30)).find("cut off"), std::string::npos);
}

// Shapes whose size overflows: an extent beyond int64 (std::stoll would
// throw out_of_range) and a product beyond size_t (it would wrap around).
TEST(Npy, ShapesThatOverflowAreRefusedAsTheFilesFault) {
  EXPECT_NE(npy_error_of(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 2), }", 0))
                .find("beyond int64"),
            std::string::npos);
  EXPECT_NE(
      npy_error_of(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000000000, 1000), }", 0))
          .find("overflows"),
      std::string::npos);
}

std::string read_error(const std::string& path, size_t max_bytes) {
  try {
    read_npy(path, max_bytes);
  } catch (const UntrustedInputError& e) {
    return e.what();
  }
  return "";
}

// The exploit process-exploit-huge-sparse-output: a valid header, then a
// hole up to 1.5 GB. Without a limit read_npy would read it whole; with the
// size the expected tensor takes, it is refused before a byte is read.
TEST(Npy, AFileLargerThanTheExpectedTensorIsRefusedUnread) {
  testing::TempFolder tmp;
  const std::string path = tmp.path("sparse.npy");
  const float data[4] = {1, 2, 3, 4};
  write_npy(path, DType::f32, {2, 2}, data);
  const size_t limit = npy_max_file_bytes(DType::f32, {2, 2});
  EXPECT_EQ(read_error(path, limit), "");
  ASSERT_EQ(::truncate(path.c_str(), 1536LL << 20), 0);
  EXPECT_NE(read_error(path, limit).find("1610612736 bytes, more than the"), std::string::npos)
      << read_error(path, limit);
  EXPECT_GT(npy_max_file_bytes(DType::f32, {64, 2}), 64u * 2 * 4);
  EXPECT_LT(npy_max_file_bytes(DType::f32, {64, 2}), 1u << 20);
}

TEST(Npy, AnythingButARegularFileIsRefusedUnread) {
  testing::TempFolder tmp;
  std::filesystem::create_directories(tmp.path("folder.npy"));
  EXPECT_NE(read_error(tmp.path("folder.npy"), 1 << 20).find("not a regular file"), std::string::npos);
  // A FIFO would block the reading harness forever.
  ASSERT_EQ(::mkfifo(tmp.path("fifo.npy").c_str(), 0600), 0);
  EXPECT_NE(read_error(tmp.path("fifo.npy"), 1 << 20).find("not a regular file"), std::string::npos);
  const float data[1] = {1};
  write_npy(tmp.path("real.npy"), DType::f32, {1}, data);
  std::filesystem::create_symlink(tmp.path("real.npy"), tmp.path("link.npy"));
  EXPECT_NE(read_error(tmp.path("link.npy"), 1 << 20).find("not a regular file"), std::string::npos);
}

// Outputs of hundreds of megabytes go straight into the harness's tensor:
// the data of a file past its first 64 KiB as much as a small one's (all of
// it read with the header), nothing written where the header is refused.
TEST(Npy, ReadIntoPutsTheDataWhereTheCallerSaysOnceItAcceptsTheHeader) {
  testing::TempFolder tmp;
  for (const size_t elements : {size_t{6}, size_t{100000}}) {
    std::vector<float> data(elements);
    for (size_t i = 0; i < elements; ++i) data[i] = static_cast<float>(i) * 0.5f - 7;
    const std::string path = tmp.path("f" + std::to_string(elements) + ".npy");
    write_npy(path, DType::f32, {static_cast<int64_t>(elements)}, data.data());
    std::vector<float> into(elements, -1);
    const NpyHeader header = read_npy_into(path, npy_max_file_bytes(DType::f32, {static_cast<int64_t>(elements)}),
                                           [&](const NpyHeader& h) -> void* {
                                             EXPECT_EQ(h.shape, (std::vector<int64_t>{static_cast<int64_t>(elements)}));
                                             return into.data();
                                           });
    EXPECT_EQ(header.data_bytes, elements * sizeof(float));
    EXPECT_EQ(std::memcmp(into.data(), data.data(), header.data_bytes), 0) << elements << " elements";

    std::vector<float> untouched(elements, -1);
    EXPECT_THROW(read_npy_into(path, 1 << 30,
                               [&](const NpyHeader&) -> void* {
                                 throw VerdictException(Verdict::error, "refused");
                                 return untouched.data();
                               }),
                 VerdictException);
    EXPECT_EQ(untouched, std::vector<float>(elements, -1));
  }
  // The limits of read_npy hold: a file past the expected size is refused
  // before the destination is asked for.
  const float four[4] = {1, 2, 3, 4};
  write_npy(tmp.path("big.npy"), DType::f32, {4}, four);
  bool asked = false;
  EXPECT_THROW(read_npy_into(tmp.path("big.npy"), 64,
                             [&](const NpyHeader&) -> void* {
                               asked = true;
                               return nullptr;
                             }),
               UntrustedInputError);
  EXPECT_FALSE(asked);
}

}  // namespace
}  // namespace harness
