#include "harness/core/npy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "harness/core/error.h"
#include "harness/core/files.h"

namespace harness {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct Descr {
  const char* text;
  DType dtype;
};
// '|u1' and '<u1' both mean single bytes; numpy writes '|u1'.
const Descr kDescrs[] = {{"<f4", DType::f32}, {"<f8", DType::f64}, {"<i4", DType::i32},
                         {"<i8", DType::i64}, {"|u1", DType::u8},  {"<u1", DType::u8}};

// Every .npy the harness reads comes from a submission: a file it cannot use
// is the submission's fault.
[[noreturn]] void malformed(const std::string& origin, const std::string& problem) {
  throw UntrustedInputError(fmt::format("{}: not a usable .npy file: {}", origin, problem));
}

// The value of `key` in the header dictionary, as written: "'<f4'",
// "False", "(3, 4)".
std::string dict_value(const std::string& header, const std::string& key, const std::string& origin) {
  const std::string quoted = "'" + key + "'";
  const auto at = header.find(quoted);
  if (at == std::string::npos) malformed(origin, fmt::format("the header has no {}: {}", quoted, header));
  auto pos = header.find(':', at + quoted.size());
  if (pos == std::string::npos) malformed(origin, "a header key without a value");
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  const char open = header[pos];
  size_t end;
  if (open == '\'') {
    end = header.find('\'', pos + 1) + 1;
  } else if (open == '(') {
    end = header.find(')', pos) + 1;
  } else {
    end = header.find_first_of(",}", pos);
  }
  if (end == std::string::npos || end == 0 || end <= pos)
    malformed(origin, fmt::format("unreadable value of {}", quoted));
  return header.substr(pos, end - pos);
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& origin) {
  std::vector<int64_t> shape;
  std::string inner = text.substr(1, text.size() - 2);  // without ( )
  std::stringstream parts(inner);
  for (std::string part; std::getline(parts, part, ',');) {
    const auto first = part.find_first_not_of(" ");
    if (first == std::string::npos) continue;  // "(3,)" leaves an empty part
    part = part.substr(first, part.find_last_not_of(" ") - first + 1);
    if (part.empty() ||
        !std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      malformed(origin, fmt::format("shape {} is not a tuple of non-negative integers", text));
    }
    // 18 digits always fit int64; a longer extent cannot describe a tensor
    // any challenge uses, and std::stoll would throw out_of_range on it.
    if (part.size() > 18) malformed(origin, fmt::format("shape {} has an extent beyond int64", text));
    shape.push_back(std::stoll(part));
  }
  return shape;
}

// Elements times the dtype's size, refusing any product that overflows.
size_t data_bytes_of(const std::vector<int64_t>& shape, DType dtype, const std::string& shape_text,
                     const std::string& origin) {
  size_t bytes = dtype_size(dtype);
  for (int64_t extent : shape) {
    if (__builtin_mul_overflow(bytes, static_cast<size_t>(extent), &bytes)) {
      malformed(origin, fmt::format("shape {} of {} overflows the size of any file", shape_text, dtype_name(dtype)));
    }
  }
  return bytes;
}

}  // namespace

std::string npy_descr(DType dtype) {
  for (const auto& d : kDescrs) {
    if (d.dtype == dtype) return d.text;
  }
  throw UsageError(fmt::format("{} cannot be written to .npy", dtype_name(dtype)));
}

void write_npy(const std::string& path, DType dtype, const std::vector<int64_t>& shape, const void* data) {
  std::string shape_text = "(";
  for (size_t i = 0; i < shape.size(); ++i) shape_text += fmt::format("{}{}", i ? ", " : "", shape[i]);
  shape_text += shape.size() == 1 ? ",)" : ")";
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", npy_descr(dtype), shape_text);
  // Pad with spaces so that the data starts at a multiple of 64 bytes.
  const size_t unpadded = kMagicSize + 2 + 2 + header.size() + 1;
  header += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  HARNESS_CHECK(header.size() < 65536, "a .npy header of {} bytes", header.size());
  size_t elements = 1;
  for (int64_t extent : shape) elements *= static_cast<size_t>(extent);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UsageError(fmt::format("cannot write '{}'", path));
  const auto header_size = static_cast<uint16_t>(header.size());
  out.write(kMagic, kMagicSize);
  out.put(1);
  out.put(0);
  out.put(static_cast<char>(header_size & 0xFF));
  out.put(static_cast<char>(header_size >> 8));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(elements * dtype_size(dtype)));
  HARNESS_CHECK(out.good(), "writing '{}' failed", path);
}

namespace {

// The header of a .npy file of file_bytes bytes from its first bytes (all
// of them, or at least the header's): dtype and shape accepted, and the data
// exactly as long as they say.
NpyHeader parse_npy_header(const std::string& bytes, size_t file_bytes, const std::string& origin) {
  if (bytes.size() < kMagicSize + 4 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    malformed(origin, "it does not start with the .npy magic \\x93NUMPY");
  }
  const auto major = static_cast<unsigned char>(bytes[kMagicSize]);
  size_t header_size;
  size_t header_start;
  if (major == 1) {
    header_size = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) malformed(origin, "truncated header");
    header_size = 0;
    for (int i = 3; i >= 0; --i)
      header_size = header_size << 8 | static_cast<unsigned char>(bytes[8 + static_cast<size_t>(i)]);
    header_start = 12;
  } else {
    malformed(origin, fmt::format("format version {} (expected 1, 2 or 3)", major));
  }
  if (bytes.size() < header_start + header_size) malformed(origin, "the header is cut off");
  const std::string header = bytes.substr(header_start, header_size);

