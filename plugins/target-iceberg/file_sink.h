/*
 * file_sink.h - where the Iceberg target's file writers (Parquet, Avro,
 * manifests) send finished bytes: a write callback, so that the writers
 * never touch the host (the plugin's callback calls
 * host->store_writer_write; the tests' collect into a buffer).
 */
#ifndef LOAMS_ICEBERG_FILE_SINK_H
#define LOAMS_ICEBERG_FILE_SINK_H

#include <stddef.h>

/* write() is called with consecutive pieces of the file in order; it
 * returns 0, or a negative status (-EIO, -ENOSPC, or whatever the
 * underlying store returns) that the writer passes back to its caller
 * unchanged.  p is valid during the call only. */
typedef int (*loams__sink_write_fn)(void *ud, const void *p, size_t n);
typedef struct loams__sink {
    loams__sink_write_fn write;
    void *ud;
} loams__sink;

#endif
