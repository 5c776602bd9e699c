// One candidate's decision: SPEC's seven conditions checked in order against descriptors, and,
// unless the sweep is dry, the removal. The order and what each step rules out are listed at
// the top of sweep_candidate.cc.
#pragma once

#include <sys/types.h>

#include "sweep.h"

namespace procpin::sweep {

// What the sweep of one directory shares with the decision of each of its candidates.
struct Context {
  int dirfd = -1;
  int procfd = -1;
  dev_t dir_dev = 0;
  uid_t euid = 0;
  const Options* opts = nullptr;
};

// Decides one candidate and, unless dry, removes it. Fills e->outcome.
void SweepOne(const Context& ctx, Entry* e);

}  // namespace procpin::sweep
