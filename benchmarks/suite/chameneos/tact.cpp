// chameneos (Savina's "chameneos", no. 7 of the list in the CAF locality thesis, 6.2.1):
// `chameneos` creatures meet in pairs through one mall until `meetings`
// meetings have taken place. Every request goes through the mall, so it
// measures a hot spot: one actor that all others send to, whose mailbox is
// fed from every worker at once, while the pairs it makes exchange messages
// directly.
//
// Savina's protocol, kept as is: each chameneo starts by sending Meet(its
// colour) to the mall. The mall keeps the first Meet's chameneo waiting and
// forwards the next Meet to it (one meeting); once `meetings` are done it
// answers every Meet with Exit. A chameneo that receives a forwarded Meet
// takes the complement of the two colours, sends Change(new colour) to the
// other one and a new Meet to the mall; one that receives Change adopts the
// colour and sends a new Meet. On Exit a chameneo fades, sends the mall its
// meeting count and exits; the mall exits when all have reported. Colours
// start red, yellow, blue, red, ... by index. In all
//   (chameneos + 2 meetings) Meet to the mall + meetings forwarded Meet
//   + meetings Change + chameneos Exit + chameneos MeetingCount.
//
// Parameters (full / --quick):
//   --chameneos  creatures (4,000 / 100). Savina's default is 100; the CAF
//                locality thesis (6.2.1) uses 4,000.
//   --meetings   meetings (800,000 / 20,000). Savina's default is 200,000,
//                the CAF locality study's 800,000.
//
// Every chameneo owns one Meet object, and its partner answers in it: the
// mall forwards a Meet to the chameneo waiting, which writes the new colour
// into it and sends the same object back to its owner as the Change (tact's
// request-and-reply-in-one-object idiom; a chameneo waits for exactly one
// answer per Meet, so the object is never in flight twice). Each also owns
// its MeetingCount, and the mall one Exit it sends to all. So the run
// allocates nothing. Chameneos are started by main (the mall's onPostStart
// in Savina); the timed region covers creating them, their first Meets and
// the run to quiescence.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

// In Savina's order (ChameneosHelper.Color).
enum class colour : std::uint8_t { red, yellow, blue, faded };

// ChameneosHelper.complement.
colour complement(colour mine, colour other) noexcept {
  if (mine == colour::faded || other == colour::faded) return colour::faded;
  if (mine == other) return mine;
  // The third colour: the one that is neither.
  return static_cast<colour>(3 - static_cast<int>(mine) - static_cast<int>(other));
}

class chameneo;

// A Meet on its way to the mall and from the mall to the waiting chameneo;
// then, back at its owner, the partner's Change.
struct meet_msg : tact::message {
  colour of = colour::faded;  // the owner's colour; in a Change, the new one
  chameneo* owner = nullptr;
};
struct exit_msg : tact::message {};
struct meeting_count_msg : tact::message {
  std::int64_t meetings = 0;
};

class mall final : public tact::actor {
 public:
  mall(tact::actor_system& system, std::int64_t meetings, std::int64_t chameneos)
      : actor{system}, meetings_left_{meetings}, chameneos_{chameneos} {}

  std::uint64_t received() const noexcept { return received_; }
  std::int64_t sum_meetings() const noexcept { return sum_meetings_; }
  std::int64_t faded() const noexcept { return faded_; }

  inline tact::allocation receive(meet_msg& m);
  tact::allocation receive(meeting_count_msg& m) {
    ++received_;
    sum_meetings_ += m.meetings;
    return ++faded_ == chameneos_ ? Finished : Nodelete;
  }

 private:
  std::int64_t meetings_left_;
  const std::int64_t chameneos_;
  chameneo* waiting_ = nullptr;
  std::int64_t sum_meetings_ = 0;
  std::int64_t faded_ = 0;
  std::uint64_t received_ = 0;
  exit_msg exit_;  // sent to every chameneo: it carries nothing
};

class chameneo final : public tact::actor {
 public:
  chameneo(tact::actor_system& system, mall& place, colour start)
      : actor{system}, mall_{place}, colour_{start} {
    meet_.owner = this;
  }

  std::uint64_t received() const noexcept { return received_; }
  colour current() const noexcept { return colour_; }

  // Savina's onPostStart: the first Meet. From main, before the run.
  void start() { request_meeting(); }

  tact::allocation receive(meet_msg& m) {
    ++received_;
    ++meetings_;
    if (m.owner == this) {
      // Our own Meet, answered: Savina's ChangeMsg.
      colour_ = m.of;
    } else {
      // Another's Meet, forwarded: this chameneo was the one waiting.
      colour_ = complement(colour_, m.of);
      m.of = colour_;
      *m.owner | m;
    }
    request_meeting();
    return Nodelete;
  }
  tact::allocation receive(exit_msg&) {
    ++received_;
    colour_ = colour::faded;
    count_.meetings = meetings_;
    mall_ | count_;
    return Finished;
  }

 private:
  void request_meeting() {
    meet_.of = colour_;
    mall_ | meet_;
  }

  mall& mall_;
  colour colour_;
  std::int64_t meetings_ = 0;
  std::uint64_t received_ = 0;
  meet_msg meet_;
  meeting_count_msg count_;
};

tact::allocation mall::receive(meet_msg& m) {
  ++received_;
  if (meetings_left_ == 0) {
    *m.owner | exit_;
  } else if (waiting_ == nullptr) {
    waiting_ = m.owner;
  } else {
    --meetings_left_;
    *waiting_ | m;
    waiting_ = nullptr;
  }
  return Nodelete;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::chameneos::params p = suite::chameneos::read(o);

  tact::actor_system system{{.workers = o.threads()}};
  std::unique_ptr<mall> place;
  std::vector<std::unique_ptr<chameneo>> creatures;
  const double secs = suite::seconds([&] {
    place = std::make_unique<mall>(system, p.meetings, p.chameneos);
    creatures.reserve(static_cast<std::size_t>(p.chameneos));
    for (std::int64_t i = 0; i < p.chameneos; ++i)
      creatures.push_back(std::make_unique<chameneo>(system, *place, static_cast<colour>(i % 3)));
    for (auto& c : creatures) c->start();
    system.await_quiescence();
  });

  std::uint64_t delivered = place->received();
  suite::check(place->finished() && place->faded() == p.chameneos, "the mall did not finish");
  for (const auto& c : creatures) {
    suite::check(c->finished() && c->current() == colour::faded, "a chameneo did not fade");
    delivered += c->received();
  }
  suite::check(place->sum_meetings() == 2 * p.meetings,
               "the chameneos counted " + std::to_string(place->sum_meetings()) +
                   " meetings, expected " + std::to_string(2 * p.meetings));
  const std::uint64_t expected = suite::chameneos::messages(p);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  suite::report(o, "chameneos", "tact", secs, delivered);
}
