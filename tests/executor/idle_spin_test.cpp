#include <catch2/catch.hpp>

#include <cstdint>

#include "executor/idle_spin.hpp"

using tact::detail::idle_spin;

namespace {

// The sweeps of one stretch that spin, then those that yield, as the
// worker's loop asks (see pool_worker::loop).
struct stretch {
  std::uint64_t spun = 0;
  std::uint64_t yielded = 0;
};
stretch walk(const idle_spin& s) {
  stretch r;
  std::uint64_t sweep = 1;
  for (; s.spins(sweep); ++sweep) ++r.spun;
  for (; s.yields(sweep); ++sweep) ++r.yielded;
  return r;
}

// Parks once, skipping the probe that comes every probe_every parks.
void park_past_probes(idle_spin& s, std::uint32_t& parks) {
  s.parked();
  if (++parks % idle_spin::probe_every == 0) walk(s);
}

// Parks until the next stretch is a probe, which comes within
// probe_every parks.
void park_until_probe(idle_spin& s, std::uint64_t whole) {
  for (std::uint32_t i = 0; i < idle_spin::probe_every; ++i) {
    s.parked();
    if (walk(s).spun == whole) return;
  }
  FAIL("no probe in " << idle_spin::probe_every << " parks");
}

}  // namespace

TEST_CASE("an idle worker first spins the configured sweeps, then yields, then parks") {
  const idle_spin s{2000, 16};
  const stretch r = walk(s);
  CHECK(r.spun == 2000);
  CHECK(r.yielded == 16);
}

TEST_CASE("stretches that end in a park halve the spin down to its floor, without yields") {
  idle_spin s{2000, 16};
  std::uint32_t parks = 0;
  std::uint64_t last = s.budget();
  for (int i = 0; i < 10; ++i) {
    park_past_probes(s, parks);
    CHECK(s.budget() == std::max<std::uint64_t>(idle_spin::floor, last / 2));
    last = s.budget();
  }
  REQUIRE(s.budget() == idle_spin::floor);
  s.parked();  // the 11th park: not a probe
  const stretch r = walk(s);
  CHECK(r.spun == idle_spin::floor);
  CHECK(r.yielded == 0);
}

TEST_CASE("one stretch in probe_every after a park spins and yields the whole configured budget") {
  idle_spin s{2000, 16};
  int probes = 0;
  for (std::uint32_t park = 1; park <= 4 * idle_spin::probe_every; ++park) {
    s.parked();
    const stretch r = walk(s);
    if (r.spun == 2000) {
      ++probes;
      CHECK(park % idle_spin::probe_every == 0);
      CHECK(r.yielded == 16);
    } else {
      CHECK(r.spun == s.budget());
    }
  }
  CHECK(probes == 4);
}

TEST_CASE("work caught late in the spin doubles the budget past where it was caught") {
  idle_spin s{2000, 16};
  std::uint32_t parks = 0;
  for (int i = 0; i < 10; ++i) park_past_probes(s, parks);
  REQUIRE(s.budget() == idle_spin::floor);

  SECTION("caught in the first half: the budget stays") {
    s.caught(idle_spin::floor / 2);
    CHECK(s.budget() == idle_spin::floor);
  }
  SECTION("caught in the second half: twice the stretch") {
    s.caught(idle_spin::floor - 3);
    CHECK(s.budget() == 2 * (idle_spin::floor - 3));
  }
  SECTION("a probe that catches past the budget raises it there, up to the configured spins") {
    park_until_probe(s, 2000);
    s.caught(700);
    CHECK(s.budget() == 1400);
    CHECK(walk(s).spun == 1400);
    s.caught(1300);
    CHECK(s.budget() == 2000);
  }
  SECTION("work found while yielding does not raise it") {
    park_until_probe(s, 2000);
    s.caught(2000 + 5);
    CHECK(s.budget() == idle_spin::floor);
    CHECK(walk(s).spun == idle_spin::floor);
  }
}

TEST_CASE("a configuration that parks at once, or spins less than the floor, is kept as it is") {
  SECTION("no spins, no yields: every stretch parks at its first empty sweep") {
    idle_spin s{0, 0};
    for (int i = 0; i < 40; ++i) {
      const stretch r = walk(s);
      CHECK(r.spun == 0);
      CHECK(r.yielded == 0);
      s.parked();
    }
  }
  SECTION("fewer spins than the floor: always all of them") {
    idle_spin s{50, 3};
    for (int i = 0; i < 40; ++i) {
      const stretch r = walk(s);
      CHECK(r.spun == 50);
      CHECK(r.yielded == 3);
      s.parked();
    }
    s.caught(40);
    CHECK(walk(s).spun == 50);
  }
}
