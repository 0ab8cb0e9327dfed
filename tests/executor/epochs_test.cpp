#include <catch2/catch.hpp>

#include <vector>

#include "executor/epochs.hpp"

namespace {

using tact::detail::epochs;
using tact::detail::retired_link;

// Records which objects were freed, in order.
std::vector<int> freed;

// A retirable object: its link is its first base.
struct object : retired_link {
  explicit object(int id) noexcept : id{id} {
    free = [](retired_link* link) noexcept { freed.push_back(static_cast<object*>(link)->id); };
  }
  int id;
};

}  // namespace

TEST_CASE("with nobody pinned, a retired object is freed by the next collect") {
  freed.clear();
  epochs e{2};
  object a{1};
  e.pin(0);
  e.retire(0, &a);
  e.unpin(0);
  CHECK(e.collect(0) == 0);
  CHECK(freed == std::vector<int>{1});
}

TEST_CASE("an object is not freed while a participant pinned before its retirement stays pinned") {
  freed.clear();
  epochs e{2};
  object a{1};
  e.pin(1);  // participant 1 may have loaded the pointer to `a`
  e.pin(0);
  e.retire(0, &a);
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
  object a{1};
  e.pin(1);
  e.pin(0);
  e.retire(0, &a);
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
  object a{1};
  object b{2};
  e.pin(0);
  e.retire(0, &a);
  CHECK(e.collect(0) == 1);  // we may still run `a`
  e.unpin(0);
  e.pin(0);
  e.retire(0, &b);
  e.unpin(0);
  CHECK(e.collect(0) == 0);
  CHECK(freed == std::vector<int>{1, 2});
}

TEST_CASE("objects still retired when the domain ends are freed with it") {
  freed.clear();
  object a{1};
  {
    epochs e{2};
    e.pin(1);
    e.pin(0);
    e.retire(0, &a);
    e.unpin(0);
    e.collect(0);
    CHECK(freed.empty());
  }
  CHECK(freed == std::vector<int>{1});
}

TEST_CASE("what a parking participant abandons is freed by another one's collect") {
  freed.clear();
  epochs e{2};
  std::vector<object> objects;
  objects.reserve(300);
  for (int i = 0; i < 300; ++i) objects.emplace_back(i);
  e.pin(1);  // holds everything retired from here back
  e.pin(0);
  for (object& o : objects) e.retire(0, &o);  // several collects run meanwhile
  e.unpin(0);
  CHECK(e.retired(0) == 300);
  e.abandon(0);  // parking: the objects move to the shared list
  CHECK(e.retired(0) == 0);
  CHECK(freed.empty());
  e.unpin(1);
  e.collect(1);  // the other participant frees them
  CHECK(freed.size() == 300);
}
