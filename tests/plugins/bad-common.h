/*
 * bad-common.h - what the deliberately bad test plugins share: a decoder
 * vtable that is itself valid, so that each plugin is wrong in exactly the
 * one way its folder is named for.
 */
#ifndef LOAMS_TEST_BAD_COMMON_H
#define LOAMS_TEST_BAD_COMMON_H

#include <loams/plugin.h>

static int bad_open(loams_ctx *ctx, void **state)
{
    (void)ctx;
    *state = NULL;
    return 0;
}

static int bad_decode(void *state, loams_batch *batch)
{
    (void)state;
    (void)batch;
    return 0;
}

static void bad_close(void *state)
{
    (void)state;
}

static const loams_decoder_vtable bad_vt = {sizeof bad_vt, bad_open, bad_decode, bad_close};

#endif
