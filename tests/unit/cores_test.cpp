// The usable cores follow the affinity mask, as under `taskset -c 0`.
#include "core/cores.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace infersim {
namespace {

TEST(UsableCores, AtLeastOneAndAtMostTheMachines) {
  EXPECT_GE(usable_cores(), 1u);
  if (std::thread::hardware_concurrency() > 0) {
    EXPECT_LE(usable_cores(), std::thread::hardware_concurrency());
  }
}

TEST(UsableCores, OneWhenPinnedToOneCpu) {
  // On a thread of its own, so that the test's own mask is left as it was.
  unsigned pinned = 0;
  unsigned before = 0;
  std::thread([&] {
    before = usable_cores();
    cpu_set_t mask;
    CPU_ZERO(&mask);
    ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
    int first = 0;
    while (!CPU_ISSET(first, &mask))
      ++first;
    CPU_ZERO(&mask);
    CPU_SET(first, &mask);
    ASSERT_EQ(sched_setaffinity(0, sizeof mask, &mask), 0);
    pinned = usable_cores();
  }).join();
  EXPECT_EQ(pinned, 1u);
  EXPECT_EQ(usable_cores(), before);
}

}  // namespace
}  // namespace infersim
