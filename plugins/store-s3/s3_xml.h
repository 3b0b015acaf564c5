/*
 * s3_xml.h - reads the XML answers of the S3 API that store-s3 needs: an
 * error (Code, Message), a ListObjectsV2 page (Key, IsTruncated,
 * NextContinuationToken), the UploadId of a new multipart upload and the
 * uploads of ListMultipartUploads.
 *
 * The reader is minimal but strict: elements must nest and close, names
 * are compared without namespace prefix, the five predefined entities and
 * numeric character references are decoded (a reference to NUL or past
 * U+10FFFF is refused), CDATA and a document deeper than 32 elements are
 * refused.  Anything else is an error with a message, never a crash, for
 * any input (a fuzzer checks it: tests/fuzz/fuzz-s3-xml.c).
 *
 * Memory: the strings returned are allocated through `mem` (NULL: libc)
 * and are the caller's (loams__s3_strings_free, free through mem).
 * Errors: -EIO (not XML of the expected shape; message in e), -ENOMEM.
 * Threads: no shared state.
 */
#ifndef LOAMS_S3_XML_H
#define LOAMS_S3_XML_H

#include <stddef.h>

#include "loams/kit/err.h"
#include "loams/kit/mem.h"

/* A growing array of strings. */
typedef struct loams__s3_strings {
    char **items;
    size_t n;
    size_t cap;
} loams__s3_strings;

/* Frees every string and the array; the struct is then empty. */
void loams__s3_strings_free(const loams_kit_mem *mem, loams__s3_strings *s);

/* An error answer: writes its Code and Message (decoded, control
 * characters replaced by '?', cut to fit) into code[0..csize) and
 * msg[0..msize).  Returns 0 when the body is an <Error> document,
 * -EIO otherwise (code and msg are then ""). */
int loams__s3_xml_error(const char *body, size_t len, char *code, size_t csize, char *msg,
                        size_t msize);

/* A ListObjectsV2 page: the keys of its Contents in document order into
 * keys (appended), whether it is truncated and its continuation token
 * (*next: NULL when there is none, else the caller's). */
int loams__s3_xml_list(const loams_kit_mem *mem, const char *body, size_t len,
                       loams__s3_strings *keys, int *truncated, char **next, loams_kit_err *e);

/* The text of the first element named `name` (e.g. "UploadId") at any
 * depth into *out (the caller's).  -EIO when there is none. */
int loams__s3_xml_first(const loams_kit_mem *mem, const char *body, size_t len, const char *name,
                        char **out, loams_kit_err *e);

/* ListMultipartUploads: the Key and UploadId of every Upload, appended
 * pairwise to keys and ids (same count), and whether it is truncated. */
int loams__s3_xml_uploads(const loams_kit_mem *mem, const char *body, size_t len,
                          loams__s3_strings *keys, loams__s3_strings *ids, int *truncated,
                          loams_kit_err *e);

#endif
