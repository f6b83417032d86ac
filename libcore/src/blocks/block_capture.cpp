#include "blocks/block_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace solgate {
namespace {

constexpr int kSlotSkipped = -32007;
constexpr int kSlotSkippedLongTerm = -32009;

}  // namespace

bool CacheableEnvelope(const EnvelopeScanner::Result& result) {
    if (result.has_result) {
        return true;
    }
    return result.has_error && (result.error_code == kSlotSkipped ||
                                result.error_code == kSlotSkippedLongTerm);
}

bool StoreAnswer(CaptureSink& sink, const BlockCall& call,
                 const std::string& body, int64_t wall_ms, std::string* why) {
    std::unique_ptr<BlockCapture> capture = BlockCapture::Start(sink, call);
    if (capture == nullptr) {
        *why = "cannot start a capture";
        return false;
    }
    if (!capture->Write(body.data(), body.size())) {
        *why = "not a getBlock answer";
        return false;
    }
    return capture->Finish(wall_ms, why);
}

std::unique_ptr<BlockCapture> BlockCapture::Start(CaptureSink& sink,
                                                  const BlockCall& call) {
    if (call.variant.empty() || !sink.Open()) {
        return nullptr;
    }
    std::string path = sink.NewTempPath();
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                    0644);
    if (fd < 0) {
        return nullptr;
    }
    return std::unique_ptr<BlockCapture>(
        new BlockCapture(sink, call, fd, std::move(path)));
}

BlockCapture::BlockCapture(CaptureSink& sink, const BlockCall& call, int fd,
                           std::string path)
    : sink_(sink),
      slot_(call.slot),
      variant_(call.variant),
      api_key_(call.api_key),
      fd_(fd),
      temp_path_(std::move(path)) {}

BlockCapture::~BlockCapture() { Abandon(); }

void BlockCapture::Abandon() {
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    if (!temp_path_.empty()) {
        ::unlink(temp_path_.c_str());
        temp_path_.clear();
    }
    failed_ = true;
}

bool BlockCapture::Write(const char* data, size_t len) {
    if (failed_) {
        return false;
    }
    if (!scanner_.Feed(data, len)) {
        Abandon();
        return false;
    }
    while (len > 0) {
        ssize_t n = ::write(fd_, data, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            Abandon();
            return false;
        }
        data += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

bool BlockCapture::Finish(int64_t wall_ms, std::string* error) {
    if (failed_) {
        *error = "capture abandoned";
        return false;
    }
    if (!scanner_.Finish() || !CacheableEnvelope(scanner_.result())) {
        Abandon();
        *error = "not a cacheable getBlock answer";
        return false;
    }
    if (::close(fd_) != 0) {
        fd_ = -1;
        Abandon();
        *error = std::string("close: ") + std::strerror(errno);
        return false;
    }
    fd_ = -1;
    const EnvelopeScanner::Result& r = scanner_.result();
    if (!sink_.MakeRoom(r.total, wall_ms)) {
        Abandon();
        *error = "cache full of blocks that must stay";
        return false;
    }
    BlockRecord rec;
    rec.bytes = r.total;
    rec.id_offset = static_cast<uint32_t>(r.id_offset);
    rec.id_length = static_cast<uint32_t>(r.id_length);
    rec.kind = r.has_result ? 0 : 1;
    rec.stored_ms = wall_ms;
    rec.score = 1;   // the request that brought it
    rec.score_ms = wall_ms;
    if (r.id_offset + r.id_length > UINT32_MAX) {
        Abandon();
        *error = "id beyond 4 GiB";
        return false;
    }
    if (!sink_.Commit(temp_path_, slot_, variant_, rec, error)) {
        temp_path_.clear();   // Commit removed it
        Abandon();
        return false;
    }
    temp_path_.clear();
    // Only now is it known that the client received a block (or a skipped
    // slot), not an error: the receipt that repeat counts look at.
    if (!api_key_.empty()) {
        sink_.NoteReceipt(api_key_, slot_, wall_ms);
    }
    return true;
}

}  // namespace solgate
