// core: SHA-256 against the FIPS 180-4 / NIST example vectors, including the
// padding boundaries (55, 56, 63, 64 bytes) where a second block is needed.
#include <string>

#include <catch2/catch.hpp>

#include "core/provenance.h"
#include "core/sha256.h"

using parasim::Sha256Hex;

TEST_CASE("sha256: NIST vectors", "[core][sha256]") {
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Sha256Hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: lengths around the padding boundary all differ and are 64 hex digits", "[core][sha256]") {
  std::string prev;
  for (size_t n : {55u, 56u, 63u, 64u, 65u, 119u, 120u}) {
    const std::string h = Sha256Hex(std::string(n, 'x'));
    CHECK(h.size() == 64);
    CHECK(h.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(h != prev);
    prev = h;
  }
}

TEST_CASE("provenance: embedded presets hash their compiled-in text; unknown ones have none", "[core][provenance]") {
  const std::string h = parasim::EmbeddedSha256("gpus/h100-sxm.yaml");
  CHECK(h.size() == 64);
  CHECK(parasim::EmbeddedSha256("gpus/no-such-gpu.yaml").empty());
  CHECK(std::string(parasim::ParasimVersion()).find('.') != std::string::npos);
}
