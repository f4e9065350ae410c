#ifndef FANOUT_SIMD_H
#define FANOUT_SIMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// The length of the run of ASCII hex digits (0-9, a-f, A-F) at the start of `bytes`.
size_t fanout_hex_prefix_length(const uint8_t *bytes, size_t count);

/// Whether `bytes` are all printable ASCII other than '"' and '\\': JSON string content that
/// needs no escaping.
bool fanout_is_plain_json_ascii(const uint8_t *bytes, size_t count);

#endif
