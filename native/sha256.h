/* SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104): the fast path's frame tags. */
#ifndef SWMUX_SHA256_H
#define SWMUX_SHA256_H
#include <stddef.h>
#include <stdint.h>

struct sha256 {
  uint32_t h[8];
  uint64_t bytes;
  unsigned char block[64];
  size_t fill;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
void sha256_final(struct sha256 *s, unsigned char out[32]);

/* A key's two HMAC states, computed once: each tag then costs two finals, not four blocks more. */
struct hmac_key {
  struct sha256 inner, outer;
};

void hmac_key_init(struct hmac_key *k, const unsigned char *key, size_t n);
/* The first `outn` bytes of HMAC-SHA256 over the concatenation of up to three pieces. */
void hmac_tag(const struct hmac_key *k, const void *a, size_t an, const void *b, size_t bn, const void *c, size_t cn,
              unsigned char *out, size_t outn);
#endif
