// Byte scans on the hot paths of token parsing, payload encoding and the sink's payload check,
// sixteen bytes a step with SSE2 (part of every x86-64), byte by byte elsewhere. Swift's SIMD
// types do not compile to these instructions on this toolchain (measured: 4,395 instructions per
// payload instead of 868), so the loops live here; and the sink's JSON check with them, whose
// byte-at-a-time Swift reading cost 4,406 instructions a 280-byte poll payload (15 a byte, of
// bounds checks and optionals; scripts/cost.sh's json-check).
#include "fanout_simd.h"

#include <string.h>

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

// The length of the run at the start of `bytes` that a JSON string holds as it is: printable
// ASCII other than '"' and '\\' (the checker skips it and looks at the byte after).
static inline size_t plain_json_prefix_length(const uint8_t *bytes, size_t count) {
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

// ─── The sink's JSON check ──────────────────────────────────────────────────────────────────
//
// One JSON object (RFC 8259) in well-formed UTF-8, checked in place in one pass without
// recursion: the open containers are a stack of bits (1 an object, 0 an array), which bounds
// the nesting at 64 by construction. What it reads, as states:
//
//     value ──'{'──► key ──'"'…'"' ':'──► value          (a member's value)
//       │    ──'['──────────────────────► value          (an element)
//       │    ─ string, number, literal ─► after
//       ▼
//     after ──','──► key (in an object) or value (in an array)
//           ──'}' or ']'──► after, one level out;  at level 0: only space may follow
//
// Every verdict names the first byte where the text stops being JSON, as the byte-at-a-time
// reading it replaced did (Tests/FanoutPayloadTests keep that reading as the reference).

static inline bool is_json_space(uint8_t byte) {
    return byte <= ' ' && (byte == ' ' || byte == '\n' || byte == '\r' || byte == '\t');
}

static inline size_t skip_json_space(const uint8_t *bytes, size_t count, size_t offset) {
    while (offset < count && is_json_space(bytes[offset])) {
        offset += 1;
    }
    return offset;
}

static inline bool is_digit(uint8_t byte) {
    return (uint8_t)(byte - '0') <= 9;
}

// The length of the well-formed sequence at `bytes` whose lead byte is 0x80 or above (Unicode
// 15, table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF), 0 when it is not
// UTF-8.
static inline size_t utf8_sequence_length(const uint8_t *bytes, size_t available) {
    uint8_t lead = bytes[0], low = 0x80, high = 0xBF;
    size_t length;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) low = 0xA0;
        if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) low = 0x90;
        if (lead == 0xF4) high = 0x8F;
    } else {
        return 0;
    }
    if (available < length || bytes[1] < low || bytes[1] > high) return 0;
    for (size_t index = 2; index < length; index += 1) {
        if ((bytes[index] & 0xC0) != 0x80) return 0;
    }
    return length;
}

// The string whose opening quote is at `offset`: the offset after its closing quote, or the
// verdict and where it shows.
static inline __attribute__((always_inline)) fanout_json_verdict json_string(const uint8_t *bytes, size_t count, size_t *offset) {
    size_t at = *offset + 1;
    while (at < count) {
        at += plain_json_prefix_length(bytes + at, count - at);
        if (at >= count) break;
        uint8_t byte = bytes[at];
        if (byte == '"') {
            *offset = at + 1;
            return FANOUT_JSON_OBJECT;
        }
        if (byte == '\\') {
            at += 1;
            uint8_t escaped = at < count ? bytes[at] : 0;
            switch (escaped) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                at += 1;
                break;
            case 'u':
                at += 1;
                for (int digit = 0; digit < 4; digit += 1, at += 1) {
                    if (at >= count || !is_hex_digit(bytes[at])) {
                        *offset = at;
                        return FANOUT_JSON_SHORT_UNICODE_ESCAPE;
                    }
                }
                break;
            default:
                *offset = at;
                return FANOUT_JSON_UNKNOWN_ESCAPE;
            }
        } else if (byte < 0x20) {
            *offset = at;
            return FANOUT_JSON_CONTROL_CHARACTER;
        } else {
            size_t length = utf8_sequence_length(bytes + at, count - at);
            if (length == 0) {
                *offset = at;
                return FANOUT_JSON_NOT_UTF8;
            }
            at += length;
        }
    }
    *offset = count;
    return FANOUT_JSON_UNCLOSED_STRING;
}

