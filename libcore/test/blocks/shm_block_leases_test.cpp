// The leases of a solgate_blocks in its zone, seen through the
// LeaseStore: the copy lease and each plan's retrieval lease are separate
// words, each held by one process until it runs out.
#include "blocks/shm_block_leases.h"

#include <gtest/gtest.h>

#include <memory>

#include "blocks/blocks_shared.h"

namespace solgate {
namespace {

struct Leases {
    std::unique_ptr<BlocksShared> zone{new BlocksShared()};
    ShmBlockLeases shm{*zone};
    LeaseStore& store = shm;
};

TEST(ShmBlockLeases, OneHolderPerLeaseUntilItExpires) {
    Leases leases;
    LeaseStore& store = leases.store;
    EXPECT_TRUE(store.ClaimLease(kCopyLease, 100, 1000, 2000));
    EXPECT_FALSE(store.ClaimLease(kCopyLease, 200, 1500, 2000));
    EXPECT_TRUE(store.ClaimLease(kCopyLease, 100, 1500, 2000));   // renewed
    EXPECT_EQ(store.LeaseHolder(kCopyLease).pid, 100u);
    EXPECT_EQ(store.LeaseHolder(kCopyLease).expires_ms, 3500);
    store.ReleaseLease(kCopyLease, 200);   // not the holder
    EXPECT_EQ(store.LeaseHolder(kCopyLease).pid, 100u);
    EXPECT_TRUE(store.ClaimLease(kCopyLease, 200, 3500, 2000));   // ran out
    store.ReleaseLease(kCopyLease, 200);
    EXPECT_EQ(store.LeaseHolder(kCopyLease).pid, 0u);
    EXPECT_EQ(leases.zone->copy_lease.load(), 0u);
}

TEST(ShmBlockLeases, EachPlanHasItsOwnRetrievalLease) {
    Leases leases;
    LeaseStore& store = leases.store;
    EXPECT_TRUE(store.ClaimLease(kCopyLease, 1, 0, 2000));
    EXPECT_TRUE(store.ClaimLease(RetrievalLease(0), 2, 0, 2000));
    EXPECT_TRUE(store.ClaimLease(RetrievalLease(kMaxBlockPlans - 1), 3, 0,
                                 2000));
    EXPECT_FALSE(store.ClaimLease(RetrievalLease(0), 3, 0, 2000));
    EXPECT_EQ(Lease::Unpack(leases.zone->copy_lease.load()).pid, 1u);
    EXPECT_EQ(Lease::Unpack(leases.zone->retrieval_lease[0].load()).pid, 2u);
    EXPECT_EQ(Lease::Unpack(
                  leases.zone->retrieval_lease[kMaxBlockPlans - 1].load())
                  .pid,
              3u);
    EXPECT_EQ(leases.zone->retrieval_lease[1].load(), 0u);
}

TEST(ShmBlockLeases, ANumberPastThemIsNeverHeld) {
    Leases leases;
    LeaseStore& store = leases.store;
    EXPECT_FALSE(store.ClaimLease(kBlocksLeaseCount, 1, 0, 2000));
    store.ReleaseLease(kBlocksLeaseCount, 1);
    EXPECT_EQ(store.LeaseHolder(kBlocksLeaseCount).pid, 0u);
    EXPECT_EQ(store.LeaseHolder(kBlocksLeaseCount).expires_ms, 0);
}

}  // namespace
}  // namespace solgate
