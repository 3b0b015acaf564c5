/*
 * loams/status.h - status codes shared by the host and every plugin.
 *
 * Every function of the plugin ABI returns an int: 0 (LOAMS_OK) on success,
 * a negative errno value (-ENOMEM, -EINVAL, -ENOENT, -EIO, ...) for a system
 * error, or one of the LOAMS_E* codes below.  A non-zero return always comes
 * with a message set through host->set_error(); the host shows that message
 * to the user, so it says what was wrong, where, and what to do.
 */
#ifndef LOAMS_STATUS_H
#define LOAMS_STATUS_H

#define LOAMS_OK 0

/* Our own range starts well below any errno value. */
#define LOAMS_E_BASE (-10000)
enum {
    LOAMS_EINPUT = LOAMS_E_BASE - 1,       /* malformed input (record, statement, object) */
    LOAMS_ECONFLICT = LOAMS_E_BASE - 2,    /* a metastore compare failed */
    LOAMS_EFENCED = LOAMS_E_BASE - 3,      /* the lease epoch is stale: another owner holds it */
    LOAMS_ECANCELLED = LOAMS_E_BASE - 4,   /* the run was cancelled (lease lost, shutdown) */
    LOAMS_EUNSUPPORTED = LOAMS_E_BASE - 5, /* the operation or option is not supported */
    LOAMS_ECORRUPT = LOAMS_E_BASE - 6,     /* stored data failed a consistency check */
    LOAMS_ESCHEMA = LOAMS_E_BASE - 7,      /* incompatible schema change */
    LOAMS_ERETRY = LOAMS_E_BASE - 8,       /* transient failure: retry later with backoff */
    LOAMS_EFULL = LOAMS_E_BASE - 9,        /* a store or map is full */
    LOAMS_EABI = LOAMS_E_BASE - 10,        /* plugin ABI mismatch */
    LOAMS_ENOTFOUND = LOAMS_E_BASE - 11,   /* a named object does not exist */
    LOAMS_EEXISTS = LOAMS_E_BASE - 12,     /* a named object already exists */
    LOAMS_ELIMIT = LOAMS_E_BASE - 13,      /* a resource budget was exceeded */
    LOAMS_E_LAST = LOAMS_E_BASE - 14
};

#endif /* LOAMS_STATUS_H */
