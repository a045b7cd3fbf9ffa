/* backend_test_util.h - for the tests that run a check on every backend
 * built in (backend.h): the CPU one always, CUDA where a device is. */
#ifndef PANOCAP_BACKEND_TEST_UTIL_H
#define PANOCAP_BACKEND_TEST_UTIL_H

#include <stdio.h>

#include "backend.h"
#include "tap.h"

/* 1 when ops can run here; else one TAP skip saying why ("backend cuda:
 * no CUDA device is usable on this machine") and 0. */
static inline int tu_backend_usable(const pc_backend_ops *ops)
{
    char why[256], msg[300];
    if (ops->probe(why, sizeof why))
        return 1;
    snprintf(msg, sizeof msg, "backend %s: %s", ops->name, why);
    tap_skip(msg);
    return 0;
}

#endif
