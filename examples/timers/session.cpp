// Classic timers: a session with a server sends it a keep-alive on every
// heartbeat of a periodic timer, and gives up on the server's reply when a
// one-shot deadline expires; the reply cancels the deadline. One session's
// server answers after three keep-alives, the other's never does.
// docs/timers.md quotes this file.
#include <chrono>
#include <cstdio>
#include <future>
#include <string>

#include <tact/tact.hpp>

using namespace std::chrono_literals;

struct session;

struct start : tact::message {};
struct reply : tact::message {
  reply() { set_allocation(tact::allocation::Delete); }  // made when needed, freed once received
};
struct keep_alive : tact::message {
  explicit keep_alive(session& s) : from{&s} {}
  session* from;
};

// Replies after hearing `answer_after` keep-alives; never, with 0.
struct server : tact::actor {
  explicit server(int answer_after) : answer_after_{answer_after} {}
  tact::allocation receive(keep_alive& m);

 private:
  int answer_after_;
  int heard_ = 0;
};

struct heartbeat : tact::message {};
struct timed_out : tact::message {};

struct session : tact::actor {
  session(server& s, std::chrono::milliseconds patience) : server_{s}, patience_{patience} {}

  heartbeat beat;
  timed_out expired;
  tact::timer deadline, pulse;

  tact::allocation receive(start&) {
    pulse = tact::send_every(40ms, *this, beat);  // 25 times a second
    deadline = tact::send_after(patience_, *this, expired);
    return Nodelete;
  }
  tact::allocation receive(heartbeat&) {
    server_ | alive_;
    return Nodelete;
  }
  tact::allocation receive(reply&) {
    if (deadline.cancel()) end("answered");  // won: `expired` will not be received
    return Nodelete;
  }
  tact::allocation receive(timed_out&) {
    end("timed out");
    return Nodelete;
  }

  std::promise<std::string> outcome;

 private:
  void end(const char* how) {
    pulse.cancel();  // a heartbeat already queued is dropped, not received
    outcome.set_value(how);
  }

  server& server_;
  std::chrono::milliseconds patience_;
  keep_alive alive_{*this};
};

tact::allocation server::receive(keep_alive& m) {
  if (++heard_ == answer_after_) *m.from | *new reply;
  return Nodelete;
}

int main() {
  tact::actor_system system;
  server answering{3}, silent{0};
  // Generous patience for the answering server: a loaded machine may be slow.
  session lucky{answering, 60s}, stranded{silent, 200ms};
  start go;
  lucky | go;
  stranded | go;  // a message may be sent to several actors

  std::future<std::string> first = lucky.outcome.get_future();
  std::future<std::string> second = stranded.outcome.get_future();
  const std::string answered = first.wait_for(120s) == std::future_status::ready ? first.get() : "";
  const std::string gave_up =
      second.wait_for(120s) == std::future_status::ready ? second.get() : "";
  std::printf("a session whose server answers: %s\n", answered.c_str());
  std::printf("a session whose server is silent: %s\n", gave_up.c_str());

  lucky | tact::finished_msg;
  stranded | tact::finished_msg;
  answering | tact::finished_msg;
  silent | tact::finished_msg;
  system.stop();
  return answered == "answered" && gave_up == "timed out" ? 0 : 1;
}
