#pragma once

#include <exception>
#include <string>

namespace tact::tx {

// What an actor that asked to hear of failures (the reply actor of
// tx::ask, for one) is sent when a message naming it as customer (first
// element) rolls back because its handler threw.
struct failure {
  std::exception_ptr error;
};

// What an actor is sent when it was passed (as a customer, or inside a
// message) to an actor on another node, and that node went down or the
// connection to it was lost (docs/remote.md): whatever it waited for from
// there can never come. tx::ask's reply actor answers ask_error::node_down.
struct node_down {
  std::string node;  // the peer's name on the allow-list
};

// What a monitor of an actor another node published is told when the
// actor cannot be reached under its name any more (docs/remote.md,
// "Monitors"): the name was unpublished (or was not published when the
// monitor reached that node), or the connection to the node was lost.
struct actor_down {
  std::string node;        // the peer's name on the allow-list
  std::string name;        // the name the actor was published under
  bool node_lost = false;  // the connection was lost, or the node restarted
};

}  // namespace tact::tx
