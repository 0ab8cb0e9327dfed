#pragma once

// Runs a body in a forked child process, for checks that abort: what it
// wrote on standard error, and whether it aborted. Catch2 runs in the
// parent only.

#include <catch2/catch.hpp>

#include <csignal>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace tact::test {

// What a child process wrote on standard error, and whether it aborted.
struct child_outcome {
  bool aborted = false;
  std::string error;
};

template <class Body>
child_outcome in_child(Body body) {
  int pipe_ends[2];
  REQUIRE(::pipe(pipe_ends) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGABRT, SIG_DFL);  // not Catch's handler, which would report a failure here
    ::dup2(pipe_ends[1], STDERR_FILENO);
    ::close(pipe_ends[0]);
    // Whatever happens, the child ends here: an exception must not climb
    // back into Catch and run the rest of the session in this process.
    try {
      body();
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  ::close(pipe_ends[1]);
  child_outcome outcome;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_ends[0], buffer, sizeof buffer)) > 0;)
    outcome.error.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_ends[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  outcome.aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  return outcome;
}

}  // namespace tact::test
