/* fuzz-units.c - libFuzzer target for sizes and durations (core/base/units.c):
 * any text must parse or fail with LOAMS_EINPUT and a message; a parsed
 * value, formatted, must parse back to the same value; and any size or
 * non-negative duration taken from the input's bytes, formatted, must parse
 * back to itself (the config dump and `SHOW` output rely on it). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <loams/status.h>

#include "fuzz_input.h"
#include "loams/kit/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void size_round_trip(uint64_t b)
{
    char text[64], err[512];
    uint64_t back = 0;
    loams_kit_size_format(b, text, sizeof text);
    if (loams_kit_size_parse(text, &back, err, sizeof err) != 0 || back != b) {
        fprintf(stderr, "size %llu formats as '%s', which parses as %llu (%s)\n",
                (unsigned long long)b, text, (unsigned long long)back, err);
        abort();
    }
}

static void duration_round_trip(int64_t us)
{
    char text[128], err[512];
    int64_t back = -1;
    loams_kit_duration_format(us, text, sizeof text);
    if (loams_kit_duration_parse(text, &back, err, sizeof err) != 0 || back != us) {
        fprintf(stderr, "duration %lld us formats as '%s', which parses as %lld (%s)\n",
                (long long)us, text, (long long)back, err);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    char err[512];
    uint64_t b;
    err[0] = '\0';
    int rc = loams_kit_size_parse(text, &b, err, sizeof err);
    if (rc == 0) {
        size_round_trip(b);
    } else if (rc != LOAMS_EINPUT || err[0] == '\0') {
        abort();
    }
    int64_t us;
    err[0] = '\0';
    rc = loams_kit_duration_parse(text, &us, err, sizeof err);
    if (rc == 0) {
        if (us < 0) {
            abort();
        }
        duration_round_trip(us);
    } else if (rc != LOAMS_EINPUT || err[0] == '\0') {
        abort();
    }
    free(text);
    fuzz_input in = {data, size};
    size_round_trip(fuzz_u64(&in, 8));
    duration_round_trip((int64_t)(fuzz_u64(&in, 8) >> 1));
    return 0;
}
