// A sponsor driven by Qt's event loop: actors spawned on it run on the GUI
// thread, between Qt's own events, so they may touch widgets. When a
// message arrives for them, the sponsor's wake function (called on the
// sending thread) posts a call to run_pending() to the loop.
#pragma once

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
  void post_run() {
    std::lock_guard guard{posting_};  // held only while posting: never long
    if (!open_) return;
    QMetaObject::invokeMethod(
        &loop_, [this] { run_pending(); }, Qt::QueuedConnection);
  }

  std::mutex posting_;
  bool open_ = true;  // guarded by posting_
  // Lives on the GUI thread, so what is posted to it runs there; destroyed
  // before the sponsor, taking any run still posted with it.
  QObject loop_;
};
