#pragma once

// Everything a program using tact's transactional actors needs.
#include <tact/tx/ask.hpp>
#include <tact/tx/failure.hpp>
#include <tact/actor_system.hpp>
#include <tact/config.hpp>
#include <tact/stats.hpp>
#include <tact/tx/actor_ref.hpp>
#include <tact/tx/behaviour.hpp>
#include <tact/tx/message.hpp>
#include <tact/tx/rollback.hpp>
#include <tact/tx/sponsor.hpp>
#include <tact/tx/timer.hpp>
#include <tact/tx/transaction.hpp>
