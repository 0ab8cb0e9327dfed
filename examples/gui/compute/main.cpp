// Counting primes below N on the executor while a Qt window stays live.
// The window's sliders and buttons only send messages; a coordinator
// splits the count into chunks that counter actors run on the workers; the
// results come back to a dashboard actor bound to the Qt event loop, the
// only code that touches widgets; a periodic timer refreshes its telemetry
// 25 times a second. docs/gui.md quotes this file.
//
//   example-gui-compute [--n N] [--chunks K] [--counters C]
#include <chrono>
#include <cstdint>

#include <QApplication>
#include <QCommandLineParser>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QShortcut>
#include <QSlider>
#include <QVBoxLayout>

#include <tact/tact.hpp>

#include "../qt_sponsor.hpp"
#include "dashboard.hpp"
#include "messages.hpp"
#include "work.hpp"

using namespace std::chrono_literals;

namespace {

QSlider* slider(int min, int max, int step, int page, int value) {
  auto* s = new QSlider{Qt::Horizontal};
  s->setRange(min, max);
  s->setSingleStep(step);
  s->setPageStep(page);
  s->setValue(value);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app{argc, argv};
  QCommandLineParser options;
  options.addHelpOption();
  options.addOptions({{"n", "Count the primes below <n>.", "n", "10000000"},
                      {"chunks", "Split the count into <k> chunks.", "k", "64"},
                      {"counters", "Counter actors sharing the chunks.", "c", "4"}});
  options.process(app);

  // The window. Its widgets outlive the actors, which are done before main
  // returns.
  QWidget window;
  QSlider* limit =
      slider(1'000'000, 2'000'000'000, 1'000'000, 100'000'000, options.value("n").toInt());
  QSlider* chunks = slider(1, 1024, 1, 16, options.value("chunks").toInt());
  dashboard_widgets w{.window = &window,
                      .limit = new QLabel,
                      .chunks = new QLabel,
                      .count = new QPushButton{"&Count"},
                      .cancel = new QPushButton{"Ca&ncel"},
                      .progress = new QProgressBar,
                      .result = new QLabel{"press Count"},
                      .rate = new QLabel,
                      .processed = new QLabel,
                      .steals = new QLabel,
                      .elapsed = new QLabel};
  w.cancel->setEnabled(false);
  auto* form = new QFormLayout;
  auto* limit_label = new QLabel{"&Limit"};
  limit_label->setBuddy(limit);
  form->addRow(limit_label, limit);
  form->addRow("primes below", w.limit);
  auto* chunks_label = new QLabel{"C&hunks"};
  chunks_label->setBuddy(chunks);
  form->addRow(chunks_label, chunks);
  form->addRow("in chunks", w.chunks);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(w.count);
  buttons->addWidget(w.cancel);
  form->addRow(buttons);
  form->addRow(w.progress);
  form->addRow("result", w.result);
  auto* telemetry = new QGroupBox{"Telemetry"};
  auto* numbers = new QFormLayout{telemetry};
  numbers->addRow("messages per second", w.rate);
  numbers->addRow("messages processed", w.processed);
  numbers->addRow("queues stolen", w.steals);
  numbers->addRow("elapsed", w.elapsed);
  auto* layout = new QVBoxLayout{&window};
  layout->addLayout(form);
  layout->addWidget(telemetry);
  window.setWindowTitle("tact compute");
  window.resize(480, 360);

  // The actors: the dashboard on the GUI thread, the rest on the workers.
  tact::actor_system system;
  qt_sponsor gui{system};
  auto& board = gui.spawn<dashboard>(w);
  auto& work = system.spawn<coordinator>(board, options.value("counters").toUInt());
  tick beat;
  tact::timer pulse = tact::send_every(40ms, board, beat);

  // Widgets only send. A slider's value goes to the coordinator, which
  // tells the dashboard what it will count.
  QObject::connect(limit, &QSlider::valueChanged,
                   [&work](int n) { work | *new set_limit{static_cast<std::uint64_t>(n)}; });
  QObject::connect(chunks, &QSlider::valueChanged,
                   [&work](int k) { work | *new set_chunks{static_cast<std::uint64_t>(k)}; });
  QObject::connect(w.count, &QPushButton::clicked, [&work] { work | *new start; });
  QObject::connect(w.cancel, &QPushButton::clicked, [&work] { work | *new cancel; });
  new QShortcut{QKeySequence::Quit, &window, [&window] { window.close(); }};
  work | *new set_limit{static_cast<std::uint64_t>(limit->value())} |
      *new set_chunks{static_cast<std::uint64_t>(chunks->value())};

  window.show();
  const int status = app.exec();

  // Closed: stop the ticks, let the coordinator wind down its counters,
  // deliver what is still on its way to the dashboard, then end it.
  pulse.cancel();
  work | *new shut_down;
  gui.run_until_quiescent();
  board | tact::delete_msg;
  gui.run_until_quiescent();
  return status;
}
