// SPDX-License-Identifier: MIT
/* lttng_tp.c - the probes of pkbench:msg (lttng_tp.h), built as pkbench-lttng-tp.so. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "lttng_tp.h"
