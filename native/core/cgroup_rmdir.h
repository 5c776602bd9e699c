// An environment's teardown removes the cgroups it killed (endkill.cc's KillOwner): nothing here
// knows JavaScript; called outside signal context only.
#pragma once

#include <cstdint>
#include <string>

namespace procpin::cgroup {

// CLOCK_MONOTONIC in nanoseconds: the clock of RemoveWhenEmpty's deadline.
int64_t MonotonicNs();

// After cgroup.kill: waits (poll: kernfs signals a change of cgroup.events with POLLPRI) until
// the cgroup `dir` is empty or `deadline` (MonotonicNs) has passed, then removes it and its
// sub-cgroups, bottom-up, without following links. True when it is gone.
bool RemoveWhenEmpty(const std::string& dir, int64_t deadline);

}  // namespace procpin::cgroup
