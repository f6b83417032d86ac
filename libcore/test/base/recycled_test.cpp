#include "base/recycled.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace solgate {
namespace {

struct Counted : Recycled<Counted, 2> {
    explicit Counted(int v) : value(v) {}
    int value;
    char room[200] = {};
};

struct Bigger : Counted {
    Bigger() : Counted(0) {}
    char more[300] = {};
};

void Drain() {
    // a thread's spares from earlier tests are taken, then freed for real
    while (Counted::SparesKept() > 0) {
        ::operator delete(Counted::operator new(sizeof(Counted)));
    }
}

TEST(Recycled, TheNextObjectTakesTheStorageTheLastOneFreed) {
    if (!kRecycling) {
        GTEST_SKIP() << "nothing is recycled under ASan";
    }
    Drain();
    auto* first = new Counted(1);
    void* block = first;
    delete first;
    EXPECT_EQ(Counted::SparesKept(), 1u);
    auto* second = new Counted(2);
    EXPECT_EQ(static_cast<void*>(second), block);
    EXPECT_EQ(second->value, 2);  // constructed anew
    EXPECT_EQ(Counted::SparesKept(), 0u);
    delete second;
    Drain();
}

TEST(Recycled, AThreadKeepsAtMostItsLimitAndFreesTheRest) {
    if (!kRecycling) {
        GTEST_SKIP() << "nothing is recycled under ASan";
    }
    Drain();
    auto* a = new Counted(1);
    auto* b = new Counted(2);
    auto* c = new Counted(3);
    delete a;
    delete b;
    delete c;  // the limit is 2: this one goes back to the heap
    EXPECT_EQ(Counted::SparesKept(), 2u);
    Drain();
}

TEST(Recycled, ADerivedClassOfAnotherSizeUsesTheHeap) {
    if (!kRecycling) {
        GTEST_SKIP() << "nothing is recycled under ASan";
    }
    Drain();
    std::unique_ptr<Bigger> big = std::make_unique<Bigger>();
    big.reset();
    EXPECT_EQ(Counted::SparesKept(), 0u);
    auto* small = new Counted(1);
    delete small;
    EXPECT_EQ(Counted::SparesKept(), 1u);
    Drain();
}

TEST(Recycled, EachThreadHasItsOwnSpares) {
    if (!kRecycling) {
        GTEST_SKIP() << "nothing is recycled under ASan";
    }
    Drain();
    delete new Counted(1);
    size_t kept_there = 99;
    std::thread other([&] {
        kept_there = Counted::SparesKept();
        delete new Counted(2);  // freed with the thread's spares at its end
    });
    other.join();
    EXPECT_EQ(kept_there, 0u);
    EXPECT_EQ(Counted::SparesKept(), 1u);
    Drain();
}

TEST(Recycled, NothrowNewTakesASpareToo) {
    if (!kRecycling) {
        GTEST_SKIP() << "nothing is recycled under ASan";
    }
    Drain();
    auto* first = new Counted(1);
    void* block = first;
    delete first;
    auto* second = new (std::nothrow) Counted(2);
    EXPECT_EQ(static_cast<void*>(second), block);
    delete second;
    Drain();
}

TEST(ThreadSpares, AGivenValueComesBackWithItsCapacityNewestFirst) {
    if (!kRecycling) {
        GTEST_SKIP() << "nothing is recycled under ASan";
    }
    using Spares = ThreadSpares<std::vector<int>, 2>;
    while (Spares::Kept() > 0) {
        Spares::Take();
    }
    EXPECT_TRUE(Spares::Take().capacity() == 0);  // none kept: a new one
    for (size_t size : {10, 20, 30}) {   // 30: over the limit of 2, dropped
        Spares::GiveWith([size](std::vector<int>& spare) {
            spare = std::vector<int>(size);
        });
    }
    EXPECT_EQ(Spares::Kept(), 2u);
    EXPECT_EQ(Spares::Take().size(), 20u);
    EXPECT_EQ(Spares::Take().size(), 10u);
    EXPECT_EQ(Spares::Kept(), 0u);
}

// Use lends the newest spare where it is kept and drops it afterwards
// (what it moved out is the caller's); with none, a default one.
TEST(ThreadSpares, UseLendsTheNewestSpareAndDropsIt) {
    if (!kRecycling) {
        GTEST_SKIP() << "nothing is recycled under ASan";
    }
    using Spares = ThreadSpares<std::vector<int>, 2>;
    while (Spares::Kept() > 0) {
        Spares::Take();
    }
    auto size_of = [](std::vector<int>& spare) { return spare.size(); };
    EXPECT_EQ(Spares::Use(size_of), 0u);   // none kept: a default one
    for (size_t size : {10, 20}) {
        Spares::GiveWith([size](std::vector<int>& spare) {
            spare = std::vector<int>(size);
        });
    }
    std::vector<int> taken = Spares::Use(
        [](std::vector<int>& spare) { return std::move(spare); });
    EXPECT_EQ(taken.size(), 20u);
    EXPECT_EQ(Spares::Kept(), 1u);
    EXPECT_EQ(Spares::Use(size_of), 10u);
    EXPECT_EQ(Spares::Kept(), 0u);
}

// PerThread: made once per thread (on first use), the same object on
// every later call there, destroyed when its thread ends.
struct Tally {
    static inline std::atomic<int> made{0};
    static inline std::atomic<int> destroyed{0};
};

struct Counter {
    Counter() { Tally::made++; }
    Counter(const Counter&) = delete;
    ~Counter() { Tally::destroyed++; }
    int value = 0;
};

struct CounterOwner {
    static Counter MakeSpares() { return {}; }
};

TEST(PerThread, OnePerThreadMadeOnFirstUseDestroyedAtItsEnd) {
    using Counters = PerThread<CounterOwner, Counter>;
    int made = Tally::made;
    int destroyed = Tally::destroyed;
    Counters::Get().value = 7;
    Counters::Get().value++;
    EXPECT_EQ(Counters::Get().value, 8);
    int seen_there = -1;
    std::thread other([&] {
        seen_there = Counters::Get().value;
        Counters::Get().value = 1;
    });
    other.join();
    EXPECT_EQ(seen_there, 0);   // its own, new
    EXPECT_EQ(Counters::Get().value, 8);
    // this thread's was made here unless an earlier test made it
    EXPECT_GE(Tally::made - made, 1);
    EXPECT_LE(Tally::made - made, 2);
    EXPECT_EQ(Tally::destroyed - destroyed, 1);  // the other thread's
}

}  // namespace
}  // namespace solgate
