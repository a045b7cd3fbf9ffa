/* test_sha256.c - common/sha256.c against the FIPS 180-4 / NIST test
 * vectors (empty, "abc", the two-block message, a million 'a's), fed whole
 * and in uneven pieces (the incremental path's block boundaries). */
#include "sha256.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static void check_vector(const char *what, const uint8_t *msg, size_t len, const char *want)
{
    uint8_t d[32];
    char hex[65];
    pc_sha256(msg, len, d);
    pc_sha256_hex(d, hex);
    TAP_CHECK(strcmp(hex, want) == 0, "%s, one shot: %s", what, hex);
    /* in pieces of 1, 2, 3, ... bytes: every offset within a block */
    pc_sha256_ctx s;
    pc_sha256_init(&s);
    size_t off = 0;
    for (size_t k = 1; off < len; k = k % 131 + 1) {
        size_t n = len - off < k ? len - off : k;
        pc_sha256_update(&s, msg + off, n);
        off += n;
    }
    pc_sha256_final(&s, d);
    pc_sha256_hex(d, hex);
    TAP_CHECK(strcmp(hex, want) == 0, "%s, in uneven pieces: %s", what, hex);
}

int main(void)
{
    check_vector("empty message", (const uint8_t *)"", 0,
                 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check_vector("\"abc\"", (const uint8_t *)"abc", 3,
                 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_vector("448-bit message (two blocks)", (const uint8_t *)two, strlen(two),
                 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *four = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                       "mnopqrstnopqrstu";
    check_vector("896-bit message", (const uint8_t *)four, strlen(four),
                 "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    size_t n = 1000000;
    uint8_t *a = malloc(n);
    if (TAP_CHECK(a != NULL, "a million bytes")) {
        memset(a, 'a', n);
        check_vector("a million 'a'", a, n, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }
    /* 55, 56 and 64 bytes: the padding's edge cases (one or two final blocks) */
    uint8_t z[64];
    memset(z, 0, sizeof z);
    check_vector("55 zero bytes", z, 55, "02779466cdec163811d078815c633f21901413081449002f24aa3e80f0b88ef7");
    check_vector("56 zero bytes", z, 56, "d4817aa5497628e7c77e6b606107042bbba3130888c5f47a375e6179be789fbb");
    check_vector("64 zero bytes", z, 64, "f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb4b");
    free(a);
    return tap_done();
}
