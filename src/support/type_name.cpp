#include "support/type_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace tact::detail {

std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> readable{
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), &std::free};
  return status == 0 && readable ? std::string{readable.get()} : std::string{type.name()};
}

std::string describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return type_name(typeid(e)) + " (" + e.what() + ")";
  } catch (...) {
    const std::type_info* type = abi::__cxa_current_exception_type();
    return type != nullptr ? type_name(*type) : std::string{"an unknown exception"};
  }
}

}  // namespace tact::detail
