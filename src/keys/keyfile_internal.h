/*
 * keyfile_internal.h: what keyfile.c exports besides the API, for tests.
 */
#ifndef PQV_KEYFILE_INTERNAL_H
#define PQV_KEYFILE_INTERNAL_H

#include "pqvault/keyfile.h"

/*
 * keyfile_plan(p, limit, run, concurrent): how an unlock computes the
 * slots of costs ${p}: run[i] says whether slot i is computed (its cost
 * within ${limit}); *${concurrent} whether the slots computed run at once,
 * which they do only while their memory together stays within
 * limit->m_kib (a single slot counts as concurrent).  Returns how many
 * slots are computed.
 */
int keyfile_plan(const struct pqv_kdf_params p[PQV_KEYFILE_SLOTS],
    const struct pqv_kdf_limit *limit, int run[PQV_KEYFILE_SLOTS], int *concurrent);

#endif
