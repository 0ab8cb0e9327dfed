// A live plot of each worker's messages per second over the last ten
// seconds, drawn with QPainter. The dashboard adds a sample on every tick;
// each repaint says what it drew (drawn()), which the dashboard puts in
// the window title for a person, or a test, to read.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <utility>
#include <vector>

#include <QColor>
#include <QPaintEvent>
#include <QPainter>
#include <QPen>
#include <QPointF>
#include <QPolygonF>
#include <QRectF>
#include <QString>
#include <QWidget>

class rate_plot : public QWidget {
  using clock = std::chrono::steady_clock;
  using seconds = std::chrono::duration<double>;

 public:
  static constexpr seconds shown{10.0};

  rate_plot() { setMinimumSize(360, 180); }

  // Each worker's messages per second over the interval that ends `when`.
  void add(clock::time_point when, std::vector<double> rates) {
    samples_.push_back({when, std::move(rates)});
    // Keep one sample from before the window, where its line comes from.
    while (samples_.size() > 2 && when - samples_[1].when >= shown) samples_.pop_front();
    update();
  }

  // What the last repaint showed: "2 workers, 10 s, peak 1234/s" (the
  // seconds of samples it covers, and the highest rate among them).
  const QString& drawn() const { return drawn_; }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p{this};
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    const QRectF area = QRectF{rect()}.adjusted(56, 8, -8, -24);
    const std::size_t workers = samples_.empty() ? 0 : samples_.back().rates.size();
    const clock::time_point end = samples_.empty() ? clock::time_point{} : samples_.back().when;
    const clock::time_point start = end - std::chrono::duration_cast<clock::duration>(shown);

    double peak = 0;
    for (const sample& s : samples_)
      if (s.when > start) peak = std::max(peak, *std::max_element(s.rates.begin(), s.rates.end()));
    const double top = ceiling(peak);

    // The frame and the scale: 0, half and all of `top` messages per second.
    p.setPen(palette().mid().color());
    for (int i = 0; i <= 2; ++i) {
      const double y = area.bottom() - area.height() * i / 2;
      p.drawLine(QPointF{area.left(), y}, QPointF{area.right(), y});
      p.drawText(QRectF{0, y - 8, area.left() - 4, 16}, Qt::AlignRight | Qt::AlignVCenter,
                 QString::number(top * i / 2, 'g', 3));
    }
    p.drawText(QRectF{area.left(), area.bottom() + 4, area.width(), 16}, Qt::AlignLeft,
               "messages per second, last 10 s");

    // One line per worker, oldest sample at the left edge (clipped).
    p.setClipRect(area);
    for (std::size_t w = 0; w < workers; ++w) {
      QPolygonF line;
      for (const sample& s : samples_) {
        const double x = area.right() - area.width() * seconds{end - s.when} / shown;
        line << QPointF{x, area.bottom() - area.height() * s.rates[w] / top};
      }
      p.setPen(QPen{colour(w, workers), 2});
      p.drawPolyline(line);
      p.drawText(QRectF{area.right() - 80, area.top() + 16.0 * static_cast<double>(w), 76, 16},
                 Qt::AlignRight, QString{"worker %1"}.arg(w));
    }

    const double covered =
        samples_.empty() ? 0.0 : std::min(seconds{end - samples_.front().when}, shown).count();
    drawn_ = QString{"%1 worker%2, %3 s, peak %4/s"}
                 .arg(workers)
                 .arg(workers == 1 ? "" : "s")
                 .arg(static_cast<int>(covered))
                 .arg(std::llround(peak));
  }

 private:
  struct sample {
    clock::time_point when;
    std::vector<double> rates;  // per worker
  };

  // The scale's top: 1, 2 or 5 times a power of ten, at least `peak` and 10.
  static double ceiling(double peak) {
    for (double power = 10;; power *= 10)
      for (double m : {1.0, 2.0, 5.0})
        if (m * power >= peak) return m * power;
  }

  static QColor colour(std::size_t w, std::size_t workers) {
    return QColor::fromHsv(static_cast<int>(360 * w / std::max<std::size_t>(workers, 1)), 200, 190);
  }

  std::deque<sample> samples_;
  QString drawn_;
};
