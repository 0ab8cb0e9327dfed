#pragma once

// The repeat workload (Cforall thesis, "Executor", the repeat benchmark): one
// client scatters a request to every one of many servers and gathers their
// replies, then does it again. All replies converge on the client's queue,
// so it measures how the executor bears contention on one queue, and how
// much moving the client (stealing its queue) costs: the thesis found its
// no-stealing variant fastest here.
//
//   tact::actor_system system{{.workers = 2}};
//   const tact::bench::repeat_result r = tact::bench::run_repeat(system, {});
//
// Header-only, like the other workloads.

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "executor.hpp"  // fail(), deliveries_so_far()

namespace tact::bench {

// The thesis runs 100,000 servers for 200 repetitions. The defaults keep
// the server count (the client's state, and the fan-out per queue, are what
// the workload is about) and shrink the repetitions: 8 million messages,
// about half a second at two workers on two cores without stealing (a
// third of that at one worker, or with stealing).
struct repeat_params {
  std::uint32_t servers = 100'000;  // at least 1
  std::uint32_t repetitions = 40;   // at least 1
};

struct repeat_result {
  std::uint64_t replies = 0;   // servers * repetitions, each checked by the client
  std::uint64_t messages = 0;  // requests plus replies
  std::uint64_t deliveries = 0;  // every delivery during the run, from the system's statistics
};

class repeat_server;

// A request, and then its reply: the client owns one per server and sends
// it; the server writes its answer into it and sends the same object back.
// So a repetition allocates nothing, and each object is in flight to one
// receiver at a time.
struct repeat_request : message {
  repeat_server* server = nullptr;
  std::uint64_t answer = 0;  // the server's count of requests served, this one included
};

// Starts the first scatter. Sent once to the client.
struct repeat_go : message {};

// Owned by the workload; returns Finished after its last gather.
class repeat_client final : public actor {
 public:
  repeat_client(actor_system& system, std::uint32_t repetitions)
      : actor{system}, repetitions_{repetitions} {}

  // Before the go message: one request per server.
  void serve_with(std::span<repeat_server* const> servers) {
    requests_.resize(servers.size());
    for (std::size_t i = 0; i < servers.size(); ++i) requests_[i].server = servers[i];
  }

  // Read once the system is quiescent.
  std::uint64_t replies() const noexcept { return replies_; }
  std::uint64_t wrong_answers() const noexcept { return wrong_answers_; }
  std::uint32_t repetitions_done() const noexcept { return repetition_; }

  allocation receive(repeat_go&) {
    scatter();
    return Nodelete;
  }

  // A reply: in repetition r (from 0) every server has served r + 1
  // requests, the one it answers included.
  allocation receive(repeat_request& reply) {
    ++replies_;
    if (reply.answer != repetition_ + 1) ++wrong_answers_;
    if (++gathered_ < requests_.size()) return Nodelete;
    gathered_ = 0;
    if (++repetition_ == repetitions_) return Finished;
    scatter();
    return Nodelete;
  }

 private:
  inline void scatter();

  const std::uint32_t repetitions_;
  std::vector<repeat_request> requests_;  // never resized once sent: servers hold them
  std::uint32_t repetition_ = 0;
  std::uint64_t gathered_ = 0;
  std::uint64_t replies_ = 0;
  std::uint64_t wrong_answers_ = 0;
};

// Owned by the workload; returns Finished after answering its last request,
// so nothing has to be sent to end it.
class repeat_server final : public actor {
 public:
  repeat_server(actor_system& system, repeat_client& client, std::uint32_t repetitions)
      : actor{system}, client_{client}, repetitions_{repetitions} {}

  std::uint32_t served() const noexcept { return served_; }

  allocation receive(repeat_request& request) {
    request.answer = ++served_;
    client_ | request;
    return served_ == repetitions_ ? Finished : Nodelete;
  }

 private:
  repeat_client& client_;
  const std::uint32_t repetitions_;
  std::uint32_t served_ = 0;
};

inline void repeat_client::scatter() {
  for (repeat_request& request : requests_) *request.server | request;
}

// Runs the repeat workload on `system` and checks it, throwing
// std::runtime_error if the result is wrong (std::invalid_argument for
// parameters of zero). From a thread that is not one of the system's
// workers; blocks until the run is over (await_quiescence), so nothing else
// may be running on `system` meanwhile. The client is created first, then
// the servers, all round robin over the queues from this thread.
inline repeat_result run_repeat(actor_system& system, const repeat_params& params) {
  if (params.servers == 0 || params.repetitions == 0)
    throw std::invalid_argument{"repeat workload: servers and repetitions must be at least 1"};
  repeat_client client{system, params.repetitions};
  std::vector<std::unique_ptr<repeat_server>> servers;
  std::vector<repeat_server*> handles;
  servers.reserve(params.servers);
  handles.reserve(params.servers);
  for (std::uint32_t i = 0; i < params.servers; ++i)
    handles.push_back(
        servers.emplace_back(std::make_unique<repeat_server>(system, client, params.repetitions))
            .get());
  client.serve_with(handles);

  const std::uint64_t before = deliveries_so_far(system);
  repeat_go go;
  client | go;
  system.await_quiescence();

  const std::uint64_t expected = std::uint64_t{params.servers} * params.repetitions;
  const repeat_result result{.replies = client.replies(),
                             .messages = 2 * client.replies(),
                             .deliveries = deliveries_so_far(system) - before};
  if (!client.finished() || client.repetitions_done() != params.repetitions ||
      result.replies != expected)
    fail("repeat: the client gathered " + std::to_string(result.replies) + " of " +
         std::to_string(expected) + " replies over " +
         std::to_string(client.repetitions_done()) + " of " +
         std::to_string(params.repetitions) + " repetitions");
  if (client.wrong_answers() != 0)
    fail("repeat: " + std::to_string(client.wrong_answers()) +
         " replies carried the wrong repetition");
  for (const repeat_server* s : handles)
    if (!s->finished() || s->served() != params.repetitions)
      fail("repeat: a server served " + std::to_string(s->served()) + " of " +
           std::to_string(params.repetitions) + " requests");
  if (result.deliveries != result.messages + 1)
    fail("repeat: the system counted " + std::to_string(result.deliveries) +
         " deliveries, the actors " + std::to_string(result.messages + 1));
  return result;
}

}  // namespace tact::bench
