#pragma once

// Everything a program using tact's classic actors needs.
#include <tact/ask.hpp>
#include <tact/actor.hpp>
#include <tact/actor_system.hpp>
#include <tact/allocation.hpp>
#include <tact/config.hpp>
#include <tact/diagnostic.hpp>
#include <tact/handle.hpp>
#include <tact/message.hpp>
#include <tact/placement.hpp>
#include <tact/send.hpp>
#include <tact/send_new.hpp>
#include <tact/stats.hpp>
#include <tact/sponsor.hpp>
#include <tact/steal_policy.hpp>
#include <tact/timer.hpp>
#include <tact/version.hpp>
