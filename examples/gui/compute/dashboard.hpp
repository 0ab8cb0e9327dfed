// The only code that touches the window: an actor bound to the GUI
// sponsor, so its messages run on the GUI thread. The coordinator reports
// to it, and so do the flood's senders, a report per message; a periodic
// timer ticks it 25 times a second to show the flood's progress and plot
// each worker's messages per second, from the difference of two snapshots
// of the system's statistics.
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
  QPushButton* flood;
  QProgressBar* progress;
  QLabel* result;
  QLabel* elapsed;  // of the job in progress, or of the last one
  QLabel* flooded;  // reports of the flood counted so far
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

  tact::allocation receive(flood_started& m) {
    flood_total_ = m.total;
    flood_arrived_ = 0;
    flood_seen_.assign(flood_total_, false);
    flood_twice_ = 0;
    flood_started_ = clock::now();
    flooding_ = true;
    w_.flood->setEnabled(false);
    if (flood_total_ == 0) return flood_over();
    show_flood();
    retitle();
    return Nodelete;
  }

  // One of millions. Each marks its value seen, to check that every
  // report comes once, and updates the flood's label at once, as a naive
  // view would: about a microsecond of work on the GUI thread, so a flood
  // runs there for seconds. The title follows on each tick.
  tact::allocation receive(report& m) {
    ++flood_arrived_;
    if (m.value < flood_total_ && !flood_seen_[m.value]) {
      flood_seen_[m.value] = true;
    } else {
      ++flood_twice_;
    }
    if (m.credit_to) m.credit_to | *new flood_credit;
    if (flood_arrived_ == flood_total_) return flood_over();
    show_flood();
    return Nodelete;
  }

  // Each worker's messages per second since the last tick, plotted; the
  // title, with the flood's progress.
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
  // The window title tells a test (or a screen reader) the state, how far
  // the last flood got, and what the plot drew last.
  void title(const QString& text) {
    state_ = text;
    retitle();
  }
  void retitle() {
    const QString plotted = w_.plot->drawn().isEmpty() ? "" : " [plot: " + w_.plot->drawn() + "]";
    w_.window->setWindowTitle("tact compute: " + state_ + flood_ + plotted);
  }
  tact::allocation flood_over() {
    flooding_ = false;
    flood_took_ = clock::now() - flood_started_;
    w_.flood->setEnabled(true);
    show_flood();
    retitle();
    return Nodelete;
  }
  // "N of M" reports counted; once all have come, how long they took; and
  // how many came twice (or with a value out of range), if any.
  void show_flood() {
    QString text = QString{"%1 of %2"}.arg(flood_arrived_ - flood_twice_).arg(flood_total_);
    if (flood_twice_ != 0) text += QString{", %1 twice"}.arg(flood_twice_);
    if (!flooding_) text += QString{" in %1 s"}.arg(flood_took_.count(), 0, 'f', 2);
    w_.flooded->setText(text);
    flood_ = " [flood: " + text + "]";
  }

  dashboard_widgets w_;
  QString state_;
  std::uint64_t n_ = 0, chunks_ = 0;
  std::uint64_t job_ = 0;  // the job in progress; 0: none
  std::uint64_t job_n_ = 0, job_chunks_ = 0;
  clock::time_point started_;
  seconds last_{};  // how long the last job took
  // The flood in progress (or the last one).
  bool flooding_ = false;
  QString flood_;  // its part of the title; empty before the first
  std::uint64_t flood_total_ = 0, flood_arrived_ = 0, flood_twice_ = 0;
  std::vector<bool> flood_seen_;  // by value
  clock::time_point flood_started_;
  seconds flood_took_{};
  std::optional<tact::system_stats> previous_;  // at the tick before
};
