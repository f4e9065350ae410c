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

/// The length of the run at the start of `bytes` that a JSON string holds as it is: printable
/// ASCII other than '"' and '\\' (a checker skips it and looks at the byte after).
size_t fanout_plain_json_prefix_length(const uint8_t *bytes, size_t count);

#endif
