// A display window: one line per topic, with a check box that subscribes
// it to the topic, and an actor bound to the GUI sponsor that writes what
// the router sends it into the window. The window title sums it up, for a
// test (or a screen reader) to read.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <QCheckBox>
#include <QFormLayout>
#include <QLabel>
#include <QString>
#include <QWidget>

#include <tact/transactional.hpp>

#include "router.hpp"

class display {
 public:
  display(const QString& name, const std::vector<std::string>& topics) : name_{name} {
    auto* form = new QFormLayout{&window};
    for (const std::string& topic : topics) {
      const QString label = QString::fromStdString(topic);
      lines_[topic] = {.box = new QCheckBox{"&" + label}, .value = new QLabel};
      form->addRow(lines_[topic].box, lines_[topic].value);
    }
    retitle();
  }

  // The actor that updates this display. Its widget calls run once the
  // handler commits, on the GUI thread (the actor is bound to its sponsor).
  tact::tx::behaviour view() {
    namespace tx = tact::tx;
    return {[this](const std::string& topic, const std::string& text) {
              tx::on_commit([this, topic, text] { show(topic, QString::fromStdString(text)); });
            },
            [this](subscribed, const std::string& topic, bool on) {
              tx::on_commit([this, topic, on] { subscription(topic, on); });
            }};
  }

  QCheckBox* box(const std::string& topic) { return lines_.at(topic).box; }

  QWidget window;

 private:
  struct line {
    QCheckBox* box;
    QLabel* value;
    bool on = false;
    QString last = "(none)";
  };

  void show(const std::string& topic, const QString& text) {
    line& l = lines_.at(topic);
    l.last = text;
    l.value->setText(text);
    retitle();
  }

  void subscription(const std::string& topic, bool on) {
    lines_.at(topic).on = on;
    retitle();
  }

  void retitle() {
    QString title = "tact router: " + name_;
    for (const auto& [topic, l] : lines_)
      title += QString{" [%1: %2]"}.arg(QString::fromStdString(topic), l.on ? l.last : "off");
    window.setWindowTitle(title);
  }

  QString name_;
  std::map<std::string, line> lines_;
};
