#include "executor/seam.hpp"

#include <tact/build_config.hpp>

#include "executor/executor.hpp"

// The seam's functions over the executor's members (post_to_mailbox is in
// executor.cpp, where the member inlines into it).
namespace tact::detail {

actor_system& system_of(const executor& ex) noexcept { return ex.owner(); }
const system_config& config_of(const executor& ex) noexcept { return ex.config(); }
const std::atomic<bool>& stopping_flag(const executor& ex) noexcept { return ex.stopping_flag(); }
std::uint32_t runner_count(const executor& ex) noexcept { return ex.runner_count(); }
executor* ambient_executor() noexcept { return executor::ambient(); }

std::uint32_t admit(executor& ex, bool beside) { return ex.admit(beside); }
std::uint32_t home_queue(executor& ex) noexcept { return ex.new_home(); }
std::uint32_t any_queue(executor& ex) noexcept { return ex.next_queue(); }
std::uint32_t queue_in_scope(const executor& ex) noexcept { return ex.home_in_scope(); }

void keep_postponed(executor& ex, postponed_work work) noexcept { ex.keep_postponed(work); }
void postponed_begins(executor& ex) noexcept { ex.postponed_begins(); }
void postponed_ends(executor& ex) noexcept { ex.postponed_ends(); }

void count(executor& ex, tally what) noexcept { ex.count(what); }
void actor_finished(executor& ex, std::uint32_t home) noexcept { ex.actor_finished(home); }
void report(const executor& ex, diagnostic_kind kind, std::string text,
            std::exception_ptr error) noexcept {
  ex.report(kind, std::move(text), std::move(error));
}
void note_unsent_message(executor& ex) noexcept { ex.note_unsent_message(); }
void note_memory_wait(executor& ex, const char* what) noexcept { ex.note_memory_wait(what); }

bool live(const executor* ex) noexcept { return build::checks && executor::live(ex); }

}  // namespace tact::detail
