/* SPDX-License-Identifier: MIT */
/*
 * lttng_tp.h - pkbench's LTTng-UST tracepoint provider (lttng-ust 2.13 or
 * later): one event, pkbench:msg, with the two longs the latency message
 * carries (PKB_PEER_MSG's %ld arguments) as two integer fields.  The format
 * string itself is not recorded: a tracepoint's event type fixes the
 * meaning of its fields, so the call records what the arguments were, as
 * a binary record, and leaves the text to whoever reads the trace.
 *
 * The probes live in the shared object pkbench-lttng-tp.so (lttng_tp.c),
 * loaded with dlopen(3) only in the child that measures this row; pkbench
 * itself carries the call sites (peers_lttng.c), built with dynamic
 * linkage, and is not linked with liblttng-ust.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER pkbench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(PKB_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PKB_LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
	pkbench,
	msg,
	LTTNG_UST_TP_ARGS(long, a, long, b),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(long, a, a)
		lttng_ust_field_integer(long, b, b)
	)
)

#endif /* PKB_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
