#pragma once

namespace tact::widgets {

// What a customer gets from a timeout gate when no reply came in time.
// Apart from the timeout widget so that tx::ask, whose customer takes it
// as the end of the wait, can name it without the widgets.
struct timed_out {};

}  // namespace tact::widgets
