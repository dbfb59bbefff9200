// The reference backend's SHA-256 and HMAC-SHA256 (sha256.c), which authenticate stored
// executables, against the published test vectors: FIPS 180-4's examples (NIST's "SHA-256"
// example file: one block, two blocks, a million 'a') and RFC 4231's HMAC-SHA256 cases 1-7.
#include "sha256.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

std::string hex(const unsigned char *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

std::vector<unsigned char> unhex(const std::string &s) {
  std::vector<unsigned char> v;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    v.push_back(static_cast<unsigned char>(std::stoi(s.substr(i, 2), nullptr, 16)));
  return v;
}

std::string sha256(const std::string &msg) {
  ref_sha256 s;
  unsigned char out[REF_SHA256_BYTES];
  ref_sha256_init(&s);
  ref_sha256_update(&s, msg.data(), msg.size());
  ref_sha256_final(&s, out);
  return hex(out, sizeof out);
}

std::string hmac(const std::vector<unsigned char> &key, const std::vector<unsigned char> &msg) {
  unsigned char out[REF_SHA256_BYTES];
  ref_hmac_sha256(key.data(), key.size(), msg.data(), msg.size(), out);
  return hex(out, sizeof out);
}

std::vector<unsigned char> bytes(const std::string &s) { return {s.begin(), s.end()}; }

TEST(Sha256, Fips180Examples) {
  EXPECT_EQ(sha256("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, MillionAInPiecesOfEveryAlignment) {
  // One update, and updates of 1 to 127 bytes (crossing block boundaries every way).
  std::string a(1000000, 'a');
  const char *want = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  EXPECT_EQ(sha256(a), want);
  ref_sha256 s;
  unsigned char out[REF_SHA256_BYTES];
  ref_sha256_init(&s);
  for (size_t at = 0, step = 1; at < a.size(); at += step, step = step % 127 + 1)
    ref_sha256_update(&s, a.data() + at, std::min(step, a.size() - at));
  ref_sha256_final(&s, out);
  EXPECT_EQ(hex(out, sizeof out), want);
}

TEST(HmacSha256, Rfc4231Cases) {
  // Test case 1: 20-byte key of 0x0b, "Hi There".
  EXPECT_EQ(hmac(std::vector<unsigned char>(20, 0x0b), bytes("Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // 2: key "Jefe".
  EXPECT_EQ(hmac(bytes("Jefe"), bytes("what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // 3: 20 bytes of 0xaa, 50 of 0xdd.
  EXPECT_EQ(hmac(std::vector<unsigned char>(20, 0xaa), std::vector<unsigned char>(50, 0xdd)),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  // 4: key 0x01..0x19, 50 of 0xcd.
  EXPECT_EQ(hmac(unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"),
                 std::vector<unsigned char>(50, 0xcd)),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  // 5: truncated to 128 bits.
  EXPECT_EQ(hmac(std::vector<unsigned char>(20, 0x0c), bytes("Test With Truncation")).substr(0, 32),
            "a3b6167473100ee06e0c796c2955552b");
  // 6 and 7: a 131-byte key (hashed first).
  std::vector<unsigned char> big(131, 0xaa);
  EXPECT_EQ(hmac(big, bytes("Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(hmac(big, bytes("This is a test using a larger than block-size key and a larger "
                            "than block-size data. The key needs to be hashed before being "
                            "used by the HMAC algorithm.")),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HmacSha256, EqualSecretComparesEveryByte) {
  unsigned char a[32] = {}, b[32] = {};
  EXPECT_TRUE(ref_equal_secret(a, b, sizeof a));
  for (size_t i = 0; i < sizeof a; ++i) {
    b[i] = 1;
    EXPECT_FALSE(ref_equal_secret(a, b, sizeof a)) << i;
    b[i] = 0;
  }
}

} // namespace
