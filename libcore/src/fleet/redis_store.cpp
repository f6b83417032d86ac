#include "fleet/redis_store.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <sys/socket.h>
#include <uv.h>

#include <algorithm>
#include <cstring>

// hiredis's libuv adapter is a header of static C functions.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wcast-function-type"
#include <hiredis/adapters/libuv.h>
#pragma GCC diagnostic pop

#include "slots/slot_types.h"

namespace solgate {
namespace {

constexpr int64_t kMaxBackoffMs = 5000;

// Claims or renews each lease (KEYS) for ARGV[1] for ARGV[2] ms; returns
// 1 or 0 per key.
constexpr const char* kClaimScript = R"(
local out = {}
for i, k in ipairs(KEYS) do
  local v = redis.call('GET', k)
  if v == false or v == ARGV[1] then
    redis.call('SET', k, ARGV[1], 'PX', ARGV[2])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
)";

// Raises the fields of KEYS[1] (ARGV[2..]: field, value pairs): a value of
// 0 is ignored; a larger one taken; a smaller one ignored unless it is more
// than ARGV[1] below (ARGV[1] < 0: never lower).
constexpr const char* kMergeScript = R"(
local tolerated = tonumber(ARGV[1])
for i = 2, #ARGV, 2 do
  local v = tonumber(ARGV[i + 1])
  if v and v > 0 then
    local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[i])) or 0
    if cur == 0 or v > cur or (tolerated >= 0 and cur - v > tolerated) then
      redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    end
  end
end
return 0
)";

// Sets each field of KEYS[1] (ARGV: field, value pairs; a value starts
// with its wall-clock ms and "|") unless the stored one is as recent.
constexpr const char* kLaterScript = R"(
for i = 1, #ARGV, 2 do
  local cur = redis.call('HGET', KEYS[1], ARGV[i])
  local cur_ms = cur and tonumber(string.match(cur, '^(%d+)|')) or -1
  local new_ms = tonumber(string.match(ARGV[i + 1], '^(%d+)|')) or 0
  if new_ms > cur_ms then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
return 0
)";

}  // namespace

struct RedisStore::Pending {
    RedisStore* store;
    Done done;
    bool may_refuse;
};

RedisStore::RedisStore(uv_loop_t* loop, FleetConf conf, LogSink log)
    : loop_(loop), conf_(std::move(conf)), log_(std::move(log)) {}

RedisStore::~RedisStore() {
    closing_ = true;
    if (ctx_ != nullptr) {
        redisAsyncContext* ctx = ctx_;
        ctx_ = nullptr;
        redisAsyncFree(ctx);   // pending callbacks run with no reply
    }
}

void RedisStore::Tick(int64_t now_ms) {
    now_ms_ = now_ms;
    if (dropping_) {
        // an error answer seen in a callback: dropped here, outside it
        dropping_ = false;
        if (ctx_ != nullptr) {
            Drop(drop_why_);
            return;
        }
    }
    if (ctx_ == nullptr) {
        if (now_ms >= next_attempt_ms_) {
            Connect(now_ms);
        }
        return;
    }
    if (connecting_ && now_ms - connect_started_ms_ > conf_.timeout_ms) {
        Drop(ConnectFailure());
        return;
    }
    if (!sent_.empty() && now_ms - sent_.front().ms > conf_.timeout_ms) {
        // This tick may run late, before the loop has read what arrived
        // (timers run before I/O, and the thread may have been busy): read
        // it first, so that only a store that did not answer is dropped.
        redisAsyncHandleRead(ctx_);
        if (dropping_ || ctx_ == nullptr) {
            return;   // the read saw an error or a close: dealt with there
        }
        if (!sent_.empty() && now_ms - sent_.front().ms > conf_.timeout_ms) {
            Drop("no answer within " + std::to_string(conf_.timeout_ms) +
                 " ms");
            return;
        }
    }
    if (!up_ && sent_.empty()) {
        Command({"PING"}, [](const redisReply*) {});   // up when answered
    }
}

