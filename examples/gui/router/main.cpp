// Events routed between windows through actors. A control window
// publishes what is typed in it and the level of its slider; a router
// actor passes each publication to the subscribers of its topic; each
// display window has a subscriber actor bound to the Qt event loop, which
// updates that window. Check boxes subscribe and unsubscribe a display.
// docs/gui.md quotes this file.
#include <string>

#include <QApplication>
#include <QFormLayout>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QShortcut>
#include <QSlider>

#include <tact/transactional.hpp>

#include "../qt_sponsor.hpp"
#include "display.hpp"
#include "router.hpp"

namespace tx = tact::tx;

int main(int argc, char** argv) {
  QApplication app{argc, argv};
  const std::string message_topic = "message", level_topic = "level";

  // The windows outlive the actors, which are done before main returns.
  QWidget control;
  auto* text = new QLineEdit;
  auto* send = new QPushButton{"&Publish"};
  auto* level = new QSlider{Qt::Horizontal};
  level->setRange(0, 10);
  auto* form = new QFormLayout{&control};
  auto* text_label = new QLabel{"&Message"};
  text_label->setBuddy(text);
  form->addRow(text_label, text);
  form->addRow(send);
  auto* level_label = new QLabel{"&Level"};
  level_label->setBuddy(level);
  form->addRow(level_label, level);
  control.setWindowTitle("tact router: control");
  display first{"display 1", {message_topic, level_topic}};
  display second{"display 2", {message_topic, level_topic}};

  // The actors: the router on the workers, a view per display on the GUI
  // thread.
  tact::actor_system system;
  qt_sponsor gui{system};
  tx::actor_ref routes = tx::spawn(system, router({}), tx::mode::serialized);
  tx::actor_ref first_view = tx::spawn(gui, first.view());
  tx::actor_ref second_view = tx::spawn(gui, second.view());

  // Widgets only send.
  auto publish_text = [&] {
    tx::send(routes, publish{}, message_topic, text->text().toStdString());
  };
  QObject::connect(send, &QPushButton::clicked, publish_text);
  QObject::connect(text, &QLineEdit::returnPressed, publish_text);
  QObject::connect(level, &QSlider::valueChanged, [&](int value) {
    tx::send(routes, publish{}, level_topic, std::to_string(value));
  });
  for (auto [d, view] : {std::pair{&first, &first_view}, std::pair{&second, &second_view}}) {
    for (const std::string& topic : {message_topic, level_topic}) {
      QObject::connect(d->box(topic), &QCheckBox::toggled, [&routes, view, topic](bool on) {
        if (on)
          tx::send(routes, subscribe{}, topic, *view);
        else
          tx::send(routes, unsubscribe{}, topic, *view);
      });
      d->box(topic)->setChecked(true);  // subscribes
    }
  }
  new QShortcut{QKeySequence::Quit, &control, [] { QApplication::quit(); }};

  control.move(0, 0);
  first.window.move(0, 260);
  second.window.move(320, 260);
  for (QWidget* w : {&control, &first.window, &second.window}) {
    w->resize(300, 160);
    w->show();
  }
  const int status = app.exec();

  // Closed: deliver what is on its way, then drop the references (a
  // reference must not outlive its system).
  gui.run_until_quiescent();
  routes.reset();
  first_view.reset();
  second_view.reset();
  return status;
}
