/* sha256.h - SHA-256 (FIPS 180-4), for checking data files such as the
 * learned demosaic's weights (kernels/net.c). Incremental or one-shot. */
#ifndef PANOCAP_SHA256_H
#define PANOCAP_SHA256_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pc_sha256_ctx {
    uint32_t h[8];
    uint64_t bytes;     /* message length so far */
    uint8_t buf[64];    /* the partial block */
} pc_sha256_ctx;

void pc_sha256_init(pc_sha256_ctx *s);
void pc_sha256_update(pc_sha256_ctx *s, const void *data, size_t len);
void pc_sha256_final(pc_sha256_ctx *s, uint8_t digest[32]);
/* One-shot: digest of data[0..len). */
void pc_sha256(const void *data, size_t len, uint8_t digest[32]);
/* digest as 64 lowercase hex digits and a NUL (hex holds 65 bytes). */
void pc_sha256_hex(const uint8_t digest[32], char hex[65]);

#ifdef __cplusplus
}
#endif
#endif
