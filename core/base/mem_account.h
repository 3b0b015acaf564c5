/*
 * mem_account.h - the memory account of one task run: the bytes its plugin
 * contexts and batches hold, their peak, and the budget of its task class
 * they must stay under (DESIGN §10 "resource budgets per task class";
 * docs/OPERATIONS.md, "Memory budgets").
 *
 * Whatever allocates for the task charges the account before it takes the
 * memory and releases it when it gives the memory back.  A charge that
 * would take the bytes in use past the budget's limit is refused: the
 * allocation that asked fails as if the system were out of memory, and the
 * account keeps the first refusal (who asked, how much, what was in use)
 * so that the run ends with a message that names the budget
 * (loams_mem_account_refusal) instead of "out of memory".
 *
 * Ownership: reference counted.  loams_mem_account_new gives the caller
 * one reference; every other holder (a plugin context, a batch, a memory
 * block charged to it) takes its own with _ref and gives it back with
 * _unref; the last unref frees it.  The budget's strings are not copied:
 * they are static (config key names) or outlive the account.
 *
 * Errors: -ENOMEM; LOAMS_ELIMIT for a refused charge.
 * Threads: every function may be called from any thread at once (counters
 * are atomic, the refusal and the budget are under a lock); two threads
 * charging at once never take the account past its limit together.
 */
#ifndef LOAMS_CORE_MEM_ACCOUNT_H
#define LOAMS_CORE_MEM_ACCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include <loams/status.h>

/* A task class's budget, as a message names it. */
typedef struct loams_mem_budget {
    const char *setting; /* the config key, "memory_budget_link" */
    const char *what;    /* the class, "link apply" */
    const char *hint;    /* what else lowers the need, "lower batch_bytes"; may be NULL */
    uint64_t limit;      /* bytes; 0 = no limit */
} loams_mem_budget;

typedef struct loams_mem_account loams_mem_account;

/* Creates an account for the run of task `task` (copied; the key that
 * messages name) under `budget` (copied; NULL: no limit, no names).
 * *out holds one reference.  -ENOMEM. */
int loams_mem_account_new(const char *task, const loams_mem_budget *budget,
                          loams_mem_account **out);

/* Takes one more reference; returns a (NULL stays NULL). */
loams_mem_account *loams_mem_account_ref(loams_mem_account *a);
/* Gives one back; the last frees the account.  NULL is fine. */
void loams_mem_account_unref(loams_mem_account *a);

/* Puts the account under another budget (copied) from now on, and forgets
 * the refusal: a run that moves to another kind of work (a link's
 * maintenance) is held to that work's budget.  The bytes in use stay. */
void loams_mem_account_set_budget(loams_mem_account *a, const loams_mem_budget *budget);

/* Charges `bytes` (0 is always granted).  Returns 0, or LOAMS_ELIMIT when
 * the bytes in use would pass the limit: nothing is charged then, and the
 * first refusal since the last set_budget/clear is kept with `who` (copied;
 * the plugin or part of the host that asked, "target-iceberg"). */
int loams_mem_account_charge(loams_mem_account *a, uint64_t bytes, const char *who);
/* Gives back `bytes` charged earlier. */
void loams_mem_account_release(loams_mem_account *a, uint64_t bytes);

/* The bytes in use now and the most ever in use (either may be NULL). */
void loams_mem_account_usage(const loams_mem_account *a, uint64_t *in_use, uint64_t *peak);
/* The limit in force (0: none). */
uint64_t loams_mem_account_limit(const loams_mem_account *a);

/* Non-zero when a charge was refused since the last set_budget/clear.
 * With out != NULL, writes the message that says so into out[0..size):
 *   task link/default/l/0-3 would exceed the link apply memory budget
 *   (memory_budget_link = 64MiB): target-iceberg asked for 8.0 MiB more
 *   at 63.2 MiB in use; raise memory_budget_link or lower batch_bytes */
int loams_mem_account_refusal(loams_mem_account *a, char *out, size_t size);
/* Forgets the refusal (the failure it caused has been dealt with). */
void loams_mem_account_clear_refusal(loams_mem_account *a);

/* The account of the task running on this thread, for the host's shared
 * contexts (the object store's: one plugin instance serves every task, so
 * a block it allocates is charged to the task that called it).  Returns
 * the previous one, so calls nest.  Not owned: the caller keeps `a` alive
 * while it is current. */
loams_mem_account *loams_mem_account_set_current(loams_mem_account *a);
loams_mem_account *loams_mem_account_current(void);

/* Writes an amount of memory for people: "512 B", "8.0 KiB", "63.2 MiB",
 * "1.5 GiB".  Returns like snprintf. */
int loams_mem_format(uint64_t bytes, char *out, size_t size);

#endif
