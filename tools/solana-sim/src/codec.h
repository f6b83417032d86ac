// Binary-to-text encodings used by Solana RPC: base58 (keys, signatures,
// instruction data) and base64 (binary transaction / account encodings).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace solsim {

// Appends the base58 (Bitcoin alphabet) encoding of data to out.
void base58_append(std::string& out, const uint8_t* data, size_t len);
std::string base58_encode(const uint8_t* data, size_t len);

// Decodes base58; returns false on an invalid character.
bool base58_decode(std::string_view text, std::vector<uint8_t>& out);
// True when text is base58 of exactly that many bytes (a 32-byte pubkey, a
// 64-byte signature). Text over 100 characters is refused undecoded: the
// decoder is quadratic and no key or signature is that long.
bool base58_decodes_to(std::string_view text, size_t bytes);

// Appends standard padded base64 to out.
void base64_append(std::string& out, const uint8_t* data, size_t len);
// Decodes standard padded base64; returns false on anything else.
bool base64_decode(std::string_view text, std::vector<uint8_t>& out);

}  // namespace solsim
