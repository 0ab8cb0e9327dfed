// A sponsor driven by Qt's event loop: actors spawned on it run on the GUI
// thread, between Qt's own events, so they may touch widgets. When a
// message arrives for them, the sponsor's wake function (called on the
// sending thread) posts a run to the loop. A run lasts one turn at most
// and posts the next if mail is left, so however much mail comes, the
// loop takes its input and paints between turns.
#pragma once

#include <chrono>
#include <mutex>

#include <QMetaObject>
#include <QObject>

#include <tact/sponsor.hpp>

class qt_sponsor : public tact::sponsor {
 public:
  // On the GUI thread, after the QApplication is made.
  explicit qt_sponsor(tact::actor_system& system) : tact::sponsor{system, [this] { post_run(); }} {}

  // loop_ goes before the base class stops calling post_run(): a send
  // arriving in between must find it closed, not destroyed.
  ~qt_sponsor() {
    std::lock_guard guard{posting_};
    open_ = false;
  }

 private:
  // How long a run may hold the GUI thread: well under a frame at 60 Hz
  // (16 ms), so that input and painting get most of every frame during a
  // flood, yet long enough that the event posted per turn costs little
  // against the thousands of messages a turn runs.
  static constexpr std::chrono::milliseconds turn{5};

  void post_run() {
    std::lock_guard guard{posting_};  // held only while posting: never long
    if (!open_) return;
    QMetaObject::invokeMethod(
        &loop_, [this] { run_pending(turn); }, Qt::QueuedConnection);
  }

  std::mutex posting_;
  bool open_ = true;  // guarded by posting_
  // Lives on the GUI thread, so what is posted to it runs there; destroyed
  // before the sponsor, taking any run still posted with it.
  QObject loop_;
};
