// A FleetStore for unit tests of what runs scripts in the fleet's store:
// it records the last script's keys and arguments and answers it when the
// test says (Answer), as Redis answers later; everything else is a store
// that does not answer.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fleet/fleet_store.h"

namespace solgate::testing {

class ScriptStore : public FleetStore {
public:
    bool Up() const override { return up; }
    void ClaimLeases(std::vector<std::string>, std::string, int64_t,
                     std::function<void(std::optional<std::vector<bool>>)>
                         done) override {
        done(std::nullopt);
    }
    void MergeSlots(std::string, std::vector<std::pair<std::string, uint64_t>>,
                    bool) override {}
    void SetFields(std::string, Fields) override {}
    void SetLaterFields(std::string, Fields) override {}
    void ReadHash(std::string,
                  std::function<void(std::optional<Hash>)> done) override {
        done(std::nullopt);
    }
    void Eval(const char*, Words keys, Words args,
              std::function<void(std::optional<Words>)> done) override {
        evals++;
        last_keys = std::move(keys);
        last_args = std::move(args);
        pending = std::move(done);
    }
    // The store answers the last script with these words.
    void Answer(std::optional<Words> words) {
        auto done = std::move(pending);
        pending = nullptr;
        done(std::move(words));
    }

    bool up = true;
    int evals = 0;
    Words last_keys;
    Words last_args;
    std::function<void(std::optional<Words>)> pending;
};

}  // namespace solgate::testing
