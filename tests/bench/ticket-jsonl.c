/*
 * ticket-jsonl.c - prints tickets FIRST .. FIRST+N-1 of ticket_gen.h as JSON
 * lines (numeric priority, a "ts" member), for benchmarks that produce them
 * through `loams-host produce` and give DuckDB the same file.
 *   ticket-jsonl N [FIRST]
 */
#include <stdio.h>
#include <stdlib.h>

#include "ticket_gen.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ticket-jsonl N [FIRST]\n");
        return 2;
    }
    unsigned long long n = strtoull(argv[1], NULL, 10);
    unsigned long long first = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
    char buf[2048];
    for (unsigned long long i = first; i < first + n; i++) {
        size_t len =
            ticket_gen_styled(i, TICKET_GEN_NUMERIC_PRIORITY | TICKET_GEN_TS, buf, sizeof buf);
        buf[len] = '\n';
        if (fwrite(buf, 1, len + 1, stdout) != len + 1) {
            return 1;
        }
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