static inline __attribute__((always_inline)) fanout_json_verdict json_number(const uint8_t *bytes, size_t count, size_t *offset) {
    size_t at = *offset;
    if (bytes[at] == '-') at += 1;
    if (at >= count || !is_digit(bytes[at])) {
        *offset = at;
        return FANOUT_JSON_NUMBER_WITHOUT_DIGITS;
    }
    // A leading zero stands alone ("01" is a 0 and then a stray 1).
    if (bytes[at++] != '0') {
        while (at < count && is_digit(bytes[at])) at += 1;
    }
    if (at < count && bytes[at] == '.') {
        at += 1;
        if (at >= count || !is_digit(bytes[at])) {
            *offset = at;
            return FANOUT_JSON_NO_FRACTION_DIGITS;
        }
        while (at < count && is_digit(bytes[at])) at += 1;
    }
    if (at < count && (bytes[at] | 0x20) == 'e') {
        at += 1;
        if (at < count && (bytes[at] == '+' || bytes[at] == '-')) at += 1;
        if (at >= count || !is_digit(bytes[at])) {
            *offset = at;
            return FANOUT_JSON_NO_EXPONENT_DIGITS;
        }
        while (at < count && is_digit(bytes[at])) at += 1;
    }
    *offset = at;
    return FANOUT_JSON_OBJECT;
}

static inline bool json_literal(const uint8_t *bytes, size_t count, size_t offset, const char *word, size_t length) {
    return count - offset >= length && memcmp(bytes + offset, word, length) == 0;
}

// The open containers are the bits of one 64-bit word.
_Static_assert(FANOUT_JSON_MAXIMUM_DEPTH <= 64, "the container stack is a uint64_t");

#define JSON_FAIL(verdict, where) \
    do {                          \
        *offset = (where);        \
        return (verdict);         \
    } while (0)

fanout_json_verdict fanout_json_object_check(const uint8_t *bytes, size_t count, size_t *offset) {
    size_t at = skip_json_space(bytes, count, 0);
    if (at >= count || bytes[at] != '{') JSON_FAIL(FANOUT_JSON_NOT_AN_OBJECT, at);
    uint64_t objects = 0;  // bit L: the container open at level L is an object
    unsigned level = 0;    // containers open; a value read now is at this depth
    fanout_json_verdict verdict;

value:
    if (level >= FANOUT_JSON_MAXIMUM_DEPTH) JSON_FAIL(FANOUT_JSON_TOO_DEEP, at);
    at = skip_json_space(bytes, count, at);
    if (at >= count) JSON_FAIL(FANOUT_JSON_END_WHERE_VALUE, at);
    switch (bytes[at]) {
    case '{':
        at = skip_json_space(bytes, count, at + 1);
        if (at < count && bytes[at] == '}') {
            at += 1;
            goto after;
        }
        objects |= (uint64_t)1 << level;
        level += 1;
        goto key;
    case '[':
        at = skip_json_space(bytes, count, at + 1);
        if (at < count && bytes[at] == ']') {
            at += 1;
            goto after;
        }
        objects &= ~((uint64_t)1 << level);
        level += 1;
        goto value;
    case '"':
        if ((verdict = json_string(bytes, count, &at)) != FANOUT_JSON_OBJECT) JSON_FAIL(verdict, at);
        goto after;
    case 't':
        if (!json_literal(bytes, count, at, "true", 4)) JSON_FAIL(FANOUT_JSON_EXPECTED_VALUE, at);
        at += 4;
        goto after;
    case 'f':
        if (!json_literal(bytes, count, at, "false", 5)) JSON_FAIL(FANOUT_JSON_EXPECTED_VALUE, at);
        at += 5;
        goto after;
    case 'n':
        if (!json_literal(bytes, count, at, "null", 4)) JSON_FAIL(FANOUT_JSON_EXPECTED_VALUE, at);
        at += 4;
        goto after;
    case '-': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
        if ((verdict = json_number(bytes, count, &at)) != FANOUT_JSON_OBJECT) JSON_FAIL(verdict, at);
        goto after;
    default:
        JSON_FAIL(FANOUT_JSON_EXPECTED_VALUE, at);
    }

key:
    at = skip_json_space(bytes, count, at);
    if (at >= count || bytes[at] != '"') JSON_FAIL(FANOUT_JSON_EXPECTED_KEY, at);
    if ((verdict = json_string(bytes, count, &at)) != FANOUT_JSON_OBJECT) JSON_FAIL(verdict, at);
    at = skip_json_space(bytes, count, at);
    if (at >= count || bytes[at] != ':') JSON_FAIL(FANOUT_JSON_EXPECTED_COLON, at);
    at += 1;
    goto value;

after:
    at = skip_json_space(bytes, count, at);
    if (level == 0) {
        if (at < count) JSON_FAIL(FANOUT_JSON_TEXT_AFTER, at);
        *offset = at;
        return FANOUT_JSON_OBJECT;
    }
    if (objects >> (level - 1) & 1) {
        if (at < count && bytes[at] == ',') {
            at += 1;
            goto key;
        }
        if (at >= count || bytes[at] != '}') JSON_FAIL(FANOUT_JSON_EXPECTED_COMMA_OR_BRACE, at);
    } else {
        if (at < count && bytes[at] == ',') {
            at += 1;
            goto value;
        }
        if (at >= count || bytes[at] != ']') JSON_FAIL(FANOUT_JSON_EXPECTED_COMMA_OR_BRACKET, at);
    }
    at += 1;
    level -= 1;
    goto after;
}

