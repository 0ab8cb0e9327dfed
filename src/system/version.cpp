#include <tact/version.hpp>

namespace tact {

// Compiled into the library, so it reports the version the library was
// built as, whatever headers the program saw.
version_info version() noexcept {
  return {TACT_VERSION_MAJOR, TACT_VERSION_MINOR, TACT_VERSION_PATCH, TACT_VERSION_STRING};
}

}  // namespace tact
