// The process's resident memory, for an entry's measured host peak (Linux): the
// high-water mark is reset before an op is prepared (writing 5 to /proc/self/clear_refs)
// and read after its runs, so the difference from the resident size before is what
// preparing and running it took at most, allocations inside a backend included.
#pragma once

#include <cstdint>

namespace kc::bench {

// Resets the high-water mark to the current resident size; false where Linux refuses.
bool reset_peak_rss();
// VmHWM and VmRSS of /proc/self/status in bytes; -1 where they cannot be read.
int64_t peak_rss_bytes();
int64_t current_rss_bytes();

}  // namespace kc::bench
