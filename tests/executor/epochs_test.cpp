#include <catch2/catch.hpp>

#include <algorithm>
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

// A stalled epoch (epochs.hpp): a participant pinned for long, as a worker
// descheduled in the middle of its batch is, holds back only the object it
// marked with protect(), once the limbo is long.
TEST_CASE("a participant stalled in its pin holds back only the object it marked") {
  if (!tact::detail::can_fence_heavily()) {
    WARN("the kernel gives no membarrier: the epochs wait for every pin, as before");
    return;
  }
  freed.clear();
  constexpr int count = 3000;
  constexpr std::size_t stalled_most = 1000;
  epochs e{2, stalled_most};
  std::vector<object> objects;
  objects.reserve(2 * count);
  for (int i = 0; i < 2 * count; ++i) objects.emplace_back(i);
  object* const running = &objects[7];
  e.pin(1);
  CHECK(e.protect(1, [&] { return running; }) == running);
  e.pin(0);
  for (int i = 0; i < count; ++i) {
    e.retire(0, &objects[static_cast<std::size_t>(i)]);
    CHECK(e.retired(0) < stalled_most + 64);  // the bound, and one collect's worth
  }
  e.collect(0);
  CHECK(e.retired(0) < stalled_most);
  CHECK(std::find(freed.begin(), freed.end(), 7) == freed.end());
  CHECK(freed.size() + e.retired(0) == count);
  // Its next dispatch marks another object: the first goes at the next
  // stalled collect.
  object* const next = &objects[count];
  CHECK(e.protect(1, [&] { return next; }) == next);
  for (int i = count + 1; i < 2 * count; ++i) e.retire(0, &objects[static_cast<std::size_t>(i)]);
  e.collect(0);
  CHECK(std::find(freed.begin(), freed.end(), 7) != freed.end());
  CHECK(e.retired(0) < stalled_most);
  e.unpin(0);
  e.unpin(1);
  CHECK(e.collect(0) == 0);
}

// Many runners marking (a system with sponsors): every mark still keeps
// its object.
TEST_CASE("with many participants marking, a stalled collect still keeps every marked object") {
  if (!tact::detail::can_fence_heavily()) {
    WARN("the kernel gives no membarrier: the epochs wait for every pin, as before");
    return;
  }
  freed.clear();
  constexpr std::uint32_t readers = 70;
  constexpr int count = 200;
  epochs e{readers + 1, 100};
  std::vector<object> objects;
  objects.reserve(count);
  for (int i = 0; i < count; ++i) objects.emplace_back(i);
  // Reader r marks object 2r: 70 marks, every other object up to 138.
  for (std::uint32_t r = 0; r < readers; ++r) {
    e.pin(r + 1);
    object* const marked = &objects[2 * r];
    CHECK(e.protect(r + 1, [&] { return marked; }) == marked);
  }
  e.pin(0);
  for (object& o : objects) e.retire(0, &o);
  e.collect(0);
  CHECK(!freed.empty());  // the stalled collects ran
  CHECK(freed.size() + e.retired(0) == count);
  for (const int id : freed) CHECK((id % 2 == 1 || id >= 2 * static_cast<int>(readers)));
  for (std::uint32_t r = 0; r <= readers; ++r) e.unpin(r);
  CHECK(e.collect(0) == 0);
}

TEST_CASE("protect returns a pointer read twice in a row around its mark") {
  epochs e{1};
  object a{1};
  object b{2};
  // The pointer moves once between the first read and the second.
  std::vector<object*> reads{&a, &b, &b};
  std::size_t at = 0;
  e.pin(0);
  CHECK(e.protect(0, [&] { return reads[at++]; }) == &b);
  CHECK(at == 3);
  e.unpin(0);
}
