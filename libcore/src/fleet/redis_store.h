// The fleet's store in Redis, through hiredis's asynchronous API on the
// poller thread's libuv loop: the loop never waits on Redis (HOST is an
// address: hiredis would resolve a name synchronously). A command that
// has no answer within the configured timeout, an error answer, or a
// connection that does not come up in time, drops the connection; it is
// made again with backoff (100 ms doubling to 5 s), and the store reads
// as down until a command is answered again (one log line per outage).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fleet/fleet_conf.h"
#include "fleet/fleet_store.h"
#include "slots/state_poller.h"

struct redisAsyncContext;
struct redisReply;
struct uv_loop_s;

namespace solgate {

class RedisStore : public FleetStore {
public:
    RedisStore(struct uv_loop_s* loop, FleetConf conf, LogSink log);
    ~RedisStore() override;

    RedisStore(const RedisStore&) = delete;
    RedisStore& operator=(const RedisStore&) = delete;

    // Once per poller tick: connects, times out, reconnects.
    void Tick(int64_t now_ms);

    bool Up() const override { return up_; }
    void ClaimLeases(
        std::vector<std::string> keys, std::string holder, int64_t ttl_ms,
        std::function<void(std::optional<std::vector<bool>>)> done) override;
    void MergeSlots(std::string key,
                    std::vector<std::pair<std::string, uint64_t>> fields,
                    bool never_lower) override;
    void SetFields(std::string key, Fields fields) override;
    void SetLaterFields(std::string key, Fields fields) override;
    void ReadHash(std::string key,
                  std::function<void(std::optional<Hash>)> done) override;
    void Eval(const char* script, Words keys, Words args,
              std::function<void(std::optional<Words>)> done) override;

    // Commands answered since the start.
    uint64_t commands() const { return commands_; }
    // Told each answered command's round trip (us), on the loop's thread.
    void SetRoundTripObserver(std::function<void(uint64_t)> observer) {
        observe_ = std::move(observer);
    }

private:
    using Done = std::function<void(const redisReply*)>;
    struct Pending;

    void Connect(int64_t now_ms);
    std::string ConnectFailure() const;
    // An error answer drops the connection (NOAUTH, READONLY, MOVED: no
    // use going on), unless `may_refuse` (a command a server may disable).
    void Command(const std::vector<std::string>& argv, Done done,
                 bool may_refuse = false);
    void CheckPersistence();
    void WriteFields(std::vector<std::string> argv, Fields fields);
    void Lost(const std::string& why);
    void Answered();
    void Drop(const std::string& why);

    static void OnConnect(const redisAsyncContext* c, int status);
    static void OnDisconnect(const redisAsyncContext* c, int status);
    static void OnReply(redisAsyncContext* c, void* reply, void* privdata);

    struct uv_loop_s* loop_;
    FleetConf conf_;
    LogSink log_;
    redisAsyncContext* ctx_ = nullptr;
    bool connecting_ = false;
    bool up_ = false;
    bool closing_ = false;
    bool outage_logged_ = false;
    // the causes logged during this outage (at most kMaxOutageCauses)
    std::vector<std::string> outage_causes_;
    static constexpr size_t kMaxOutageCauses = 4;
    bool persistence_checked_ = false;
    bool dropping_ = false;     // drop the connection at the next tick
    std::string drop_why_;
    int64_t now_ms_ = 0;
    int64_t connect_started_ms_ = 0;
    int64_t next_attempt_ms_ = 0;
    int64_t backoff_ms_ = 100;
    // Commands in flight, oldest first: when sent (the tick's ms, for the
    // timeout; the clock's ns, for the round trip).
    struct Sent {
        int64_t ms;
        uint64_t ns;
    };
    std::deque<Sent> sent_;
    std::function<void(uint64_t)> observe_;
    uint64_t commands_ = 0;
};

}  // namespace solgate
