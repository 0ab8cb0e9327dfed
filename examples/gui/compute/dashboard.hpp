// The only code that touches the window: an actor bound to the GUI
// sponsor, so its messages run on the GUI thread. The coordinator reports
// to it; a periodic timer ticks it 25 times a second to plot each worker's
// messages per second, from the difference of two snapshots of the
// system's statistics.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QString>
#include <QWidget>

#include <tact/tact.hpp>

#include "messages.hpp"
#include "rate_plot.hpp"

// The widgets the dashboard writes to; main builds them.
struct dashboard_widgets {
  QWidget* window;
  QLabel* limit;
  QLabel* chunks;
  QPushButton* count;
  QPushButton* cancel;
  QProgressBar* progress;
  QLabel* result;
  QLabel* elapsed;  // of the job in progress, or of the last one
  rate_plot* plot;  // messages per second, per worker
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

  // Each worker's messages per second since the last tick, plotted.
  tact::allocation receive(tick&) {
    const tact::system_stats now = system().stats();
    if (previous_) {
      const tact::system_stats recent = now - *previous_;
      std::vector<double> rates;
      for (const tact::worker_stats& w : recent.workers)
        rates.push_back(recent.per_second(w.messages_processed));
      w_.plot->add(recent.taken, std::move(rates));
    }
    previous_ = now;
    const seconds elapsed = job_ != 0 ? clock::now() - started_ : last_;
    w_.elapsed->setText(QString::number(elapsed.count(), 'f', 2) + " s");
    retitle();
    return Nodelete;
  }

 private:
  // The window title tells a test (or a screen reader) the state, and
  // what the plot drew last.
  void title(const QString& text) {
    state_ = text;
    retitle();
  }
  void retitle() {
    const QString plotted = w_.plot->drawn().isEmpty() ? "" : " [plot: " + w_.plot->drawn() + "]";
    w_.window->setWindowTitle("tact compute: " + state_ + plotted);
  }

  dashboard_widgets w_;
  QString state_;
  std::uint64_t n_ = 0, chunks_ = 0;
  std::uint64_t job_ = 0;  // the job in progress; 0: none
  std::uint64_t job_n_ = 0, job_chunks_ = 0;
  clock::time_point started_;
  seconds last_{};  // how long the last job took
  std::optional<tact::system_stats> previous_;  // at the tick before
};
