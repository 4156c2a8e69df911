// How many cores this process may run on: the CPUs in its affinity mask
// (`taskset`, a container's cpuset), not the machine's count that
// std::thread::hardware_concurrency reports. A second thread on a core the
// first one already has only takes turns with it.
#pragma once

namespace infersim {

// At least 1.
unsigned usable_cores();

}  // namespace infersim