// ─── The notification digest's pair hash ────────────────────────────────────────────────────
//
//   h = 0x9E3779B97F4A7C15 ^ length
//   for each little-endian word w of token ‖ 0x00 ‖ payload (the tail zero-padded):
//       h = rotl(h ^ (w * 0xBF58476D1CE4E5B9), 31) * 0x94D049BB133111EB
//   h = fmix64(h)    (MurmurHash3's finaliser)
//
// The pieces' boundaries fall inside words (a 64-byte token, then one zero byte): each word of
// the payload completes the pending bytes and leaves its own high bytes pending.

static inline uint64_t digest_mix(uint64_t hash, uint64_t word) {
    uint64_t mixed = hash ^ (word * 0xBF58476D1CE4E5B9ull);
    return ((mixed << 31) | (mixed >> 33)) * 0x94D049BB133111EBull;
}

static inline uint64_t load_little_endian(const uint8_t *bytes) {
    uint64_t word;
    memcpy(&word, bytes, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    word = __builtin_bswap64(word);
#endif
    return word;
}

typedef struct {
    uint64_t hash;
    uint64_t pending;   // the bytes of an unfinished word, low bytes first
    unsigned filled;    // how many: 0 to 7
} digest_mixer;

static inline void digest_absorb(digest_mixer *mixer, const uint8_t *bytes, size_t count) {
    size_t at = 0;
    if (mixer->filled == 0) {
        for (; count - at >= 8; at += 8) {
            mixer->hash = digest_mix(mixer->hash, load_little_endian(bytes + at));
        }
    } else {
        unsigned shift = 8 * mixer->filled;
        for (; count - at >= 8; at += 8) {
            uint64_t loaded = load_little_endian(bytes + at);
            mixer->hash = digest_mix(mixer->hash, mixer->pending | loaded << shift);
            mixer->pending = loaded >> (64 - shift);
        }
    }
    for (; at < count; at += 1) {
        mixer->pending |= (uint64_t)bytes[at] << (8 * mixer->filled);
        if (++mixer->filled == 8) {
            mixer->hash = digest_mix(mixer->hash, mixer->pending);
            mixer->pending = 0;
            mixer->filled = 0;
        }
    }
}

uint64_t fanout_notification_hash(const uint8_t *token, size_t token_count, const uint8_t *payload, size_t payload_count) {
    uint64_t hash = 0x9E3779B97F4A7C15ull ^ (uint64_t)(token_count + 1 + payload_count);
    if ((token_count & 7) == 0 && payload_count >= 8) {
        // The usual token is whole words (32 bytes, 64 hex digits; any multiple of 8 takes this
        // path, others the general one below), so after it the words are the separator and the
        // payload's first 7 bytes, then the payload's bytes from 7 on, 8 at a time: one load a
        // word, nothing pending.
        //     … token │ 00 p0 p1 p2 p3 p4 p5 p6 │ p7 … p14 │ … │ tail, zero-padded
        for (size_t at = 0; at < token_count; at += 8) {
            hash = digest_mix(hash, load_little_endian(token + at));
        }
        hash = digest_mix(hash, load_little_endian(payload) << 8);
        size_t at = 7;
        for (; payload_count - at >= 8; at += 8) {
            hash = digest_mix(hash, load_little_endian(payload + at));
        }
        uint64_t tail = 0;
        for (unsigned filled = 0; at < payload_count; at += 1, filled += 1) {
            tail |= (uint64_t)payload[at] << (8 * filled);
        }
        if ((payload_count - 7) & 7) hash = digest_mix(hash, tail);
    } else {
        static const uint8_t separator = 0;
        digest_mixer mixer = {hash, 0, 0};
        if (token_count > 0) digest_absorb(&mixer, token, token_count);
        digest_absorb(&mixer, &separator, 1);
        if (payload_count > 0) digest_absorb(&mixer, payload, payload_count);
        if (mixer.filled > 0) mixer.hash = digest_mix(mixer.hash, mixer.pending);
        hash = mixer.hash;
    }
    hash ^= hash >> 33;
    hash *= 0xFF51AFD7ED558CCDull;
    hash ^= hash >> 33;
    hash *= 0xC4CEB9FE1A85EC53ull;
    hash ^= hash >> 33;
    return hash;
}
