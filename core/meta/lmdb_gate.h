/*
 * lmdb_gate.h - a gate in front of LMDB's process-shared mutexes, so that a
 * SIGKILLed process never leaves the others asleep (internal to the LMDB
 * backends: metastore_lmdb.c; streamlog_lmdb.c may use it the same way).
 *
 * Why: LMDB serializes writers (and reader-slot allocation) with robust
 * pthread mutexes in its lock file.  A robust futex can lose a wakeup when
 * a process is killed while contending: if the waiter the kernel woke dies
 * before it takes the lock, the FUTEX_WAITERS mark dies with it, the next
 * owner releases without waking anyone, and the remaining waiters sleep
 * forever.  (Seen about once in five rounds of 20 SIGKILLs of busy writers,
 * Linux 6.18, glibc 2.36.)
 *
 * How: callers pass the gate before an LMDB call that may wait on one of
 * its mutexes, so those mutexes are never contended: an in-process mutex
 * (fcntl locks do not exclude threads of one process) and then an OFD
 * fcntl lock on one byte of the gate file, which the kernel releases, and
 * hands on, reliably when its holder dies.  A dead holder's LMDB mutex is
 * then found free or owner-dead, never waited on, and LMDB recovers it.
 *
 *  - LOAMS__LMDB_GATE_WRITE around every write transaction
 *    (mdb_txn_begin(write) ... commit/abort);
 *  - LOAMS__LMDB_GATE_READER_SLOT around what takes LMDB's reader mutex:
 *    mdb_txn_begin(MDB_RDONLY) of a transaction that has no reader slot yet
 *    (with MDB_NOTLS, reuse read transactions with mdb_txn_reset/renew so
 *    that this is rare) and mdb_reader_check.
 *
 * Never hold one gate while taking the other.  Threads: any; a gate is
 * shared by every thread of the process that uses its environment.
 */
#ifndef LOAMS_CORE_LMDB_GATE_H
#define LOAMS_CORE_LMDB_GATE_H

typedef struct loams__lmdb_gate loams__lmdb_gate;

enum { LOAMS__LMDB_GATE_WRITE = 0, LOAMS__LMDB_GATE_READER_SLOT = 1 };

/* Opens (creating, mode 0660) the gate file `path`, conventionally the
 * LMDB file name + "-gate".  *out is the caller's, freed by
 * loams__lmdb_gate_close.  Returns 0, -ENOMEM, or -errno of open(2). */
int loams__lmdb_gate_open(const char *path, loams__lmdb_gate **out);
/* Opens the gate file `path` only if it exists and this process may
 * write it (a read-only open must create nothing).  Returns 0, -ENOMEM, or
 * -errno of open(2) (-ENOENT, -EACCES, -EROFS, ...). */
int loams__lmdb_gate_open_existing(const char *path, loams__lmdb_gate **out);
/* Closes the gate (NULL is ignored); no thread may hold it. */
void loams__lmdb_gate_close(loams__lmdb_gate *g);

/* Waits for and takes gate `which`.  Returns 0, or a positive errno when
 * the lock could not be taken (then nothing is held). */
int loams__lmdb_gate_lock(loams__lmdb_gate *g, int which);
void loams__lmdb_gate_unlock(loams__lmdb_gate *g, int which);

#endif /* LOAMS_CORE_LMDB_GATE_H */
