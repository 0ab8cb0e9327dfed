#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tact::detail {

// Where one worker runs: a processing unit (PU, a hardware thread) and what contains it.
struct pu_place {
  std::uint32_t pu;        // logical index of the PU (hwloc's logical, tree order)
  std::uint32_t os_index;  // the OS's CPU number (what sched_setaffinity takes)
  std::uint32_t core;      // logical index of its core (the PU index if hwloc knows no cores)
  std::int32_t numa_node;  // logical index of its nearest NUMA node, -1 if none known

  friend bool operator==(const pu_place&, const pu_place&) = default;
};

// How far apart two PUs are; only the order matters (compare with <, ==), not the values, and
// only between distances of the same topology. Ordered by `levels` first, then `numa_latency`.
struct pu_distance {
  // How many levels of the tree separate the PUs from their lowest common ancestor: 0 for the
  // same PU, then same core < same L2 < same L3 or NUMA group < same package < whole machine.
  std::uint32_t levels;
  // The machine's NUMA latency matrix entry from the first PU's node to the second's (e.g. 10,
  // 16, 22 on a 4-socket ring); orders pairs that the tree cannot tell apart, such as a
  // neighbour socket and the opposite one. 0 when there is no matrix or a node is unknown.
  std::uint64_t numa_latency;

  friend auto operator<=>(const pu_distance&, const pu_distance&) = default;
};

// The shape of a machine (from hwloc): how many PUs, cores, NUMA nodes and packages, where workers
// should run, which workers are near each other, and binding threads and memory to them.
// Synthetic and XML topologies describe other machines, so that plans for a large machine can be
// checked anywhere; only this_machine() can bind. Const members may be called from several
// threads at once (hwloc allows concurrent use of a loaded topology). A moved-from topology may
// only be destroyed or assigned to.
class topology {
 public:
  // The machine this process runs on, restricted to the PUs it may use, without I/O devices
  // (cheaper to load, and not needed). Throws std::runtime_error naming hwloc's failure.
  static topology this_machine();
  // A machine described in hwloc's synthetic syntax, e.g. "pack:2 numa:2 core:4 pu:2". Throws
  // std::invalid_argument if hwloc rejects the description.
  static topology synthetic(const std::string& description);
  // A machine exported by hwloc as XML (lstopo foo.xml); unlike synthetic descriptions it can
  // carry a NUMA distance matrix. Throws std::runtime_error if the file cannot be loaded.
  static topology xml(const std::string& path);

  topology(topology&&) noexcept;
  topology& operator=(topology&&) noexcept;
  ~topology();

  // Counts of the machine's objects (packages may be 0 if hwloc knows none; cores() counts each
  // PU as a core when hwloc knows no cores; there is always at least one NUMA node).
  std::uint32_t pus() const noexcept;
  std::uint32_t cores() const noexcept;
  std::uint32_t packages() const noexcept;
  std::uint32_t numa_nodes() const noexcept;

  // Whether this describes the machine the process runs on; binding is only possible then.
  bool is_this_system() const noexcept;

  // One line for logs, e.g. "1 package, 1 NUMA node, 2 cores, 2 PUs".
  std::string describe() const;

  // Where `workers` workers go, deterministically: first one PU per core, cores in logical order
  // (so workers fill a NUMA node, then a package, before the next: near workers communicate
  // cheaply), then each core's second hardware thread in the same order, and so on; with more
  // workers than PUs, around again. plan(k) is a prefix of plan(n) for k < n.
  std::vector<pu_place> plan(std::uint32_t workers) const;

  // How far apart two PUs (logical indices) are, see pu_distance; symmetric when the NUMA matrix
  // is. Throws std::out_of_range for an index not below pus().
  pu_distance distance(std::uint32_t pu_a, std::uint32_t pu_b) const;

  // For locality-aware stealing: for each worker of `plan`, the other workers in nested groups,
  // nearest first: g0 = the others at the smallest distance present, g1 = those and the next
  // distance, ..., last = every other worker. Groups are never empty nor repeated, and list worker
  // indices in ascending order; workers sharing a PU are in g0. A single worker gets no groups.
  // Throws std::out_of_range if a place names a PU not below pus().
  std::vector<std::vector<std::vector<std::uint32_t>>> victim_groups(
      const std::vector<pu_place>& plan) const;

  // Binds the calling thread to the PU `where.pu` and, on a machine with more than one NUMA node,
  // its memory allocations to that PU's NUMA node if known (preferred, not strict: a full node
  // spills over). False, never an exception, on failure or if !is_this_system(); the CPU binding
  // may stay in effect if only the memory binding failed.
  bool bind_thread(const pu_place& where) const noexcept;

  // Binds the pages holding [begin, begin + bytes) to the NUMA node (logical index) and migrates
  // those already placed elsewhere; whole pages, so neighbouring data on them moves too. True
  // without doing anything on a machine with one NUMA node; false on failure, for an unknown
  // node, or if !is_this_system().
  bool bind_memory(const void* begin, std::size_t bytes, std::int32_t numa_node) const noexcept;

 private:
  struct impl;
  explicit topology(std::unique_ptr<impl> state) noexcept;

  std::unique_ptr<impl> state_;
};

}  // namespace tact::detail
