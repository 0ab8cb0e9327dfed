// A classic actor on one node, sent to and asked from another through a
// handle, and a monitor told when it is unpublished (docs/remote.md,
// "Classic actors" and "Monitors"). Both nodes run in this process, on
// loopback, each with an actor system of its own, as two programs would.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <future>
#include <map>
#include <string>

#include <tact/net/node.hpp>
#include <tact/tact.hpp>

namespace tx = tact::tx;
using namespace std::chrono_literals;

struct count {
  std::int64_t n = 0;
};
TACT_WIRE(count, "inventory.count", n);

struct stock : tact::message {  // a classic message, declared for the wire
  std::string item;
  std::int64_t added = 0;
};
TACT_WIRE(stock, "inventory.stock", item, added);

struct count_of : tact::request<count> {  // a request, answered with a count
  std::string item;
};
TACT_WIRE(count_of, "inventory.count_of", item);

using messages = tact::net::message_types<count, stock, count_of>;

struct inventory : tact::actor {
  using actor::actor;
  tact::allocation receive(stock& m) {
    items[m.item] += m.added;
    return Nodelete;
  }
  tact::allocation receive(count_of& m) {
    m.reply(count{items[m.item]});
    return Nodelete;
  }
  std::map<std::string, std::int64_t> items;
};

int main() {
  const tact::net::key_pair warehouse_keys = tact::net::generate_key_pair();
  const tact::net::key_pair shop_keys = tact::net::generate_key_pair();

  tact::actor_system warehouse_system;
  inventory stock_keeper{warehouse_system};
  tact::actor_system shop_system;
  std::promise<std::string> gone;
  int status = 0;
  {
    // The warehouse lists the shop by key alone: the shop's hello says
    // where it listens, and the warehouse answers there.
    tact::net::node warehouse{warehouse_system,
                              {.listen = "tcp://127.0.0.1:0",
                               .keys = warehouse_keys,
                               .peers = {{"shop", shop_keys.public_key, ""}}},
                              messages{}};
    warehouse.publish("inventory", tact::handle<stock, count_of>{stock_keeper});

    tact::net::node shop{
        shop_system,
        {.listen = "tcp://127.0.0.1:0",
         .keys = shop_keys,
         .peers = {{"warehouse", warehouse_keys.public_key, warehouse.endpoint()}}},
        messages{}};
    // A handle to a local proxy: sends and asks as to a local actor.
    const tact::handle<stock, count_of> remote =
        shop.remote<stock, count_of>("warehouse", "inventory");
    stock apples;
    apples.item = "apples";
    apples.added = 12;
    remote | apples;
    count_of question;
    question.item = "apples";
    const tact::ask_result<count> answer = tact::ask(remote, question, 10s);
    std::printf("apples in the warehouse: %lld\n",
                answer ? static_cast<long long>(answer->n) : -1LL);
    if (!answer || answer->n != 12) status = 1;

    // Told once, when the name goes.
    shop.monitor("warehouse", "inventory",
                 tx::spawn(shop_system, {[&gone](const tx::actor_down& d) {
                             gone.set_value(d.name +
                                            (d.node_lost ? " lost with " : " unpublished on ") +
                                            d.node);
                           }}));
    warehouse.unpublish("inventory");
    std::future<std::string> told = gone.get_future();
    if (told.wait_for(10s) == std::future_status::ready)
      std::printf("%s\n", told.get().c_str());
    else
      status = 1;
    shop_system.await_quiescence();
    warehouse_system.await_quiescence();
  }
  stock_keeper | tact::finished_msg;
  warehouse_system.stop();
  return status;
}
