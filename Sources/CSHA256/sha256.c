// SHA-256 (FIPS 180-4) for the ledger's hot paths: one call hashes `prefix ‖ data` into a
// caller's buffer, with the state on the stack. The block function runs on the x86 SHA
// extensions when the CPU reports them (CPUID leaf 7, EBX bit 29), in portable C otherwise.

#include "CSHA256.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define HANDOVER_SHA256_X86 1
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint32_t initial_state[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static inline uint32_t load_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static void compress_portable(uint32_t state[8], const uint8_t *blocks, size_t count) {
    for (; count > 0; count--, blocks += 64) {
        uint32_t w[64];
        for (int t = 0; t < 16; t++) w[t] = load_be32(blocks + 4 * t);
        for (int t = 16; t < 64; t++) {
            uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
            uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int t = 0; t < 64; t++) {
            uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
            uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g; g = f; f = e; e = d + t1;
            d = c; c = b; b = a; a = t1 + t2;
        }
        state[0] += a; state[1] += b; state[2] += c; state[3] += d;
        state[4] += e; state[5] += f; state[6] += g; state[7] += h;
    }
}

#ifdef HANDOVER_SHA256_X86
// The SHA extensions keep the state as two registers, ABEF and CDGH. Each SHA256RNDS2 runs two
// rounds; SHA256MSG1 and SHA256MSG2 compute the message schedule four words at a time.
__attribute__((target("sha,sse4.1,ssse3")))
static void compress_extensions(uint32_t state[8], const uint8_t *blocks, size_t count) {
    const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&state[4]);
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);

    for (; count > 0; count--, blocks += 64) {
        const __m128i abef_before = abef, cdgh_before = cdgh;
        __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks + 0)), byte_swap);
        __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks + 16)), byte_swap);
        __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks + 32)), byte_swap);
        __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(blocks + 48)), byte_swap);
// Four rounds on words 4g to 4g+3, held in `words`.
#define FOUR_ROUNDS(g, words) do { \
            __m128i wk = _mm_add_epi32(words, _mm_loadu_si128((const __m128i *)&K[4 * (g)])); \
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk); \
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E)); \
        } while (0)
// The next four words W[t..t+3] into `oldest` (W[t-16..t-13]): W[t-16] + σ0(W[t-15]) + W[t-7] + σ1(W[t-2]).
#define SCHEDULE(oldest, second, third, newest) \
        oldest = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(oldest, second), _mm_alignr_epi8(newest, third, 4)), newest)
        // Rounds 0-47, each group of four words scheduled again as soon as it is used; the
        // words stay in named registers (an array indexed by the loop would live on the stack).
        for (int g = 0; g < 12; g += 4) {
            FOUR_ROUNDS(g, w0); SCHEDULE(w0, w1, w2, w3);
            FOUR_ROUNDS(g + 1, w1); SCHEDULE(w1, w2, w3, w0);
            FOUR_ROUNDS(g + 2, w2); SCHEDULE(w2, w3, w0, w1);
            FOUR_ROUNDS(g + 3, w3); SCHEDULE(w3, w0, w1, w2);
        }
        FOUR_ROUNDS(12, w0);
        FOUR_ROUNDS(13, w1);
        FOUR_ROUNDS(14, w2);
        FOUR_ROUNDS(15, w3);
#undef FOUR_ROUNDS
#undef SCHEDULE
        abef = _mm_add_epi32(abef, abef_before);
        cdgh = _mm_add_epi32(cdgh, cdgh_before);
    }

    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}

static int cpu_has_extensions(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid_count(1, 0, &eax, &ebx, &ecx, &edx)) return 0;
    // SSSE3 (ECX bit 9) and SSE4.1 (ECX bit 19) for the shuffles around the SHA instructions.
    if (!(ecx & (1u << 9)) || !(ecx & (1u << 19))) return 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    return (ebx >> 29) & 1;
}
#endif

typedef void (*compress_function)(uint32_t state[8], const uint8_t *blocks, size_t count);

static compress_function chosen_compress(void) {
    static _Atomic(compress_function) chosen = NULL;
    compress_function function = atomic_load_explicit(&chosen, memory_order_relaxed);
    if (function) return function;
    function = compress_portable;
#ifdef HANDOVER_SHA256_X86
    if (cpu_has_extensions()) function = compress_extensions;
#endif
    atomic_store_explicit(&chosen, function, memory_order_relaxed);
    return function;
}

int handover_sha256_uses_extensions(void) {
#ifdef HANDOVER_SHA256_X86
    return chosen_compress() == compress_extensions;
#else
    return 0;
#endif
}

static void hash_with(compress_function compress, const void *prefix, size_t prefix_length, const void *data, size_t length, uint8_t out[32]) {
    if (prefix_length > 64) abort();
    uint32_t state[8];
    memcpy(state, initial_state, sizeof state);
    const uint64_t bit_length = ((uint64_t)prefix_length + length) * 8;
    const uint8_t *bytes = data;

    // The block being filled: the prefix, then data until it is full.
    uint8_t buffer[128];
    size_t filled = prefix_length;
    if (prefix_length > 0) memcpy(buffer, prefix, prefix_length);
    if (filled > 0 && filled + length >= 64) {
        size_t taken = 64 - filled;
        if (taken > 0) {
            memcpy(buffer + filled, bytes, taken);
            bytes += taken;
            length -= taken;
        }
        compress(state, buffer, 1);
        filled = 0;
    }
    if (filled == 0 && length >= 64) {
        size_t whole = length / 64;
        compress(state, bytes, whole);
        bytes += whole * 64;
        length -= whole * 64;
    }
    if (length > 0) memcpy(buffer + filled, bytes, length);
    filled += length;

    // Padding: 0x80, zeros, and the length in bits, big-endian, ending a block.
    buffer[filled++] = 0x80;
    size_t end = filled <= 56 ? 64 : 128;
    memset(buffer + filled, 0, end - 8 - filled);
    for (int i = 0; i < 8; i++) buffer[end - 1 - i] = (uint8_t)(bit_length >> (8 * i));
    compress(state, buffer, end / 64);

    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(state[i] >> 24);
        out[4 * i + 1] = (uint8_t)(state[i] >> 16);
        out[4 * i + 2] = (uint8_t)(state[i] >> 8);
        out[4 * i + 3] = (uint8_t)state[i];
    }
}

void handover_sha256(const void *prefix, size_t prefix_length, const void *data, size_t length, uint8_t out[32]) {
    hash_with(chosen_compress(), prefix, prefix_length, data, length, out);
}

void handover_sha256_portable(const void *prefix, size_t prefix_length, const void *data, size_t length, uint8_t out[32]) {
    hash_with(compress_portable, prefix, prefix_length, data, length, out);
}
