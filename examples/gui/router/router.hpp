// A publish/subscribe router as a transactional actor. Its state, the
// subscribers of each topic, is replaced by `become` on every
// subscription; a publication goes to every subscriber of its topic.
//
// Messages: (subscribe, topic, subscriber) and (unsubscribe, topic,
// subscriber), answered with (subscribed, topic, on) to the subscriber;
// (publish, topic, text), passed on as (topic, text).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <tact/transactional.hpp>

struct subscribe {};
struct unsubscribe {};
struct publish {};
struct subscribed {};

using subscriber_table = std::map<std::string, std::vector<tact::tx::actor_ref>>;

inline tact::tx::behaviour router(const subscriber_table& table) {
  namespace tx = tact::tx;
  return {[table](subscribe, const std::string& topic, const tx::actor_ref& who) {
            subscriber_table next = table;
            std::vector<tx::actor_ref>& list = next[topic];
            if (std::find(list.begin(), list.end(), who) == list.end()) list.push_back(who);
            tx::become(router(next));
            tx::send(who, subscribed{}, topic, true);
          },
          [table](unsubscribe, const std::string& topic, const tx::actor_ref& who) {
            subscriber_table next = table;
            std::erase(next[topic], who);
            tx::become(router(next));
            tx::send(who, subscribed{}, topic, false);
          },
          [table](publish, const std::string& topic, const std::string& text) {
            if (const auto it = table.find(topic); it != table.end())
              for (const tx::actor_ref& who : it->second) tx::send(who, topic, text);
          }};
}
