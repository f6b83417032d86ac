// The tls_* options of an upstream line: their words, how they go
// together, and the files read when nginx reads the configuration.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "conf/upstream_args.h"
#include "support/temp_dir.h"

namespace solgate::conf {
namespace {

constexpr const char* kCert =
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
constexpr const char* kKey =
    "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";

class UpstreamTlsTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(dir_.path().empty());
        Write("ca.pem", kCert);
        Write("client.pem", kCert);
        Write("client.key", kKey);
    }

    void Write(const std::string& name, const std::string& text) {
        std::ofstream(dir_.path() + "/" + name) << text;
    }
    std::string Path(const std::string& name) const {
        return dir_.path() + "/" + name;
    }

    std::optional<std::string> Parse(std::vector<std::string> words) {
        std::vector<std::string_view> args(words.begin(), words.end());
        return ParseUpstreamArgs(
            args, [](std::string_view) { return std::optional<std::string>(); },
            dir_.path(), &u_);
    }

    TempDir dir_{"solgate-upstream-tls"};
    UpstreamArgs u_;
};

TEST_F(UpstreamTlsTest, WithoutOptionsThePollerVerifiesWithTheSystemStore) {
    ASSERT_FALSE(Parse({"v", "https://rpc.example/KEY"}));
    EXPECT_TRUE(u_.tls_settings.verify);
    EXPECT_TRUE(u_.tls_settings.trusted_pem.empty());
    EXPECT_TRUE(u_.tls_settings.certificate_pem.empty());
    EXPECT_TRUE(u_.tls.name.empty());
}

TEST_F(UpstreamTlsTest, TheFilesAreReadWhenTheConfigurationIs) {
    ASSERT_FALSE(Parse({"v", "https://127.0.0.1:8443/", "tls_verify=on",
                        "tls_trusted_certificate=" + Path("ca.pem"),
                        "tls_name=rpc.test", "tls_certificate=client.pem",
                        "tls_certificate_key=client.key"}));
    EXPECT_TRUE(u_.tls_settings.verify);
    EXPECT_EQ(u_.tls_settings.trusted_pem, kCert);
    // relative files are taken from nginx's configuration directory
    EXPECT_EQ(u_.tls_settings.certificate_pem, kCert);
    EXPECT_EQ(u_.tls_settings.certificate_key_pem, kKey);
    EXPECT_EQ(u_.tls.name, "rpc.test");
    ASSERT_FALSE(Parse({"v", "https://127.0.0.1:8443/", "tls_verify=off"}));
    EXPECT_FALSE(u_.tls_settings.verify);
}

TEST_F(UpstreamTlsTest, BadWordsAreNamedWithTheirUpstream) {
    EXPECT_EQ(Parse({"v", "https://x", "tls_verify=yes"}),
              "invalid \"tls_verify=\" \"yes\" in upstream \"v\": must be "
              "\"on\" or \"off\"");
    EXPECT_EQ(Parse({"v", "https://x", "tls_name=a b"}),
              "invalid \"tls_name=\" \"a b\" in upstream \"v\": must be a "
              "host name (letters, digits, '-', '_', '.') or an IPv4 address");
    EXPECT_EQ(Parse({"v", "https://x", "tls_name=[::1]"}),
              "invalid \"tls_name=\" \"[::1]\" in upstream \"v\": must be a "
              "host name (letters, digits, '-', '_', '.') or an IPv4 address");
    EXPECT_EQ(Parse({"v", "https://x", "tls_trusted_certificate="}),
              "empty \"tls_trusted_certificate=\" in upstream \"v\"");
    EXPECT_EQ(Parse({"v", "https://x", "tls_verify_depth=2"}),
              "invalid parameter \"tls_verify_depth=2\" in upstream \"v\", "
              "expected \"tls_verify=\", \"tls_trusted_certificate=\", "
              "\"tls_name=\", \"tls_certificate=\" or "
              "\"tls_certificate_key=\"");
}

