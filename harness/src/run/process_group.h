// Process groups of workers (docs/plugins.md, "Trust"): each worker leads its
// own group, killed whole when its case ends, so that nothing a backend forked outlives
// the case; kcheck is the subreaper of what escapes its group (setsid), and kills it at
// the end of the case as well. Linux reads /proc; elsewhere only kill(-pgid) is used.
#pragma once

#include <sys/types.h>

#include <vector>

namespace kc {

// Makes this process the reaper of its orphaned descendants (Linux); false elsewhere.
bool become_subreaper();

// Processes in group `pgid` other than `except`, as far as /proc tells.
int group_members(pid_t pgid, pid_t except);

// SIGKILL to the whole group; its members that are this process's children are reaped as
// they die (for at most 2 s).
void kill_group(pid_t pgid);

// waitpid(pid) for at most `seconds`: whether it was reaped.
bool reap(pid_t pid, int* status, double seconds);

// What kill_descendants killed: processes still in the given group, and those that had
// left it (setsid).
struct KilledDescendants {
  int in_group = 0, left_group = 0;
};

// SIGKILLs and reaps every child of this process, round after round as the children of
// those come back to it (this process must be a subreaper), for at most 16 rounds: a
// worker's cleanup between its tasks, so that nothing one backend started runs on
// into the next.
KilledDescendants kill_descendants(pid_t group);

// SIGKILLs and reaps children of this process (reparented descendants that left their
// worker's group) that are neither in `keep` nor in the group of one in `keep`; returns
// how many.
int kill_stray_children(const std::vector<pid_t>& keep);

}  // namespace kc
