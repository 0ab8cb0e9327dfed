#include <catch2/catch.hpp>

#include <vector>

#include "executor/epochs.hpp"

namespace {

using tact::detail::epochs;

// Records which objects were freed, in order.
std::vector<int> freed;
void note_free(void* object) noexcept { freed.push_back(*static_cast<int*>(object)); }

}  // namespace

TEST_CASE("with nobody pinned, a retired object is freed by the next collect") {
  freed.clear();
  epochs e{2};
  int a = 1;
  e.pin(0);
  e.retire(0, &a, &note_free);
  e.unpin(0);
  CHECK(e.collect(0) == 0);
  CHECK(freed == std::vector<int>{1});
}

TEST_CASE("an object is not freed while a participant pinned before its retirement stays pinned") {
  freed.clear();
  epochs e{2};
  int a = 1;
  e.pin(1);  // participant 1 may have loaded the pointer to `a`
  e.pin(0);
  e.retire(0, &a, &note_free);
  e.unpin(0);
  for (int i = 0; i < 5; ++i) CHECK(e.collect(0) == 1);
  CHECK(freed.empty());
  e.unpin(1);
  CHECK(e.collect(0) == 0);
  CHECK(freed == std::vector<int>{1});
}

TEST_CASE("a participant that pins again after the retirement does not hold it back") {
  freed.clear();
  epochs e{2};
  int a = 1;
  e.pin(1);
  e.pin(0);
  e.retire(0, &a, &note_free);
  e.unpin(0);
  e.collect(0);
  // Participant 1 finished its batch and started another: it announces a
  // later epoch, so it cannot hold `a`.
  e.unpin(1);
  e.pin(1);
  e.collect(0);
  e.unpin(1);
  e.pin(1);
  CHECK(e.collect(0) == 0);
  CHECK(freed == std::vector<int>{1});
  e.unpin(1);
}

TEST_CASE("the retiring participant's own pin holds back only what it retired while pinned") {
  freed.clear();
  epochs e{1};
  int a = 1;
  int b = 2;
  e.pin(0);
  e.retire(0, &a, &note_free);
  CHECK(e.collect(0) == 1);  // we may still run `a`
  e.unpin(0);
  e.pin(0);
  e.retire(0, &b, &note_free);
  e.unpin(0);
  CHECK(e.collect(0) == 0);
  CHECK(freed == std::vector<int>{1, 2});
}

TEST_CASE("objects still retired when the domain ends are freed with it") {
  freed.clear();
  int a = 1;
  {
    epochs e{2};
    e.pin(1);
    e.pin(0);
    e.retire(0, &a, &note_free);
    e.unpin(0);
    e.collect(0);
    CHECK(freed.empty());
  }
  CHECK(freed == std::vector<int>{1});
}