void RedisStore::Connect(int64_t now_ms) {
    redisAsyncContext* ctx = redisAsyncConnect(conf_.host.c_str(), conf_.port);
    if (ctx == nullptr || ctx->err) {
        std::string why = ctx != nullptr ? ctx->errstr : "out of memory";
        if (ctx != nullptr) {
            redisAsyncFree(ctx);
        }
        Lost(why);
        return;
    }
    ctx->data = this;
    if (redisLibuvAttach(ctx, loop_) != REDIS_OK) {
        ctx->ev.cleanup = nullptr;   // the adapter set it, with no data
        redisAsyncFree(ctx);
        Lost("could not attach to the loop");
        return;
    }
    redisAsyncSetConnectCallback(ctx, &RedisStore::OnConnect);
    redisAsyncSetDisconnectCallback(ctx, &RedisStore::OnDisconnect);
    ctx_ = ctx;
    connecting_ = true;
    connect_started_ms_ = now_ms;
    sent_.clear();
    // queued until the connection is up, answered before anything else
    if (!conf_.password.empty()) {
        Command({"AUTH", conf_.password}, [this](const redisReply* reply) {
            if (reply != nullptr && reply->type == REDIS_REPLY_ERROR) {
                log_(kLogError, "shared state " + conf_.Describe() +
                                    " refused AUTH: " + reply->str);
            }
        });
    }
    if (conf_.db != 0) {
        Command({"SELECT", std::to_string(conf_.db)},
                [this](const redisReply* reply) {
                    if (reply != nullptr && reply->type == REDIS_REPLY_ERROR) {
                        log_(kLogError, "shared state " +
                                            conf_.Describe() +
                                            " refused SELECT: " + reply->str);
                    }
                });
    }
}

