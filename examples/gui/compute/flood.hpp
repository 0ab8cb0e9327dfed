// A flood of messages to the dashboard, which runs them on the GUI thread:
// the Flood button has sender actors on the pool send it millions of
// reports, far more than the GUI thread runs in one go. Each sender keeps
// a few batches out and sends the next once the dashboard has counted one
// (a batch's last report carries the credit back), so the flood holds
// little memory, yet the sponsor's queue never runs empty while it lasts:
// only the adapter's budget per turn (qt_sponsor.hpp) lets the window
// answer meanwhile. And since the sponsor runs its messages in order, the
// short queue keeps an answer from waiting behind the whole flood.
#pragma once

#include <cstdint>
#include <vector>

#include <tact/tact.hpp>

#include "dashboard.hpp"
#include "messages.hpp"

class flood_sender : public tact::actor {
 public:
  // Reports per batch, and the batches each sender keeps out: enough that
  // the queue holds thousands of reports while a credit makes its way back
  // to the pool, and few enough that it never holds more than
  // batch * batches_out per sender.
  static constexpr std::uint64_t batch = 2048;
  static constexpr std::uint64_t batches_out = 4;

  explicit flood_sender(dashboard& board) : board_{board} {}

  tact::allocation receive(flood_share& m) {
    source_ = m.source;
    next_ = m.first;
    left_ = m.reports;
    while (out_ < batches_out && left_ != 0) send_batch();
    return out_ == 0 ? share_done() : Nodelete;
  }

  tact::allocation receive(flood_credit&) {
    --out_;
    if (left_ != 0) send_batch();
    return out_ == 0 ? share_done() : Nodelete;
  }

  // No more batches; those out still come back counted, and then the
  // source hears that this share is done.
  tact::allocation receive(flood_stop&) {
    left_ = 0;
    return Nodelete;
  }

 private:
  // The last report of a batch carries the credit back to this sender.
  // Both callers check that reports are left.
  void send_batch() {
    const std::uint64_t n = left_ < batch ? left_ : batch;
    for (std::uint64_t i = 1; i < n; ++i) board_ | *new report{next_++, {}};
    board_ | *new report{next_++, *this};
    left_ -= n;
    ++out_;
  }

  tact::allocation share_done();

  dashboard& board_;
  flood_source* source_ = nullptr;
  std::uint64_t next_ = 0, left_ = 0;  // the reports still to send
  std::uint64_t out_ = 0;              // batches sent and not yet counted
};

// Splits a flood into one share per sender; one flood at a time.
class flood_source : public tact::actor {
 public:
  static constexpr std::uint32_t senders = 4;

  flood_source(dashboard& board, std::uint64_t total) : board_{board}, total_{total} {
    for (std::uint32_t i = 0; i < senders; ++i)
      senders_.push_back(&system().spawn<flood_sender>(board));
  }

  tact::allocation receive(start_flood&) {
    if (busy_ != 0 || closing_) return Nodelete;  // a flood is on
    board_ | *new flood_started{total_};
    const std::uint64_t n = senders_.size();
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t from = total_ * i / n, to = total_ * (i + 1) / n;
      *senders_[i] | *new flood_share{from, to - from, *this};
    }
    busy_ = n;
    return Nodelete;
  }

  tact::allocation receive(share_sent&) {
    --busy_;
    return closing_ && busy_ == 0 ? finish() : Nodelete;
  }

  // Stops the flood; once every report sent has been counted (nothing is
  // on its way to the dashboard any more), the senders and the source
  // finish.
  tact::allocation receive(shut_down&) {
    closing_ = true;
    if (busy_ == 0) return finish();
    for (flood_sender* s : senders_) *s | *new flood_stop;
    return Nodelete;
  }

 private:
  tact::allocation finish() {
    for (flood_sender* s : senders_) *s | tact::delete_msg;
    return Delete;
  }

  dashboard& board_;
  std::uint64_t total_;
  std::vector<flood_sender*> senders_;
  std::uint64_t busy_ = 0;  // senders whose share is not all counted yet
  bool closing_ = false;
};

inline tact::allocation flood_sender::share_done() {
  *source_ | *new share_sent;
  return Nodelete;
}
