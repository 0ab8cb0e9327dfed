#pragma once

// The widgets: transactional actors that compose others (docs/widgets.md).
#include <tact/widgets/beta.hpp>
#include <tact/widgets/fork_join.hpp>
#include <tact/widgets/once.hpp>
#include <tact/widgets/race.hpp>
#include <tact/widgets/serializer.hpp>
#include <tact/widgets/timeout.hpp>
#include <tact/widgets/unwind_protect.hpp>
