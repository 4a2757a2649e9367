/* TLV reading shared by the compiled loops (_hotloop.c: the consumer, _serveloop.c: the
 * producer). Every read is bounded by `end`. */
#ifndef NDNSCI_TLV_H
#define NDNSCI_TLV_H

#include <stdint.h>

/* A TLV type or length at p (below end); returns the position after it, or NULL. */
static inline const uint8_t *varnum(const uint8_t *p, const uint8_t *end, uint64_t *out) {
    if (p >= end) return NULL;
    uint8_t first = *p++;
    int width = first < 253 ? 0 : first == 253 ? 2 : first == 254 ? 4 : 8;
    if (width == 0) {
        *out = first;
        return p;
    }
    if (end - p < width) return NULL;
    uint64_t v = 0;
    for (int i = 0; i < width; i++) v = (v << 8) | p[i];
    *out = v;
    return p + width;
}

/* A TLV's value at p: [*value, *value + *len) within end; returns its end or NULL. */
static inline const uint8_t *tlv_value(const uint8_t *p, const uint8_t *end,
                                       const uint8_t **value) {
    uint64_t len;
    if (p >= end || (p = varnum(p + 1, end, &len)) == NULL) return NULL;
    if (len > (uint64_t)(end - p)) return NULL;
    *value = p;
    return p + len;
}

#endif
