#pragma once

namespace tact::detail {

// Whoever may sleep until a work queue gets mail: a parked pool worker, a
// runner that waits with behaviours suspended while it holds the queue, a
// sponsor's thread. The queue only keeps the pointer (see
// work_queue::register_waiter); whoever posts wakes it.
class sleeper {
 public:
  // Any thread: makes the sleeper look at its queues again. It may not be
  // asleep at all (a registration outlives a sleep it gave up): then it
  // costs a little and changes nothing.
  virtual void wake() noexcept = 0;

 protected:
  sleeper() = default;
  ~sleeper() = default;
  sleeper(const sleeper&) = default;
  sleeper& operator=(const sleeper&) = default;
};

}  // namespace tact::detail
