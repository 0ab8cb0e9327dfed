#pragma once

#include <cstdint>

namespace tact {

// What the executor does with an actor or a message once a behaviour has
// returned. An actor's `receive` returns it for the actor; a message carries
// its own (see message::set_allocation), examined after every delivery.
enum class allocation : std::uint8_t {
  Nodelete,  // nothing: the actor keeps receiving, the message is reused
  Delete,    // run the destructor and free the storage (made by `new`)
  Destroy,   // run the destructor, keep the storage (the owner reuses it)
  Finished,  // actor: mark finished, touch nothing; message: as Nodelete
};

}  // namespace tact
