// The only code that touches the window: an actor bound to the GUI
// sponsor, so its messages run on the GUI thread. The coordinator reports
// to it; a periodic timer ticks it 25 times a second to refresh the
// telemetry from the system's statistics.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>

#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QString>
#include <QWidget>

#include <tact/tact.hpp>

#include "messages.hpp"

// The widgets the dashboard writes to; main builds them.
struct dashboard_widgets {
  QWidget* window;
  QLabel* limit;
  QLabel* chunks;
  QPushButton* count;
  QPushButton* cancel;
  QProgressBar* progress;
  QLabel* result;
  QLabel* rate;       // messages processed per second
  QLabel* processed;  // messages processed in all
  QLabel* steals;
  QLabel* elapsed;  // of the job in progress, or of the last one
};

class dashboard : public tact::actor {
  using clock = std::chrono::steady_clock;
  using seconds = std::chrono::duration<double>;

 public:
  explicit dashboard(const dashboard_widgets& w) : w_{w} {}

  tact::allocation receive(settings& m) {
    n_ = m.n;
    chunks_ = m.chunks;
    w_.limit->setText(QString::number(n_));
    w_.chunks->setText(QString::number(chunks_));
    if (job_ == 0) title(QString{"ready, primes below %1 in %2 chunks"}.arg(n_).arg(chunks_));
    return Nodelete;
  }

  tact::allocation receive(started& m) {
    job_ = m.job;
    job_n_ = n_;
    job_chunks_ = chunks_;
    started_ = clock::now();
    w_.progress->setRange(0, static_cast<int>(job_chunks_));
    w_.progress->setValue(0);
    w_.result->setText("counting...");
    w_.cancel->setEnabled(true);
    title(QString{"counting primes below %1"}.arg(job_n_));
    return Nodelete;
  }

  tact::allocation receive(progress& m) {
    if (m.job == job_) w_.progress->setValue(static_cast<int>(m.done));
    return Nodelete;
  }

  tact::allocation receive(counted& m) {
    if (m.job != job_) return Nodelete;
    job_ = 0;
    last_ = seconds{m.seconds};
    w_.progress->setValue(static_cast<int>(job_chunks_));
    w_.cancel->setEnabled(false);
    const QString text =
        QString{"%1 primes below %2 (%3 s)"}.arg(m.primes).arg(job_n_).arg(m.seconds, 0, 'f', 2);
    w_.result->setText(text);
    title(text);
    return Nodelete;
  }

  tact::allocation receive(cancelled& m) {
    if (m.job != job_) return Nodelete;
    job_ = 0;
    last_ = clock::now() - started_;
    w_.cancel->setEnabled(false);
    w_.result->setText("cancelled");
    title(QString{"cancelled at %1 of %2 chunks"}.arg(w_.progress->value()).arg(job_chunks_));
    return Nodelete;
  }

  // Messages per second over the last second, from the system's counters.
  tact::allocation receive(tick&) {
    const auto now = clock::now();
    const tact::system_stats stats = system().stats();
    samples_.push_back({now, stats.total.messages_processed});
    while (now - samples_.front().when > std::chrono::seconds{1}) samples_.pop_front();
    const double span = std::chrono::duration<double>{now - samples_.front().when}.count();
    const auto recent = samples_.back().processed - samples_.front().processed;
    w_.rate->setText(QString::number(span > 0 ? static_cast<double>(recent) / span : 0.0, 'f', 0));
    w_.processed->setText(QString::number(stats.total.messages_processed));
    w_.steals->setText(QString::number(stats.total.steals));
    const seconds elapsed = job_ != 0 ? clock::now() - started_ : last_;
    w_.elapsed->setText(QString::number(elapsed.count(), 'f', 2) + " s");
    return Nodelete;
  }

 private:
  // The window title tells a test (or a screen reader) the state.
  void title(const QString& text) { w_.window->setWindowTitle("tact compute: " + text); }

  struct sample {
    clock::time_point when;
    std::uint64_t processed;
  };

  dashboard_widgets w_;
  std::uint64_t n_ = 0, chunks_ = 0;
  std::uint64_t job_ = 0;  // the job in progress; 0: none
  std::uint64_t job_n_ = 0, job_chunks_ = 0;
  clock::time_point started_;
  seconds last_{};  // how long the last job took
  std::deque<sample> samples_;
};
