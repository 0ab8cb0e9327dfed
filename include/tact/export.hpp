#pragma once

// Marks the library's entry points. The library is built with hidden
// visibility, so only what carries TACT_API is visible from a shared build.
#define TACT_API __attribute__((visibility("default")))
