// Device memory the harness owns. Each shared buffer a case binds has a twin
// on the device the worker computes on, as large as the whole buffer, guard
// bands included. The harness allocates it, copies into and out of it in its
// own process and on its own clock, and hands the worker only a way to open
// it: no copy of a round is a request the worker could stretch or answer
// early, and answers are read from the twin when the reply arrives.
//
// The stand-in device is host memory behind the same interface (a memfd the
// worker maps), so that the device path runs, and is tested, without a GPU;
// the CUDA twins are memory of the harness's own CUDA context.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "harness/device_memory/twin_writes.h"

namespace harness {

// How a worker opens a twin: `open` goes in the "map" request (it names the
// kind of memory), `fd` beside it when the kind needs one (-1 if not).
struct DeviceHandle {
  nlohmann::json open;
  int fd = -1;
};

class DeviceTwin {
 public:
  virtual ~DeviceTwin() = default;
  virtual size_t bytes() const = 0;
  virtual DeviceHandle handle() const = 0;
  // The file behind the twin where there is one (the memory witness leaves
  // it out of the worker's own memory), else 0.
  virtual uint64_t inode() const = 0;
  // Bytes [offset, offset + bytes) between the harness's host copy and the
  // twin; both return once the copy is complete.
  virtual void upload(const void* host, size_t offset, size_t bytes) = 0;
  virtual void download(void* host, size_t offset, size_t bytes) = 0;
  // The writes into the twin, complete when it returns: each span an
  // upload, the scattered words through write_words.
  void write(const TwinWrites& writes);
  // Whether bytes [offset, offset + bytes) of the twin equal `expected`. By
  // default they are downloaded piece by piece and compared.
  virtual bool holds(const void* expected, size_t offset, size_t bytes);

 protected:
  // Words at twin byte `offsets`; by default each is an upload of its own.
  virtual void write_words(const std::vector<uint64_t>& offsets, const std::vector<uint64_t>& words);

 private:
  // holds()'s downloads, kept between requests (it runs before every one).
  std::vector<unsigned char> piece_;
};

// Refuses a copy of bytes [offset, offset + bytes) of a twin of `size`
// bytes that does not lie within it, naming the twin (`device`: "stand-in",
// "CUDA") and its tensor.
void check_twin_range(const char* device, const char* copy, const std::string& what, size_t offset, size_t bytes,
                      size_t size);

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual std::string describe() const = 0;
  // A twin of `bytes` bytes; `what` names it in errors.
  virtual std::unique_ptr<DeviceTwin> allocate(size_t bytes, const std::string& what) = 0;
};

std::unique_ptr<DeviceMemory> make_stand_in_device_memory();
// Twins in the harness's own CUDA context on device `device_index`, opened
// by the worker through CUDA IPC. Throws HarnessError when the harness was
// built without CUDA or the device cannot be used.
std::unique_ptr<DeviceMemory> make_cuda_device_memory(int device_index);

// Who owns the memory a run's library workers compute in, from
// HARNESS_DEVICE_MEMORY:
//   unset       CPU workers compute in the shared buffers; GPU workers in
//               device copies of their own (staged by their requests);
//   "stand-in"  CPU workers compute in harness-owned stand-in twins (the
//               device path without a GPU);
//   "harness"   GPU workers compute in harness-owned CUDA twins.
// Anything else is a UsageError naming what is accepted.
enum class DeviceMemoryChoice { worker, stand_in, harness };
DeviceMemoryChoice device_memory_choice();
// The run option that records a choice other than the default; "" for it.
std::string device_memory_option(DeviceMemoryChoice choice);

}  // namespace harness
