// The compute window: its widgets and their layout, nothing more. main
// wires the sliders and buttons to the coordinator and the flood's
// source; the dashboard writes to the rest.
#pragma once

#include <utility>

#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSlider>
#include <QTextStream>
#include <QVBoxLayout>
#include <QWidget>

#include "dashboard.hpp"
#include "rate_plot.hpp"

struct compute_window {
  compute_window(int n, int chunk_count) {
    limit = slider(1'000'000, 2'000'000'000, 1'000'000, 100'000'000, n);
    chunks = slider(1, 1024, 1, 16, chunk_count);
    shown = {.window = &window,
             .limit = new QLabel,
             .chunks = new QLabel,
             .count = new QPushButton{"&Count"},
             .cancel = new QPushButton{"Ca&ncel"},
             .flood = new QPushButton{"&Flood"},
             .progress = new QProgressBar,
             .result = new QLabel{"press Count"},
             .elapsed = new QLabel,
             .flooded = new QLabel{"press Flood"},
             .plot = new rate_plot};
    shown.cancel->setEnabled(false);
    auto* form = new QFormLayout;
    auto* limit_label = new QLabel{"&Limit"};
    limit_label->setBuddy(limit);
    form->addRow(limit_label, limit);
    form->addRow("primes below", shown.limit);
    auto* chunks_label = new QLabel{"C&hunks"};
    chunks_label->setBuddy(chunks);
    form->addRow(chunks_label, chunks);
    form->addRow("in chunks", shown.chunks);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(shown.count);
    buttons->addWidget(shown.cancel);
    buttons->addWidget(shown.flood);
    form->addRow(buttons);
    form->addRow(shown.progress);
    form->addRow("result", shown.result);
    form->addRow("elapsed", shown.elapsed);
    form->addRow("flood", shown.flooded);
    auto* telemetry = new QGroupBox{"Workers"};
    (new QVBoxLayout{telemetry})->addWidget(shown.plot);
    auto* layout = new QVBoxLayout{&window};
    layout->addLayout(form);
    layout->addWidget(telemetry);
    window.setWindowTitle("tact compute");
    window.resize(480, 480);
  }

  // Where the buttons are, for a test that clicks them as a person would:
  // if the environment variable TACT_GUI_LAYOUT names a file, writes one
  // "name x y" line per button, its centre in window coordinates. Call
  // once the window is laid out (from the event loop, after show()).
  void write_layout() const {
    const QString path = qEnvironmentVariable("TACT_GUI_LAYOUT");
    if (path.isEmpty()) return;
    QSaveFile out{path};  // appears whole or not at all
    if (!out.open(QIODevice::WriteOnly | QIODevice::Text)) return;
    QTextStream text{&out};
    for (const auto& [name, button] :
         {std::pair{"count", shown.count}, {"cancel", shown.cancel}, {"flood", shown.flood}}) {
      const QPoint centre = button->mapTo(&window, button->rect().center());
      text << name << ' ' << centre.x() << ' ' << centre.y() << '\n';
    }
    text.flush();
    out.commit();
  }

  QWidget window;
  QSlider* limit;
  QSlider* chunks;
  dashboard_widgets shown;  // what the dashboard writes to

 private:
  static QSlider* slider(int min, int max, int step, int page, int value) {
    auto* s = new QSlider{Qt::Horizontal};
    s->setRange(min, max);
    s->setSingleStep(step);
    s->setPageStep(page);
    s->setValue(value);
    return s;
  }
};
