#pragma once

namespace tact {

// How an idle worker picks the worker it tries to steal a queue from
// (docs/configuration.md compares them). Stealing moves whole work queues
// between workers, never single messages, so every guarantee of classic
// actors holds whatever the policy.
enum class steal_policy {
  // Never steal: each worker runs only the queues it was given.
  none,
  // A victim drawn uniformly from the other workers.
  random,
  // The worker that has gone longest without trying to steal itself, that
  // is, the one busy for longest (Cforall's "longest victim").
  longest_victim,
  // Victims near in the machine first: the other workers are sorted by
  // topology distance into nested groups (same core, same cache, same NUMA
  // node, ...); a thief tries each group a number of times proportional to
  // its size before widening, and starts again at the nearest group after a
  // success. Needs hwloc; without it, behaves as random (and says so once).
  locality,
};

}  // namespace tact
