#include "blocks/block_variant.h"

#include <array>
#include <vector>

namespace solgate {
namespace {

constexpr std::array<std::string_view, 4> kEncodings = {
    "json", "jsonParsed", "base58", "base64"};
constexpr std::array<std::string_view, 4> kDetails = {
    "full", "accounts", "signatures", "none"};

template <size_t N>
bool OneOf(std::string_view value, const std::array<std::string_view, N>& set) {
    for (std::string_view item : set) {
        if (value == item) {
            return true;
        }
    }
    return false;
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (;;) {
        size_t end = text.find(sep, start);
        parts.push_back(text.substr(start, end - start));
        if (end == std::string_view::npos) {
            return parts;
        }
        start = end + 1;
    }
}

}  // namespace

bool IsBlockMethod(std::string_view method) {
    return method == "getBlock" || method == "getConfirmedBlock";
}

std::optional<std::string> BlockVariant(const RpcCall& call) {
    const BlockOptions& options = call.block_options;
    if (!IsBlockMethod(call.method) || !call.first_param_u64 || call.error ||
        !options.readable || options.unknown_option) {
        return std::nullopt;
    }
    if (call.commitment == SG_COMMITMENT_PROCESSED) {
        return std::nullopt;   // nodes refuse it for getBlock
    }
    std::string_view encoding = options.encoding;
    std::string_view details = options.transaction_details;
    if (encoding.empty()) {
        encoding = "json";
    }
    if (details.empty()) {
        details = "full";
    }
    // Version 0 is the only one Solana knows; anything else is refused.
    if (!OneOf(encoding, kEncodings) || !OneOf(details, kDetails) ||
        (!options.max_version.empty() && options.max_version != "0")) {
        return std::nullopt;
    }
    std::string variant;
    variant.reserve(48);
    variant.append(call.method).append("/");
    variant.append(encoding).append("/").append(details);
    variant.append(options.rewards.value_or(true) ? "/r1" : "/r0");
    variant.append(options.max_version.empty() ? "/v-" : "/v0");
    return variant;
}

std::optional<std::string> BlockRequestBody(uint64_t slot,
                                            std::string_view variant,
                                            std::string_view id_raw,
                                            std::string_view commitment) {
    std::vector<std::string_view> parts = Split(variant, '/');
    if (parts.size() != 5 || !IsBlockMethod(parts[0]) ||
        !OneOf(parts[1], kEncodings) || !OneOf(parts[2], kDetails) ||
        (parts[3] != "r0" && parts[3] != "r1") ||
        (parts[4] != "v-" && parts[4] != "v0")) {
        return std::nullopt;
    }
    std::string body = "{\"jsonrpc\":\"2.0\",\"id\":";
    body.append(id_raw.empty() ? "null" : id_raw);
    body.append(",\"method\":\"").append(parts[0]);
    body.append("\",\"params\":[").append(std::to_string(slot));
    body.append(",{\"encoding\":\"").append(parts[1]);
    body.append("\",\"transactionDetails\":\"").append(parts[2]);
    body.append("\",\"rewards\":").append(parts[3] == "r1" ? "true" : "false");
    if (parts[4] == "v0") {
        body.append(",\"maxSupportedTransactionVersion\":0");
    }
    if (!commitment.empty()) {
        body.append(",\"commitment\":\"").append(commitment).append("\"");
    }
    body.append("}]}");
    return body;
}

}  // namespace solgate
