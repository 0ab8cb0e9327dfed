#pragma once

// remote_ping_pong's parameters, and what both remote workloads share
// (remote_throughput includes this file), for both engines: the server
// node in a child process. remote_ping_pong/tact.cpp documents the
// workload.
//
// Why a process of its own: two nodes in one process would share its
// allocator and its actor system's workers could run both sides, while a
// remote actor's real cost includes the kernel waking another process.
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suite.hpp"

namespace suite::remote {

// The server node, in a child process forked by the constructor. Fork
// before either process starts a thread (an actor system, a node): a
// child forked from a threaded process may only call async-signal-safe
// functions.
//
// The two talk over two pipes. The child says it is ready (its actors
// published) with one line, whatever the client needs to reach it (a port,
// an endpoint). The parent stops it by closing the other pipe, which the
// child also sees if the parent dies; and the child is killed outright if
// its parent dies while it is stuck elsewhere (PR_SET_PDEATHSIG), so that
// no server outlives its run.
class server_process {
 public:
  // The child's end: the server's body is given one.
  class side {
   public:
    // Tells the client that the server is ready and how to reach it (one
    // line, no '\n'). Call once.
    void ready(const std::string& contact) const {
      const std::string line = contact + '\n';
      for (std::size_t done = 0; done < line.size();) {
        const ssize_t n = ::write(ready_fd_, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the parent is gone: the stop below comes at once
        done += static_cast<std::size_t>(n);
      }
    }

    // Blocks until the parent stops the server, or ends.
    void wait_for_stop() const {
      char c = 0;
      while (true) {
        const ssize_t n = ::read(stop_fd_, &c, 1);
        if (n == 0 || (n < 0 && errno != EINTR)) return;
      }
    }

   private:
    friend class server_process;
    side(int ready_fd, int stop_fd) : ready_fd_{ready_fd}, stop_fd_{stop_fd} {}
    int ready_fd_;
    int stop_fd_;
  };

  // Forks. The child runs serve(side), which returns the child's exit
  // status (0: all well; it prints why on stderr otherwise), and ends with
  // _exit: the parent's atexit handlers and stdio buffers are not the
  // child's to run or flush.
  template <class Serve>
  explicit server_process(Serve&& serve) {
    int ready[2], stop[2];
    check(::pipe2(ready, O_CLOEXEC) == 0 && ::pipe2(stop, O_CLOEXEC) == 0,
          "no pipes to the server process");
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    check(pid_ >= 0, "cannot fork the server process");
    if (pid_ == 0) {
      ::close(ready[0]);
      ::close(stop[1]);
      // Set before the check: a parent that died in between is seen.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(3);
      int status = 2;
      try {
        status = std::forward<Serve>(serve)(side{ready[1], stop[0]});
      } catch (const std::exception& e) {
        std::fprintf(stderr, "server process: %s\n", e.what());
      } catch (...) {
        std::fprintf(stderr, "server process: an unknown exception\n");
      }
      std::fflush(stderr);
      ::_exit(status);
    }
    ::close(ready[1]);
    ::close(stop[0]);
    ready_fd_ = ready[0];
    stop_fd_ = stop[1];
  }

  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  // A server not stopped (the client failed on the way): killed, reaped.
  ~server_process() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    reap();
  }

  // What the server said once ready; fails the run if it ended first.
  std::string contact() {
    std::string line;
    char c = 0;
    while (true) {
      const ssize_t n = ::read(ready_fd_, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (c == '\n') return line;
      line += c;
    }
    const std::string how = describe(reap());
    fail("the server process ended before it was ready (" + how + ")");
  }

  // Stops the server and waits for it; fails the run unless it exited 0.
  void stop() {
    ::close(stop_fd_);
    stop_fd_ = -1;
    const int status = reap();
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the server process ended with " + describe(status));
  }

 private:
  int reap() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = 0;
    if (ready_fd_ >= 0) ::close(ready_fd_);
    if (stop_fd_ >= 0) ::close(stop_fd_);
    ready_fd_ = stop_fd_ = -1;
    return status;
  }

  static std::string describe(int status) {
    if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
    return "exit status " + std::to_string(WEXITSTATUS(status));
  }

  pid_t pid_ = 0;
  int ready_fd_ = -1;
  int stop_fd_ = -1;
};

// The port a CAF server's contact line names; fails the run if it names none.
inline std::uint16_t port_of(const std::string& contact) {
  std::uint32_t port = 0;
  for (char c : contact) {
    check(c >= '0' && c <= '9' && port <= 65'535, "the server's port '" + contact + "' is not one");
    port = port * 10 + static_cast<std::uint32_t>(c - '0');
  }
  check(!contact.empty() && port >= 1 && port <= 65'535,
        "the server's port '" + contact + "' is not one");
  return static_cast<std::uint16_t>(port);
}

// How long one ask (a round trip, or the throughput's final count) may
// take before the run counts as failed. Far above any reply time seen on
// loopback: it only turns a lost reply into a failure instead of a hang.
inline constexpr std::int64_t ask_deadline_seconds = 60;

}  // namespace suite::remote

namespace suite::remote_ping_pong {

struct parameters {
  std::uint64_t rounds;  // timed round trips, at least 1
  std::uint64_t warmup;  // untimed round trips before them
};

// rounds 20,000 (--quick 2,000); warmup 200 (--quick 50).
inline parameters read(options& o) {
  const auto rounds = o.param("rounds", 20'000, 2'000);
  const auto warmup = o.param("warmup", 200, 50);
  check(rounds >= 1, "--rounds must be at least 1");
  check(warmup >= 0, "--warmup must not be negative");
  return {static_cast<std::uint64_t>(rounds), static_cast<std::uint64_t>(warmup)};
}

}  // namespace suite::remote_ping_pong
