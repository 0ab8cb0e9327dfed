// An actor whose behaviour blocks runs on a thread of its own: a serial
// port, whose reads are simulated by a sleep, on a tact::dedicated_sponsor,
// so that waiting for the device holds no worker of the pool. Each sample
// read goes to a logger on the pool. docs/sponsors.md quotes this file.
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <tact/tact.hpp>

using namespace std::chrono_literals;

struct read_samples : tact::message {
  explicit read_samples(int n) : count{n} {}
  int count;
};

struct sample : tact::message {
  explicit sample(int v) : value{v} { set_allocation(tact::allocation::Delete); }
  int value;
};

struct logger : tact::actor {
  explicit logger(std::size_t expected) : expected_{expected} {}
  tact::allocation receive(sample& m) {
    values.push_back(m.value);
    if (values.size() == expected_) all_in.set_value();
    return Nodelete;
  }
  std::vector<int> values;  // read by main once all_in is set
  std::promise<void> all_in;

 private:
  std::size_t expected_;
};

struct serial_port : tact::actor {
  serial_port(std::string device, logger& log) : device_{std::move(device)}, log_{log} {}
  tact::allocation receive(read_samples& m) {
    read_on = std::this_thread::get_id();
    for (int i = 0; i < m.count; ++i) log_ | *new sample{read()};
    return Nodelete;
  }
  const std::string& device() const { return device_; }
  std::thread::id read_on;

 private:
  // Blocks until the device has a sample, as a read(2) on it would.
  int read() {
    std::this_thread::sleep_for(5ms);
    return ++reads_ * 10;
  }

  std::string device_;
  logger& log_;
  int reads_ = 0;
};

int main() {
  tact::actor_system system;
  auto& log = system.spawn<logger>(10);
  tact::dedicated_sponsor io{system, "serial-port"};
  auto& port = io.spawn<serial_port>("/dev/ttyUSB0", log);

  read_samples ten{10};
  port | ten;
  // Generous: the reads take 50 ms, but a loaded machine may be slow.
  const bool all_in = log.all_in.get_future().wait_for(60s) == std::future_status::ready;
  if (all_in) {
    std::printf("samples:");
    for (int v : log.values) std::printf(" %d", v);
    std::printf("\n");
  }
  const bool off_main = port.read_on != std::this_thread::get_id();
  std::printf("read from %s on a thread of its own: %s\n", port.device().c_str(),
              off_main ? "yes" : "no");

  const bool in_order =
      all_in && log.values == std::vector<int>{10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
  port | tact::delete_msg;
  log | tact::delete_msg;
  system.stop();
  return in_order && off_main ? 0 : 1;
}