// Why the connection did not come up: the socket's own error when it has
// one (hiredis's libuv adapter drops the poll's error, so a refused
// connection is only seen here), else the timeout.
std::string RedisStore::ConnectFailure() const {
    int err = 0;
    socklen_t len = sizeof(err);
    if (ctx_ != nullptr && ctx_->c.fd >= 0 &&
        getsockopt(ctx_->c.fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
        err != 0) {
        return std::strerror(err);
    }
    return "no connection within " + std::to_string(conf_.timeout_ms) + " ms";
}

void RedisStore::OnConnect(const redisAsyncContext* c, int status) {
    auto* self = static_cast<RedisStore*>(c->data);
    if (self == nullptr || self->closing_) {
        return;
    }
    self->connecting_ = false;
    if (status != REDIS_OK) {
        // hiredis frees the context after this callback
        self->ctx_ = nullptr;
        self->Lost(c->errstr);
    }
    // up once a command is answered (a server that accepts and closes, or
    // refuses every command, is not)
}

void RedisStore::Answered() {
    if (up_) {
        return;
    }
    up_ = true;
    backoff_ms_ = 100;
    log_(outage_logged_ ? kLogWarn : kLogInfo,
         "shared state " + conf_.Describe() + " connected" +
             (outage_logged_ ? " again; this host sends it its views and "
                               "operator changes and takes the fleet's"
                             : "") +
             " (host id \"" + conf_.host_id + "\")");
    outage_logged_ = false;
    if (!persistence_checked_) {
        persistence_checked_ = true;
        CheckPersistence();
    }
}

// What the fleet keeps in Redis and nowhere else (Cube Runner's allowance
// counts, operator cordons) outlives a kill -9 of redis-server only with
// the append-only file: Redis writes it before it answers, so no answered
// write is lost (appendfsync everysec, the default, may lose the last
// second on a power loss; always loses nothing).
void RedisStore::CheckPersistence() {
    Command({"CONFIG", "GET", "appendonly"},
            [this](const redisReply* reply) {
                if (reply == nullptr) {
                    return;
                }
                if (reply->type == REDIS_REPLY_ERROR) {
                    log_(kLogWarn, "shared state " + conf_.Describe() +
                                       " does not say whether appendonly is "
                                       "on (CONFIG GET refused); without it "
                                       "Cube Runner's allowance counts and "
                                       "operator cordons are lost when "
                                       "redis-server stops");
                    return;
                }
                if (reply->type == REDIS_REPLY_ARRAY &&
                    reply->elements == 2 &&
                    reply->element[1]->type == REDIS_REPLY_STRING &&
                    std::string(reply->element[1]->str,
                                reply->element[1]->len) != "yes") {
                    log_(kLogWarn, "shared state " + conf_.Describe() +
                                       " has appendonly off: Cube Runner's "
                                       "allowance counts and operator "
                                       "cordons are lost when redis-server "
                                       "stops; set \"appendonly yes\" (and "
                                       "\"appendfsync everysec\" or "
                                       "\"always\") in redis.conf");
                }
            },
            true);
}

void RedisStore::OnDisconnect(const redisAsyncContext* c, int status) {
    auto* self = static_cast<RedisStore*>(c->data);
    if (self == nullptr || self->closing_) {
        return;
    }
    self->ctx_ = nullptr;
    self->connecting_ = false;
    self->Lost(status == REDIS_OK ? "disconnected" : c->errstr);
}

// The connection is gone (hiredis freed it, or it never was): down, and
// the next attempt after the backoff.
void RedisStore::Lost(const std::string& why) {
    up_ = false;
    sent_.clear();
    next_attempt_ms_ = now_ms_ + backoff_ms_;
    backoff_ms_ = std::min(backoff_ms_ * 2, kMaxBackoffMs);
    if (!outage_logged_) {
        outage_logged_ = true;
        outage_causes_.assign(1, why);
        log_(kLogError, "shared state " + conf_.Describe() +
                            " unavailable (" + why +
                            "); this host routes on its own state and polls "
                            "every upstream itself until it is back");
    } else if (outage_causes_.size() < kMaxOutageCauses &&
               std::find(outage_causes_.begin(), outage_causes_.end(), why) ==
                   outage_causes_.end()) {
        // one line per outage, but a new cause is worth one more: a server
        // back up that refuses this host (NOAUTH) is not the one that was
        // down, and the operator has something else to fix (each cause
        // once, so two that take turns do not fill the log)
        outage_causes_.push_back(why);
        log_(kLogWarn, "shared state " + conf_.Describe() +
                           " still unavailable, now: " + why);
    }
}

// Closes a connection that is stuck (the loop thread, not a callback).
void RedisStore::Drop(const std::string& why) {
    redisAsyncContext* ctx = ctx_;
    ctx_ = nullptr;
    connecting_ = false;
    closing_ = true;   // its callbacks, run now, change nothing here
    redisAsyncFree(ctx);
    closing_ = false;
    Lost(why);
}

void RedisStore::Command(const std::vector<std::string>& argv, Done done,
                         bool may_refuse) {
    if (ctx_ == nullptr) {
        done(nullptr);
        return;
    }
    std::vector<const char*> args;
    std::vector<size_t> lens;
    for (const std::string& a : argv) {
        args.push_back(a.data());
        lens.push_back(a.size());
    }
    auto* pending = new Pending{this, std::move(done), may_refuse};
    if (redisAsyncCommandArgv(ctx_, &RedisStore::OnReply, pending,
                              static_cast<int>(args.size()), args.data(),
                              lens.data()) != REDIS_OK) {
        Done failed = std::move(pending->done);
        delete pending;
        failed(nullptr);
        return;
    }
    sent_.push_back({now_ms_, uv_hrtime()});
}

void RedisStore::OnReply(redisAsyncContext* /*c*/, void* reply,
                         void* privdata) {
    auto* pending = static_cast<Pending*>(privdata);
    RedisStore* self = pending->store;
    if (!self->closing_ && !self->sent_.empty()) {
        uint64_t sent_ns = self->sent_.front().ns;
        self->sent_.pop_front();
        if (reply != nullptr && self->observe_) {
            self->observe_((uv_hrtime() - sent_ns) / 1000);
        }
    }
    if (reply != nullptr) {
        self->commands_++;
    }
    Done done = std::move(pending->done);
    bool may_refuse = pending->may_refuse;
    delete pending;
    auto* r = static_cast<const redisReply*>(reply);
    if (r != nullptr && r->type == REDIS_REPLY_ERROR && !self->closing_ &&
        !may_refuse) {
        // NOAUTH, READONLY, MOVED, a script error: no use going on
        std::string why = "it answered " + std::string(r->str, r->len);
        done(nullptr);
        if (self->ctx_ != nullptr && !self->dropping_) {
            self->dropping_ = true;
            self->drop_why_ = why;
        }
        return;
    }
    if (r != nullptr && !self->closing_) {
        self->Answered();
    }
    done(r);
}

void RedisStore::ClaimLeases(
    std::vector<std::string> keys, std::string holder, int64_t ttl_ms,
    std::function<void(std::optional<std::vector<bool>>)> done) {
    std::vector<std::string> argv = {"EVAL", kClaimScript,
                                     std::to_string(keys.size())};
    size_t n = keys.size();
    for (std::string& k : keys) {
        argv.push_back(std::move(k));
    }
    argv.push_back(std::move(holder));
    argv.push_back(std::to_string(ttl_ms));
    Command(argv, [done = std::move(done), n](const redisReply* reply) {
        if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY ||
            reply->elements != n) {
            done(std::nullopt);
            return;
        }
        std::vector<bool> held;
        for (size_t i = 0; i < n; i++) {
            const redisReply* e = reply->element[i];
            held.push_back(e->type == REDIS_REPLY_INTEGER && e->integer == 1);
        }
        done(std::move(held));
    });
}

