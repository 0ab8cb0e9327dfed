// Counting primes below N on the executor while a Qt window stays live.
// The window's sliders and buttons only send messages; a coordinator
// splits the count into chunks that counter actors run on the workers; the
// results come back to a dashboard actor bound to the Qt event loop, the
// only code that touches widgets; a periodic timer has it plot each
// worker's messages per second, 25 times a second. The Flood button has
// actors on the workers send the dashboard M reports, and the window stays
// live while the GUI thread runs them. docs/gui.md quotes this file.
//
//   example-gui-compute [--n N] [--chunks K] [--counters C] [--flood M]
#include <chrono>
#include <cstdint>

#include <QApplication>
#include <QCommandLineParser>
#include <QKeySequence>
#include <QShortcut>
#include <QTimer>

#include <tact/tact.hpp>

#include "../qt_sponsor.hpp"
#include "dashboard.hpp"
#include "flood.hpp"
#include "messages.hpp"
#include "window.hpp"
#include "work.hpp"

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  QApplication app{argc, argv};
  QCommandLineParser options;
  options.addHelpOption();
  options.addOptions({{"n", "Count the primes below <n>.", "n", "10000000"},
                      {"chunks", "Split the count into <k> chunks.", "k", "64"},
                      {"counters", "Counter actors sharing the chunks.", "c", "4"},
                      {"flood", "Flood the dashboard with <m> reports.", "m", "2000000"}});
  options.process(app);

  // The window outlives the actors, which are done before main returns.
  compute_window ui{options.value("n").toInt(), options.value("chunks").toInt()};

  // The actors: the dashboard on the GUI thread, the rest on the workers.
  tact::actor_system system;
  qt_sponsor gui{system};
  auto& board = gui.spawn<dashboard>(ui.shown);
  auto& work = system.spawn<coordinator>(board, options.value("counters").toUInt());
  auto& flood = system.spawn<flood_source>(board, options.value("flood").toULongLong());
  tick beat;
  tact::timer pulse = tact::send_every(40ms, board, beat);

  // Widgets only send. A slider's value goes to the coordinator, which
  // tells the dashboard what it will count.
  QObject::connect(ui.limit, &QSlider::valueChanged,
                   [&work](int n) { work | *new set_limit{static_cast<std::uint64_t>(n)}; });
  QObject::connect(ui.chunks, &QSlider::valueChanged,
                   [&work](int k) { work | *new set_chunks{static_cast<std::uint64_t>(k)}; });
  QObject::connect(ui.shown.count, &QPushButton::clicked, [&work] { work | *new start; });
  QObject::connect(ui.shown.cancel, &QPushButton::clicked, [&work] { work | *new cancel; });
  QObject::connect(ui.shown.flood, &QPushButton::clicked, [&flood] { flood | *new start_flood; });
  new QShortcut{QKeySequence::Quit, &ui.window, [&ui] { ui.window.close(); }};
  work | *new set_limit{static_cast<std::uint64_t>(ui.limit->value())} |
      *new set_chunks{static_cast<std::uint64_t>(ui.chunks->value())};

  ui.window.show();
  QTimer::singleShot(0, &ui.window, [&ui] { ui.write_layout(); });  // for the GUI test
  const int status = app.exec();

  // Closed: stop the ticks, let the coordinator wind down its counters and
  // the flood's source its senders, deliver what is still on its way to
  // the dashboard, then end it.
  pulse.cancel();
  work | *new shut_down;
  flood | *new shut_down;
  gui.run_until_quiescent();
  board | tact::delete_msg;
  gui.run_until_quiescent();
  return status;
}
