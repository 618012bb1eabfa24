#ifndef HANDOVER_CSHA256_H
#define HANDOVER_CSHA256_H

#include <stddef.h>
#include <stdint.h>

/// SHA-256 (FIPS 180-4) of `prefix ‖ data` into `out`, with no allocation: the hashes the
/// ledger computes by the million (chain, Merkle leaf and node hashes). `prefix_length` is at
/// most 64 (more aborts). Uses the x86 SHA extensions where the CPU has them, portable C elsewhere.
void handover_sha256(const void *prefix, size_t prefix_length,
                     const void *data, size_t length, uint8_t out[32]);

/// `handover_sha256` on the portable C block function whatever the CPU has, for tests.
void handover_sha256_portable(const void *prefix, size_t prefix_length,
                              const void *data, size_t length, uint8_t out[32]);

/// Whether `handover_sha256` runs on the x86 SHA extensions on this CPU (otherwise on portable
/// C, slower than an assembly SHA-256 without them).
int handover_sha256_uses_extensions(void);

#endif