void RedisStore::MergeSlots(
    std::string key, std::vector<std::pair<std::string, uint64_t>> fields,
    bool never_lower) {
    std::vector<std::string> argv = {
        "EVAL", kMergeScript, "1", std::move(key),
        never_lower ? "-1" : std::to_string(kToleratedSlotRollback)};
    for (auto& [field, value] : fields) {
        argv.push_back(std::move(field));
        argv.push_back(std::to_string(value));
    }
    Command(argv, [](const redisReply*) {});
}

void RedisStore::SetLaterFields(std::string key, Fields fields) {
    WriteFields({"EVAL", kLaterScript, "1", std::move(key)},
                std::move(fields));
}

void RedisStore::SetFields(std::string key, Fields fields) {
    WriteFields({"HSET", std::move(key)}, std::move(fields));
}

// A command that writes field, value pairs after its first words.
void RedisStore::WriteFields(std::vector<std::string> argv, Fields fields) {
    if (fields.empty()) {
        return;
    }
    for (auto& [field, value] : fields) {
        argv.push_back(std::move(field));
        argv.push_back(std::move(value));
    }
    Command(argv, [](const redisReply*) {});
}

void RedisStore::ReadHash(std::string key,
                          std::function<void(std::optional<Hash>)> done) {
    Command({"HGETALL", std::move(key)},
            [done = std::move(done)](const redisReply* reply) {
                if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY) {
                    done(std::nullopt);
                    return;
                }
                Hash hash;
                for (size_t i = 0; i + 1 < reply->elements; i += 2) {
                    const redisReply* k = reply->element[i];
                    const redisReply* v = reply->element[i + 1];
                    if (k->type == REDIS_REPLY_STRING &&
                        v->type == REDIS_REPLY_STRING) {
                        hash.emplace(std::string(k->str, k->len),
                                     std::string(v->str, v->len));
                    }
                }
                done(std::move(hash));
            });
}

void RedisStore::Eval(const char* script, Words keys, Words args,
                      std::function<void(std::optional<Words>)> done) {
    std::vector<std::string> argv = {"EVAL", script,
                                     std::to_string(keys.size())};
    for (std::string& k : keys) {
        argv.push_back(std::move(k));
    }
    for (std::string& a : args) {
        argv.push_back(std::move(a));
    }
    Command(argv, [done = std::move(done)](const redisReply* reply) {
        if (reply == nullptr) {
            done(std::nullopt);
            return;
        }
        Words words;
        auto take = [&words](const redisReply* e) {
            if (e->type == REDIS_REPLY_STRING ||
                e->type == REDIS_REPLY_STATUS) {
                words.emplace_back(e->str, e->len);
            } else if (e->type == REDIS_REPLY_INTEGER) {
                words.push_back(std::to_string(e->integer));
            } else {
                words.emplace_back();
            }
        };
        if (reply->type == REDIS_REPLY_ARRAY) {
            for (size_t i = 0; i < reply->elements; i++) {
                take(reply->element[i]);
            }
        } else {
            take(reply);
        }
        done(std::move(words));
    });
}

}  // namespace solgate
