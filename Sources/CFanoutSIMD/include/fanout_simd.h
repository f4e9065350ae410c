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

/// The deepest nesting `fanout_json_object_check` accepts: the outer object is at depth 0, a
/// value at this depth is refused.
#define FANOUT_JSON_MAXIMUM_DEPTH 64

/// What `fanout_json_object_check` found: one JSON object, or the first way the bytes are not.
typedef enum {
    FANOUT_JSON_OBJECT = 0,
    FANOUT_JSON_NOT_AN_OBJECT,
    FANOUT_JSON_TEXT_AFTER,
    FANOUT_JSON_TOO_DEEP,
    FANOUT_JSON_END_WHERE_VALUE,
    FANOUT_JSON_EXPECTED_VALUE,
    FANOUT_JSON_EXPECTED_KEY,
    FANOUT_JSON_EXPECTED_COLON,
    FANOUT_JSON_EXPECTED_COMMA_OR_BRACE,
    FANOUT_JSON_EXPECTED_COMMA_OR_BRACKET,
    FANOUT_JSON_SHORT_UNICODE_ESCAPE,
    FANOUT_JSON_UNKNOWN_ESCAPE,
    FANOUT_JSON_CONTROL_CHARACTER,
    FANOUT_JSON_NOT_UTF8,
    FANOUT_JSON_UNCLOSED_STRING,
    FANOUT_JSON_NUMBER_WITHOUT_DIGITS,
    FANOUT_JSON_NO_FRACTION_DIGITS,
    FANOUT_JSON_NO_EXPONENT_DIGITS,
} fanout_json_verdict;

/// Whether `bytes` are one JSON object (RFC 8259) in well-formed UTF-8, in one pass, in place.
/// `*offset` is where the problem shows (the byte the text stops being JSON at), or `count`.
fanout_json_verdict fanout_json_object_check(const uint8_t *bytes, size_t count, size_t *offset);

/// NotificationDigest's hash of one (device token, payload) pair: `token ‖ 0x00 ‖ payload` read
/// as little-endian 64-bit words, the tail zero-padded (Sources/FanoutAPNs/NotificationDigest.swift
/// draws it).
uint64_t fanout_notification_hash(const uint8_t *token, size_t token_count, const uint8_t *payload, size_t payload_count);

#endif
