/*
 * split_v1_docs.h - the documents of tests/fixtures/split-v1.bin, a split
 * written by the format-1 writer (postings as one varint list per term,
 * before block postings).  test_split_blocks.c writes the same documents
 * with today's writer and checks that both splits answer alike.
 */
#ifndef LOAMS_TEST_SPLIT_V1_DOCS_H
#define LOAMS_TEST_SPLIT_V1_DOCS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SPLIT_V1_DOCS 700u

static const char *const split_v1_words[] = {
    "printer", "jam",   "paper",  "tray",    "vpn",    "login",  "error",  "reset",
    "the",     "a",     "laptop", "battery", "wifi",   "drops",  "slow",   "email",
    "cannot",  "open",  "screen", "black",   "after",  "update", "driver", "crash",
    "network", "share", "folder", "access",  "denied", "mouse",  "dead",   "keyboard"};

/* Deterministic pseudo-random words: word w is drawn with weight ~ 1/(w+1)
 * so some terms fill several 128-document blocks and some are rare. */
static inline uint32_t split_v1_rand(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xFFFFFFu;
}

static inline size_t split_v1_word(uint32_t *s)
{
    size_t n = sizeof split_v1_words / sizeof *split_v1_words;
    for (;;) {
        size_t w = split_v1_rand(s) % n;
        if (split_v1_rand(s) % (w + 1) == 0) {
            return w;
        }
    }
}

/* Fills pk, subject (3-6 words) and body (5-40 words) of document i. */
static inline void split_v1_doc(uint32_t i, char *pk, size_t pk_cap, char *subject, size_t s_cap,
                                char *body, size_t b_cap)
{
    uint32_t s = i * 2654435761u + 7u;
    snprintf(pk, pk_cap, "v1-%04u", i);
    size_t ns = 3 + split_v1_rand(&s) % 4, nb = 5 + split_v1_rand(&s) % 36;
    subject[0] = body[0] = '\0';
    for (size_t k = 0; k < ns; k++) {
        const char *w = split_v1_words[split_v1_word(&s)];
        if (strlen(subject) + strlen(w) + 2 < s_cap) {
            strcat(subject, k ? " " : "");
            strcat(subject, w);
        }
    }
    for (size_t k = 0; k < nb; k++) {
        const char *w = split_v1_words[split_v1_word(&s)];
        if (strlen(body) + strlen(w) + 2 < b_cap) {
            strcat(body, k ? " " : "");
            strcat(body, w);
        }
    }
}

#endif
