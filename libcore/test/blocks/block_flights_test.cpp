// The flights of a host's blocks: one holder per block, released by its
// hold or by time, and what a hold released late must not free.
#include "blocks/block_flights.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace solgate {
namespace {

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kTtl = 5000;

class BlockFlightsTest : public ::testing::Test {
protected:
    std::unique_ptr<FlightTable> table = std::make_unique<FlightTable>();
    BlockFlights flights{table.get()};
};

TEST(FlightKeyTest, DependsOnSlotAndVariantAndIsNeverZero) {
    EXPECT_NE(FlightKey(1, "v"), FlightKey(2, "v"));
    EXPECT_NE(FlightKey(1, "v"), FlightKey(1, "w"));
    EXPECT_EQ(FlightKey(7, "getBlock/json"), FlightKey(7, "getBlock/json"));
    EXPECT_NE(FlightKey(0, ""), 0u);
}

TEST_F(BlockFlightsTest, OneHolderPerBlockUntilItsHoldGoes) {
    uint64_t key = FlightKey(4000, "v");
    EXPECT_FALSE(flights.Holding(key, kNow));
    FlightHold first = flights.Claim(key, 100, kNow, kTtl);
    ASSERT_TRUE(first.held());
    EXPECT_TRUE(flights.Holding(key, kNow));
    // another worker, or another request of the same one
    EXPECT_FALSE(flights.Claim(key, 200, kNow, kTtl).held());
    EXPECT_FALSE(flights.Claim(key, 100, kNow, kTtl).held());
    // another block is its own flight
    FlightHold other = flights.Claim(FlightKey(4001, "v"), 200, kNow, kTtl);
    EXPECT_TRUE(other.held());
    first.Release();
    EXPECT_FALSE(first.held());
    EXPECT_FALSE(flights.Holding(key, kNow));
    EXPECT_TRUE(flights.Claim(key, 200, kNow, kTtl).held());
}

TEST_F(BlockFlightsTest, AHoldMovesAndReleasesOnce) {
    uint64_t key = FlightKey(4000, "v");
    FlightHold moved;
    {
        FlightHold hold = flights.Claim(key, 100, kNow, kTtl);
        moved = std::move(hold);
        EXPECT_FALSE(hold.held());
    }
    EXPECT_TRUE(flights.Holding(key, kNow)) << "the moved-from hold freed it";
    moved = FlightHold();
    EXPECT_FALSE(flights.Holding(key, kNow));
}

TEST_F(BlockFlightsTest, AnExpiredFlightPassesOnAndItsOldHoldFreesNothing) {
    uint64_t key = FlightKey(4000, "v");
    FlightHold slow = flights.Claim(key, 100, kNow, kTtl);
    EXPECT_TRUE(flights.Holding(key, kNow + kTtl - 1));
    EXPECT_FALSE(flights.Holding(key, kNow + kTtl));
    // the same worker's next request for the block takes the same entry
    FlightHold next = flights.Claim(key, 100, kNow + kTtl, kTtl);
    ASSERT_TRUE(next.held());
    slow.Release();   // late: the flight is another request's now
    EXPECT_TRUE(flights.Holding(key, kNow + kTtl));
    // and an entry taken over for another block is not freed either
    next.Release();
    uint64_t other = FlightKey(4001, "v");
    FlightHold stale = flights.Claim(other, 100, kNow, kTtl);
    FlightHold fresh = flights.Claim(other, 200, kNow + kTtl, kTtl);
    ASSERT_TRUE(fresh.held());
    stale.Release();
    EXPECT_TRUE(flights.Holding(other, kNow + kTtl));
}

TEST_F(BlockFlightsTest, AFullNeighbourhoodRefusesAndNoTableHoldsNothing) {
    // keys until 17 land in one probe window: fill the table instead
    std::vector<FlightHold> holds;
    for (uint64_t slot = 0; holds.size() < FlightTable::kCapacity; slot++) {
        FlightHold h = flights.Claim(FlightKey(slot, "v"), 100, kNow, kTtl);
        if (h.held()) {
            holds.push_back(std::move(h));
        }
        ASSERT_LT(slot, 100000u);
    }
    EXPECT_FALSE(
        flights.Claim(FlightKey(999999, "v"), 100, kNow, kTtl).held());
    BlockFlights none;
    EXPECT_FALSE(none.Claim(FlightKey(1, "v"), 100, kNow, kTtl).held());
    EXPECT_FALSE(none.Holding(FlightKey(1, "v"), kNow));
    // a process id of 0 is no holder
    holds.clear();
    EXPECT_FALSE(flights.Claim(FlightKey(1, "v"), 0, kNow, kTtl).held());
}

// Workers claim on the event loop while poller threads release what they
// stored (under TSan: make unit-test SANITIZE=thread).
TEST_F(BlockFlightsTest, ThreadsClaimAndReleaseConcurrently) {
    std::atomic<int> claimed{0};
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < 4; t++) {
        threads.emplace_back([this, t, &claimed] {
            for (int i = 0; i < 5000; i++) {
                uint64_t key = FlightKey(static_cast<uint64_t>(i % 8), "v");
                FlightHold hold = flights.Claim(key, 100 + t, kNow, kTtl);
                if (hold.held()) {
                    claimed.fetch_add(1, std::memory_order_relaxed);
                    EXPECT_TRUE(flights.Holding(key, kNow));
                }
            }
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    EXPECT_GT(claimed.load(), 0);
    for (uint64_t slot = 0; slot < 8; slot++) {
        EXPECT_FALSE(flights.Holding(FlightKey(slot, "v"), kNow));
    }
}

}  // namespace
}  // namespace solgate
