/*
 * crashsim.h: a storage backend held in memory that models durability the
 * way the local-directory backend (src/storage/storage_local.c) provides
 * it, for crash-consistency tests in the manner of SQLite's crash-test VFS.
 *
 * What the local backend does, and so what is modelled:
 *   put      create "<name>.tmp-<rand>", write, fsync it, rename it to
 *            <name>: the content is durable before the rename is issued,
 *            but the rename (the name) is durable only once its directory
 *            is fsynced, which happens at the next barrier;
 *   del      unlink: durable likewise at the next barrier;
 *   barrier  fsync every directory touched since the last barrier.
 *
 * Every put, del and barrier is a numbered step.  Armed with
 * crashsim_arm(cs, N), the world stops at step N: that step does not happen
 * (a put in progress may leave its temporary file with partial, garbled
 * content) and every later call fails with PQV_E_IO so the caller unwinds.
 *
 * The states that may be found after the crash are then enumerated: each
 * name operation not yet made durable by a barrier either survived or was
 * lost (applied in issue order).  With at most CRASHSIM_EXHAUSTIVE pending
 * operations every subset is tried, else CRASHSIM_SAMPLES random subsets
 * (fixed seed) plus all-kept and all-lost.  Each subset is tried twice: once
 * with lost puts leaving nothing, once with lost puts leaving their
 * temporary file behind (the creation survived, the rename did not) and the
 * interrupted put leaving a partial temporary.
 */
#ifndef PQV_TEST_CRASHSIM_H
#define PQV_TEST_CRASHSIM_H

#include <stddef.h>
#include <stdint.h>

#include "pqvault/storage.h"

#define CRASHSIM_EXHAUSTIVE 10
#define CRASHSIM_SAMPLES 64

struct crashsim;

/* A new, empty simulated storage. */
struct crashsim *crashsim_new(void);
void crashsim_free(struct crashsim *cs);
pqv_storage *crashsim_storage(struct crashsim *cs);

/* crashsim_snapshot(cs): a new storage whose durable state is everything
 * ${cs} holds now (as if every directory had been synced). */
struct crashsim *crashsim_snapshot(struct crashsim *cs);

/* crashsim_arm(cs, n): crash at step ${n} (1-based); 0: never.  Resets the
 * step counter. */
void crashsim_arm(struct crashsim *cs, unsigned long n);
unsigned long crashsim_steps(const struct crashsim *cs);
int crashsim_crashed(const struct crashsim *cs);

/* Name operations still pending (not made durable by a barrier), counting
 * the partial temporary of an interrupted put. */
size_t crashsim_pending(const struct crashsim *cs);

/* crashsim_outcomes(cs): number of post-crash states to try. */
size_t crashsim_outcomes(const struct crashsim *cs);

/* crashsim_outcome(cs, i): post-crash state number ${i} as a new storage
 * (durable state only, not crashed, not armed). */
struct crashsim *crashsim_outcome(const struct crashsim *cs, size_t i);

/* Direct access for test set-up and inspection. */
int crashsim_set(struct crashsim *cs, const char *name, const uint8_t *data, size_t len);
/* Number of names containing ${needle} (for example ".tmp-"). */
size_t crashsim_count(struct crashsim *cs, const char *needle);

#endif
