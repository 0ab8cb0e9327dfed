#pragma once

#include <exception>
#include <string>
#include <typeinfo>

namespace tact::detail {

// "my_actor" rather than "8my_actor", for diagnostics.
std::string type_name(const std::type_info& type);

// What an exception says of itself: its type and, for std::exception, what().
std::string describe(const std::exception_ptr& error);

}  // namespace tact::detail