  NpyHeader parsed;
  const std::string descr = dict_value(header, "descr", origin);
  bool known = false;
  for (const auto& d : kDescrs) {
    if (descr == fmt::format("'{}'", d.text)) {
      parsed.dtype = d.dtype;
      known = true;
    }
  }
  if (!known) {
    malformed(origin, fmt::format("dtype {} (accepted: little-endian float32 '<f4', float64 '<f8', int32 '<i4', "
                                  "int64 '<i8', uint8 '|u1')",
                                  descr));
  }
  const std::string order = dict_value(header, "fortran_order", origin);
  if (order != "False") malformed(origin, fmt::format("fortran_order {} (only C order is accepted)", order));
  const std::string shape = dict_value(header, "shape", origin);
  if (shape.front() != '(' || shape.back() != ')') malformed(origin, fmt::format("shape {} is not a tuple", shape));
  parsed.shape = parse_shape(shape, origin);

  parsed.data_bytes = data_bytes_of(parsed.shape, parsed.dtype, shape, origin);
  parsed.data_start = header_start + header_size;
  if (file_bytes != parsed.data_start + parsed.data_bytes) {
    malformed(origin, fmt::format("{} data bytes for shape {} of {}, but the file holds {}", parsed.data_bytes, shape,
                                  dtype_name(parsed.dtype), file_bytes - std::min(file_bytes, parsed.data_start)));
  }
  return parsed;
}

}  // namespace

NpyArray parse_npy(const std::string& bytes, const std::string& origin) {
  const NpyHeader header = parse_npy_header(bytes, bytes.size(), origin);
  NpyArray array;
  array.dtype = header.dtype;
  array.shape = header.shape;
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header.data_start), bytes.end());
  return array;
}

namespace {

// Version 2/3 headers: 12 bytes of preamble and up to 4 GiB of header in
// principle; NumPy writes a few hundred bytes. 64 KiB is generous.
constexpr size_t kHeaderAllowance = 12 + 65536;

// A .npy file opened to be read: without following a link and without
// blocking, then judged by what was opened: a link (to the results, to
// /dev/zero) or a FIFO (which would block a read forever) in place of the
// file is refused unread, and so is a file larger than the caller expects (a
// sparse file of gigabytes would otherwise be read into memory whole).
// Judged after the open, since a check by path races a rename.
class OpenNpy {
 public:
  OpenNpy(const std::string& path, size_t max_file_bytes) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
      malformed(path, errno == ELOOP ? std::string("it is not a regular file (a folder, a link, a FIFO or a device)")
                                     : fmt::format("cannot open it: {}", std::strerror(errno)));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail(fmt::format("cannot stat it: {}", std::strerror(errno)));
    if (!S_ISREG(st.st_mode)) fail("it is not a regular file (a folder, a link, a FIFO or a device)");
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > max_file_bytes) {
      fail(fmt::format("{} bytes, more than the {} bytes a file of the expected dtype and shape takes", size_,
                       max_file_bytes));
    }
  }
  ~OpenNpy() {
    if (fd_ >= 0) ::close(fd_);
  }
  OpenNpy(const OpenNpy&) = delete;
  OpenNpy& operator=(const OpenNpy&) = delete;

  size_t size() const { return size_; }

  // Up to `bytes` more bytes into `into`; fewer only at the file's end (it
  // may shrink meanwhile, and never grows past what was judged).
  size_t read(void* into, size_t bytes) {
    size_t got = 0;
    while (got < bytes) {
      const ssize_t n = ::read(fd_, static_cast<char*>(into) + got, bytes - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(fmt::format("cannot read it: {}", std::strerror(errno)));
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    return got;
  }

 private:
  // Closes here: a failure in the constructor runs no destructor.
  [[noreturn]] void fail(const std::string& problem) {
    ::close(fd_);
    fd_ = -1;
    malformed(path_, problem);
  }

  std::string path_;
  int fd_ = -1;
  size_t size_ = 0;
};

}  // namespace

NpyArray read_npy(const std::string& path, size_t max_file_bytes) {
  OpenNpy file(path, max_file_bytes);
  std::string bytes(file.size(), '\0');
  bytes.resize(file.read(bytes.data(), bytes.size()));
  return parse_npy(bytes, path);
}

NpyHeader read_npy_into(const std::string& path, size_t max_file_bytes,
                        const std::function<void*(const NpyHeader&)>& destination) {
  OpenNpy file(path, max_file_bytes);
  std::string head(std::min(file.size(), kHeaderAllowance), '\0');
  head.resize(file.read(head.data(), head.size()));
  const NpyHeader header = parse_npy_header(head, file.size(), path);
  auto* data = static_cast<unsigned char*>(destination(header));
  // parse_npy_header saw the whole header in `head`: data_start <= head.size().
  const size_t in_head = std::min(head.size() - header.data_start, header.data_bytes);
  if (in_head > 0) std::memcpy(data, head.data() + header.data_start, in_head);
  const size_t rest = file.read(data + in_head, header.data_bytes - in_head);
  if (in_head + rest != header.data_bytes) {
    malformed(path, fmt::format("{} data bytes expected, the file ended after {}", header.data_bytes, in_head + rest));
  }
  return header;
}

size_t npy_max_file_bytes(DType dtype, const std::vector<int64_t>& shape) {
  return kHeaderAllowance + data_bytes_of(shape, dtype, "(expected)", "the expected tensor");
}

}  // namespace harness
