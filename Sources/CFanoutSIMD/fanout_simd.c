// Byte scans on the hot paths of token parsing, payload encoding and the sink's payload check,
// sixteen bytes a step with
// SSE2 (part of every x86-64), byte by byte elsewhere. Swift's SIMD types do not compile to
// these instructions on this toolchain (measured: 4,395 instructions per payload instead of
// 868), so the two loops live here.
#include "fanout_simd.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__SSE2__)
// The bytes of `v` that a JSON string cannot hold as they are, as 0xFF lanes: '"', '\\', and,
// with one signed compare, controls (below 0x20) and non-ASCII (0x80 and above are negative).
static inline __m128i json_attention(__m128i v) {
    __m128i below = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
    __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    return _mm_or_si128(below, _mm_or_si128(quote, backslash));
}
#endif

static inline bool is_hex_digit(uint8_t byte) {
    return (uint8_t)(byte - '0') <= 9 || (uint8_t)((byte | 0x20) - 'a') <= 5;
}

size_t fanout_hex_prefix_length(const uint8_t *bytes, size_t count) {
    size_t offset = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_set1_epi8('0');
    const __m128i nine = _mm_set1_epi8(9);
    const __m128i lower = _mm_set1_epi8(0x20);
    const __m128i a = _mm_set1_epi8('a');
    const __m128i five = _mm_set1_epi8(5);
    while (offset + 16 <= count) {
        __m128i v = _mm_loadu_si128((const __m128i *)(bytes + offset));
        // Unsigned x <= n as min(x, n) == x; subtraction wraps everything else above n.
        __m128i digit = _mm_sub_epi8(v, zero);
        __m128i is_digit = _mm_cmpeq_epi8(_mm_min_epu8(digit, nine), digit);
        __m128i letter = _mm_sub_epi8(_mm_or_si128(v, lower), a);
        __m128i is_letter = _mm_cmpeq_epi8(_mm_min_epu8(letter, five), letter);
        unsigned mask = (unsigned)_mm_movemask_epi8(_mm_or_si128(is_digit, is_letter));
        if (mask != 0xFFFF) {
            return offset + (size_t)__builtin_ctz(~mask);
        }
        offset += 16;
    }
#endif
    while (offset < count && is_hex_digit(bytes[offset])) {
        offset += 1;
    }
    return offset;
}

bool fanout_is_plain_json_ascii(const uint8_t *bytes, size_t count) {
    size_t offset = 0;
#if defined(__SSE2__)
    __m128i attention = _mm_setzero_si128();
    while (offset + 16 <= count) {
        attention = _mm_or_si128(attention, json_attention(_mm_loadu_si128((const __m128i *)(bytes + offset))));
        offset += 16;
    }
    if (_mm_movemask_epi8(attention) != 0) {
        return false;
    }
#endif
    for (; offset < count; offset += 1) {
        uint8_t byte = bytes[offset];
        if (byte < 0x20 || byte >= 0x80 || byte == '"' || byte == '\\') {
            return false;
        }
    }
    return true;
}

size_t fanout_plain_json_prefix_length(const uint8_t *bytes, size_t count) {
    size_t offset = 0;
#if defined(__SSE2__)
    while (offset + 16 <= count) {
        __m128i v = _mm_loadu_si128((const __m128i *)(bytes + offset));
        unsigned mask = (unsigned)_mm_movemask_epi8(json_attention(v));
        if (mask != 0) {
            return offset + (size_t)__builtin_ctz(mask);
        }
        offset += 16;
    }
#endif
    while (offset < count) {
        uint8_t byte = bytes[offset];
        if (byte < 0x20 || byte >= 0x80 || byte == '"' || byte == '\\') {
            break;
        }
        offset += 1;
    }
    return offset;
}
