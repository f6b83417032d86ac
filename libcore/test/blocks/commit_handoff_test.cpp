// Captures handed from the event loop to the poller thread: committed
// when the poller runs them (woken by the waker), at once without one,
// dropped with their temp files when never run.
#include "blocks/commit_handoff.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "blocks/block_capture.h"
#include "support/temp_dir.h"

namespace solgate {
namespace {

const char kAnswer[] = R"({"jsonrpc":"2.0","result":{"x":1},"id":1})";

// Takes every commit, records it and removes the file (as a store would
// have renamed it away).
class RecordingSink : public CaptureSink {
public:
    explicit RecordingSink(const TempDir& dir) : dir_(dir) {}
    bool Open() const override { return true; }
    std::string NewTempPath() override {
        return dir_.path() + "/t" + std::to_string(temps_++);
    }
    bool MakeRoom(uint64_t, int64_t) override { return true; }
    bool Commit(const std::string& temp_path, uint64_t slot,
                const std::string&, const BlockRecord&,
                std::string*) override {
        std::filesystem::remove(temp_path);
        committed.push_back(slot);
        return true;
    }
    void NoteReceipt(const std::string&, uint64_t, int64_t) override {}

    std::vector<uint64_t> committed;

private:
    const TempDir& dir_;
    int temps_ = 0;
};

std::unique_ptr<BlockCapture> Captured(CaptureSink& sink, uint64_t slot) {
    BlockCall call;
    call.slot = slot;
    call.variant = "getBlock/json/full/r1/v0";
    std::unique_ptr<BlockCapture> capture = BlockCapture::Start(sink, call);
    EXPECT_NE(capture, nullptr);
    EXPECT_TRUE(capture->Write(kAnswer, sizeof(kAnswer) - 1));
    return capture;
}

size_t FilesIn(const TempDir& dir) {
    size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        (void)entry;
        n++;
    }
    return n;
}

TEST(CommitHandoff, WithoutAWakerCommitsAtOnce) {
    TempDir dir("commit_handoff_test");
    RecordingSink sink(dir);
    CommitHandoff handoff;
    handoff.Hand(Captured(sink, 5), 1);
    EXPECT_EQ(sink.committed, std::vector<uint64_t>{5});
}

TEST(CommitHandoff, WithAWakerWaitsForRun) {
    TempDir dir("commit_handoff_test");
    RecordingSink sink(dir);
    CommitHandoff handoff;
    int wakes = 0;
    handoff.SetWaker([&wakes] { wakes++; });
    handoff.Hand(Captured(sink, 5), 1);
    handoff.Hand(Captured(sink, 6), 1);
    EXPECT_EQ(wakes, 2);
    EXPECT_TRUE(sink.committed.empty());
    handoff.Run();
    EXPECT_EQ(sink.committed, (std::vector<uint64_t>{5, 6}));
    handoff.Run();   // each once
    EXPECT_EQ(sink.committed.size(), 2u);

    // Without the waker again (the poller thread stopping): at once.
    handoff.SetWaker(nullptr);
    handoff.Hand(Captured(sink, 7), 1);
    EXPECT_EQ(sink.committed.back(), 7u);
}

TEST(CommitHandoff, WhatWasNeverRunIsDroppedWithItsFiles) {
    TempDir dir("commit_handoff_test");
    RecordingSink sink(dir);
    {
        CommitHandoff handoff;
        handoff.SetWaker([] {});
        handoff.Hand(Captured(sink, 5), 1);
        EXPECT_EQ(FilesIn(dir), 1u);   // the temp file, waiting
    }
    EXPECT_TRUE(sink.committed.empty());
    EXPECT_EQ(FilesIn(dir), 0u);
}

}  // namespace
}  // namespace solgate
