#include "model/kv_block_pool.hpp"

#include <gtest/gtest.h>

#include "unit/inspectors.hpp"

#include <random>
#include <vector>

namespace infersim {
namespace {

using Queue = std::vector<std::uint32_t>;

TEST(KvBlockPool, StartsWithEveryBlockFreeInOrder) {
  const KvBlockPool pool(5);
  EXPECT_EQ(pool.blocks(), 5u);
  EXPECT_EQ(pool.free_blocks(), 5u);
  EXPECT_EQ(pool.used_blocks(), 0u);
  EXPECT_EQ(test::PoolInspector::free_queue(pool), (Queue{0, 1, 2, 3, 4}));
}

TEST(KvBlockPool, TakePopsTheHeadWithACountOfOne) {
  KvBlockPool pool(4);
  EXPECT_EQ(pool.take(), 0u);
  EXPECT_EQ(pool.take(), 1u);
  EXPECT_EQ(test::PoolInspector::count(pool, 0), 1u);
  EXPECT_EQ(pool.free_blocks(), 2u);
  EXPECT_EQ(pool.used_blocks(), 2u);
  EXPECT_EQ(test::PoolInspector::free_queue(pool), (Queue{2, 3}));
}

// A request holding [0, 1, 2], 0 and 1 cached: released last block first, the
// anonymous 2 goes to the front, then 1 and 0 to the back (in that order).
TEST(KvBlockPool, ReleaseSendsAnonymousBlocksToTheFrontAndCachedOnesToTheBack) {
  KvBlockPool pool(6);
  const std::uint32_t a = pool.take(), b = pool.take(), c = pool.take();
  ASSERT_TRUE(pool.assign(a, 100));
  ASSERT_TRUE(pool.assign(b, 101));
  for (const std::uint32_t block : {c, b, a})
    pool.release(block);
  EXPECT_EQ(test::PoolInspector::free_queue(pool), (Queue{2, 3, 4, 5, 1, 0}));
  EXPECT_EQ(pool.free_blocks(), 6u);
  // Cached blocks with count 0 stay findable until taken.
  EXPECT_EQ(pool.find(100), 0u);
  EXPECT_EQ(pool.find(101), 1u);
  EXPECT_EQ(pool.evicted(), 0u);
}

// Taking follows the queue: the anonymous blocks first, the cached ones last,
// each of those an eviction (its identity leaves the map).
TEST(KvBlockPool, TakingACachedBlockEvictsIt) {
  KvBlockPool pool(6);
  const std::uint32_t a = pool.take(), b = pool.take(), c = pool.take();
  pool.assign(a, 100);
  pool.assign(b, 101);
  for (const std::uint32_t block : {c, b, a})
    pool.release(block);
  for (const std::uint32_t expected : {2u, 3u, 4u, 5u}) {
    EXPECT_EQ(pool.take(), expected);
    EXPECT_EQ(pool.evicted(), 0u);
  }
  EXPECT_EQ(pool.take(), 1u);
  EXPECT_EQ(pool.evicted(), 1u);
  EXPECT_EQ(pool.find(101), KvBlockPool::kNoBlock);
  EXPECT_FALSE(pool.cached(1));
  EXPECT_EQ(pool.find(100), 0u);
  EXPECT_EQ(pool.take(), 0u);
  EXPECT_EQ(pool.evicted(), 2u);
  EXPECT_EQ(pool.find(100), KvBlockPool::kNoBlock);
  EXPECT_EQ(pool.free_blocks(), 0u);
}

TEST(KvBlockPool, TouchTakesACachedBlockOutOfTheMiddleOfTheQueue) {
  KvBlockPool pool(4);
  const std::uint32_t a = pool.take();
  pool.assign(a, 7);
  pool.release(a);                      // queue 1 2 3 0
  const std::uint32_t b = pool.take();  // 1
  pool.assign(b, 8);
  pool.release(b);  // queue 2 3 0 1
  EXPECT_EQ(test::PoolInspector::free_queue(pool), (Queue{2, 3, 0, 1}));
  pool.touch(0);
  EXPECT_EQ(test::PoolInspector::free_queue(pool), (Queue{2, 3, 1}));
  EXPECT_EQ(test::PoolInspector::count(pool, 0), 1u);
  EXPECT_EQ(pool.used_blocks(), 1u);
  pool.touch(0);  // a second holder: no queue change
  EXPECT_EQ(test::PoolInspector::count(pool, 0), 2u);
  EXPECT_EQ(pool.free_blocks(), 3u);
  pool.release(0);
  EXPECT_EQ(test::PoolInspector::free_queue(pool), (Queue{2, 3, 1}));
  pool.release(0);
  EXPECT_EQ(test::PoolInspector::free_queue(pool), (Queue{2, 3, 1, 0}));
}

TEST(KvBlockPool, AnIdentityStaysWithTheBlockThatHoldsIt) {
  KvBlockPool pool(4);
  const std::uint32_t a = pool.take(), b = pool.take();
  EXPECT_TRUE(pool.assign(a, 42));
  EXPECT_FALSE(pool.assign(b, 42));
  EXPECT_FALSE(pool.cached(b));
  EXPECT_EQ(pool.find(42), a);
  EXPECT_EQ(pool.registrations(), 1u);
  EXPECT_TRUE(pool.assign(b, 43));
  EXPECT_EQ(pool.registrations(), 2u);
}

// Many identities, several sharing a high word, in a table a quarter full,
// erased one by one (each erasure may shift later entries of a run back).
TEST(KvBlockPool, TheMapFindsEveryIdentityThroughEvictions) {
  constexpr std::uint32_t kBlocks = 64;
  KvBlockPool pool(kBlocks);
  std::vector<std::uint32_t> held;
  for (std::uint32_t i = 0; i < kBlocks; ++i) {
    held.push_back(pool.take());
    ASSERT_TRUE(pool.assign(held.back(), (std::uint64_t{i % 4} << 32) | (i * 7)));
  }
  for (std::uint32_t i = 0; i < kBlocks; ++i)
    EXPECT_EQ(pool.find((std::uint64_t{i % 4} << 32) | (i * 7)), held[i]);
  for (auto it = held.rbegin(); it != held.rend(); ++it)
    pool.release(*it);  // all cached: queue 63 62 ... 0
  for (std::uint32_t k = 0; k < kBlocks; ++k) {
    EXPECT_EQ(pool.take(), kBlocks - 1 - k);
    for (std::uint32_t i = 0; i < kBlocks; ++i) {
      const std::uint32_t expected = i >= kBlocks - 1 - k ? KvBlockPool::kNoBlock : held[i];
      ASSERT_EQ(pool.find((std::uint64_t{i % 4} << 32) | (i * 7)), expected) << k << " " << i;
    }
  }
  EXPECT_EQ(pool.evicted(), kBlocks);
}

TEST(KvBlockPool, WatchedBlocksCountWhileFreeAndReportTheirEviction) {
  KvBlockPool pool(4);
  const std::uint32_t a = pool.take(), b = pool.take();
  pool.assign(a, 1);
  pool.assign(b, 2);
  pool.watch(a);
  pool.watch(b);
  pool.watch(b);  // b at two positions of a hit
  EXPECT_EQ(pool.watched_free(), 0u);
  pool.release(b);
  EXPECT_EQ(pool.watched_free(), 2u);
  pool.release(a);
  EXPECT_EQ(pool.watched_free(), 3u);  // queue 2 3 1 0
  pool.touch(a);
  EXPECT_EQ(pool.watched_free(), 2u);
  EXPECT_FALSE(pool.watched_evicted());
  pool.take();
  pool.take();  // 2, 3: anonymous
  EXPECT_FALSE(pool.watched_evicted());
  EXPECT_EQ(pool.take(), b);
  EXPECT_TRUE(pool.watched_evicted());
  EXPECT_EQ(pool.watched_free(), 0u);
  pool.clear_watch_evicted();
  pool.unwatch(b);
  pool.unwatch(b);
  pool.unwatch(a);
  EXPECT_EQ(pool.watched_free(), 0u);
}

// Identities are kept in groups of consecutive subs of one id (a width fitted
// to Bh / B, at most 32): whatever the width, every identity is found, told
// back by its block, and forgotten when its block is evicted; a refit while
// identities are held changes nothing.
TEST(KvBlockPool, TheMapAnswersTheSameForEveryGroupWidth) {
  for (const std::uint32_t per_id : {1u, 3u, 4u, 32u, 100u}) {
    SCOPED_TRACE(per_id);
    KvBlockPool pool(40);
    pool.fit_groups(per_id);
    std::vector<std::uint32_t> held;
    std::vector<std::uint64_t> ids;
    for (std::uint32_t i = 0; i < 40; ++i) {
      const std::uint64_t id = (std::uint64_t{7 + i / 10} << 32) | (i % 10) * 5;
      held.push_back(pool.take());
      ASSERT_TRUE(pool.assign(held.back(), id));
      ids.push_back(id);
      if (i == 20) pool.fit_groups(per_id == 1 ? 32 : 1);  // ignored: identities held
    }
    for (std::uint32_t i = 0; i < 40; ++i) {
      EXPECT_EQ(pool.find(ids[i]), held[i]);
      EXPECT_EQ(test::PoolInspector::identity(pool, held[i]), ids[i]);
    }
    EXPECT_EQ(pool.find((std::uint64_t{7} << 32) | 1), KvBlockPool::kNoBlock);
    EXPECT_EQ(pool.find(std::uint64_t{99} << 32), KvBlockPool::kNoBlock);
    // Release every other block, then take all free blocks: those evicted
    // are forgotten, the others still found.
    for (std::uint32_t i = 0; i < 40; i += 2)
      pool.release(held[i]);
    for (std::uint32_t i = 0; i < 20; ++i)
      pool.take();
    EXPECT_EQ(pool.evicted(), 20u);
    for (std::uint32_t i = 0; i < 40; ++i) {
      EXPECT_EQ(pool.find(ids[i]), i % 2 == 0 ? KvBlockPool::kNoBlock : held[i]) << i;
      EXPECT_EQ(test::PoolInspector::identity(pool, held[i]),
                i % 2 == 0 ? KvBlockPool::kNoIdentity : ids[i])
          << i;
    }
    // A freed identity can be given again.
    EXPECT_TRUE(pool.assign(held[0], ids[0]));
    EXPECT_EQ(pool.find(ids[0]), held[0]);
  }
}

// The run operations (a prompt's blocks taken, registered and released
// together) leave the pool as the single ones in turn do: the same blocks, in
// the same free queue, with the same counts and identities, the same blocks
// left anonymous, through evictions, touches and tombstones in the ring.
TEST(KvBlockPool, RunsDoWhatTheirSingleOperationsDoInTurn) {
  for (const std::uint32_t per_id : {1u, 4u, 32u, 100u}) {
    SCOPED_TRACE(per_id);
    constexpr std::uint32_t kBlocks = 97;
    KvBlockPool runs(kBlocks), singles(kBlocks);
    runs.fit_groups(per_id);
    singles.fit_groups(per_id);
    std::mt19937 random(per_id);
    std::vector<std::vector<std::uint32_t>> held;  // the same in both pools
    // Ids drawn from few, so that identities are held twice (blocks stay
    // anonymous) and cached blocks are taken again (evictions).
    std::vector<std::uint32_t> ids;
    const std::uint32_t id_range = per_id == 1 ? 96 : 24;
    for (int op = 0; op < 4000; ++op) {
      const auto pick = random() % 3;
      if (pick == 0 && runs.free_blocks() > 0) {
        const std::uint32_t n = 1 + random() % std::min<std::uint32_t>(runs.free_blocks(), 20);
        std::vector<std::uint32_t> a, b;
        runs.take(n, a);
        for (std::uint32_t k = 0; k < n; ++k)
          b.push_back(singles.take());
        ASSERT_EQ(a, b);
        // Register them along a prompt of some of the ids, from a position on.
        ids.clear();
        for (std::uint32_t k = 0; k < n; ++k)
          ids.push_back(random() % id_range);
        const PromptBlocks prompt(ids, per_id * 16, std::int64_t{n} * 16, 16);
        const std::uint32_t from = prompt.count() == 0 ? 0 : random() % (prompt.count() + 1);
        std::vector<std::uint32_t> left_runs, left_singles;
        if (from < prompt.count()) {
          runs.assign_run(a, from, prompt.count(), prompt.cursor(from), left_runs);
          for (std::uint32_t j = from; j < prompt.count(); ++j) {
            if (singles.cached(b[j])) continue;
            if (!singles.assign(b[j], prompt.identity(j))) left_singles.push_back(j);
          }
        }
        ASSERT_EQ(left_runs, left_singles);
        held.push_back(a);
      } else if (pick == 1 && !held.empty()) {
        const std::size_t h = random() % held.size();
        runs.release_reversed(held[h]);
        for (auto it = held[h].rbegin(); it != held[h].rend(); ++it)
          singles.release(*it);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(h));
      } else if (pick == 2) {
        // Touch a cached free block (a hit): a tombstone in the ring.
        const std::uint64_t identity =
            (std::uint64_t{random() % id_range} << 32) | (random() % per_id);
        const std::uint32_t found = runs.find(identity);
        ASSERT_EQ(found, singles.find(identity));
        if (found != KvBlockPool::kNoBlock) {
          runs.touch(found);
          singles.touch(found);
          held.push_back({found});
        }
      }
      ASSERT_EQ(test::PoolInspector::free_queue(runs), test::PoolInspector::free_queue(singles));
      ASSERT_EQ(runs.evicted(), singles.evicted());
      ASSERT_EQ(runs.registrations(), singles.registrations());
      for (std::uint32_t b = 0; b < kBlocks; ++b) {
        ASSERT_EQ(test::PoolInspector::count(runs, b), test::PoolInspector::count(singles, b));
        ASSERT_EQ(test::PoolInspector::identity(runs, b),
                  test::PoolInspector::identity(singles, b));
      }
    }
    EXPECT_GT(runs.evicted(), 100u);
  }
}

}  // namespace
}  // namespace infersim