TEST_F(UpstreamTlsTest, TheOptionsGoTogether) {
    EXPECT_EQ(Parse({"a", "http://10.0.0.1:8899", "tls_verify=off"}),
              "\"tls_verify=\" in upstream \"a\" needs an \"https://\" URL");
    EXPECT_EQ(Parse({"a", "http://x", "tls_name=x", "tls_verify=off"}),
              "\"tls_name=\" in upstream \"a\" needs an \"https://\" URL");
    EXPECT_EQ(Parse({"v", "https://x", "tls_certificate=client.pem"}),
              "\"tls_certificate=\" in upstream \"v\" needs "
              "\"tls_certificate_key=\"");
    EXPECT_EQ(Parse({"v", "https://x", "tls_certificate_key=client.key"}),
              "\"tls_certificate_key=\" in upstream \"v\" needs "
              "\"tls_certificate=\"");
}

TEST_F(UpstreamTlsTest, AFileThatCannotServeIsRefused) {
    EXPECT_EQ(Parse({"v", "https://x", "tls_trusted_certificate=none.pem"}),
              "\"tls_trusted_certificate=\" file \"" + Path("none.pem") +
                  "\" in upstream \"v\" cannot be read (2: No such file or "
                  "directory)");
    EXPECT_EQ(Parse({"v", "https://x",
                     "tls_trusted_certificate=" + dir_.path()}),
              "\"tls_trusted_certificate=\" file \"" + dir_.path() +
                  "\" in upstream \"v\" is not a file");
    // a FIFO named by mistake is refused at once, never waited on
    ASSERT_EQ(mkfifo(Path("fifo.pem").c_str(), 0600), 0);
    EXPECT_EQ(Parse({"v", "https://x", "tls_trusted_certificate=fifo.pem"}),
              "\"tls_trusted_certificate=\" file \"" + Path("fifo.pem") +
                  "\" in upstream \"v\" is not a file");
    Write("empty.pem", "");
    EXPECT_EQ(Parse({"v", "https://x", "tls_trusted_certificate=empty.pem"}),
              "\"tls_trusted_certificate=\" file \"" + Path("empty.pem") +
                  "\" in upstream \"v\" holds no PEM certificate");
    EXPECT_EQ(Parse({"v", "https://x", "tls_certificate=client.key",
                     "tls_certificate_key=client.key"}),
              "\"tls_certificate=\" file \"" + Path("client.key") +
                  "\" in upstream \"v\" holds no PEM certificate");
    EXPECT_EQ(Parse({"v", "https://x", "tls_certificate=client.pem",
                     "tls_certificate_key=client.pem"}),
              "\"tls_certificate_key=\" file \"" + Path("client.pem") +
                  "\" in upstream \"v\" holds no PEM private key");
    Write("locked.key",
          "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIE\n"
          "-----END ENCRYPTED PRIVATE KEY-----\n");
    EXPECT_EQ(Parse({"v", "https://x", "tls_certificate=client.pem",
                     "tls_certificate_key=locked.key"}),
              "\"tls_certificate_key=\" file \"" + Path("locked.key") +
                  "\" in upstream \"v\" holds an encrypted key, which the "
                  "state poller cannot use");
    Write("big.pem", std::string(kMaxTlsFileBytes + 1, 'x'));
    EXPECT_EQ(Parse({"v", "https://x", "tls_trusted_certificate=big.pem"}),
              "\"tls_trusted_certificate=\" file \"" + Path("big.pem") +
                  "\" in upstream \"v\" is larger than 1m");
    if (geteuid() != 0) {  // root reads it anyway
        ASSERT_EQ(chmod(Path("client.key").c_str(), 0), 0);
        EXPECT_EQ(Parse({"v", "https://x", "tls_certificate=client.pem",
                         "tls_certificate_key=client.key"}),
                  "\"tls_certificate_key=\" file \"" + Path("client.key") +
                      "\" in upstream \"v\" cannot be read (13: Permission "
                      "denied)");
    }
}

}  // namespace
}  // namespace solgate::conf
