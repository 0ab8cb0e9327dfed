#pragma once

#include <cstdint>

namespace tact::detail {

// The link by which an object waits in its executor's epochs until no
// worker can still be using it (see src/executor/epochs.hpp). It is part
// of the object, so retiring one needs no memory: a worker retires objects
// at the end of a commit, where nothing may fail.
struct retired_link {
  using free_fn = void (*)(retired_link*) noexcept;

  retired_link* next = nullptr;
  std::uint64_t epoch = 0;  // the epoch current when it was retired
  free_fn free = nullptr;   // frees the object once it is safe
};

}  // namespace tact::detail
