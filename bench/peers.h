/* SPDX-License-Identifier: MIT */
/*
 * peers.h - the loggers pkbench compares, behind one function-pointer
 * interface, so the latency and crash harnesses treat them all alike.
 *
 * Every logger logs the same message with the same two arguments:
 * PKB_PEER_MSG.  All calls of one run happen in one forked child.
 */
#ifndef PKB_PEERS_H
#define PKB_PEERS_H

#include <stddef.h>
#include <stdint.h>

#define PKB_PEER_MSG	"buffer has consumed %ld bytes of extra storage, current allocation: %ld bytes"
#define PKB_PEER_MARK	"buffer has consumed "

#define PKB_IN_LATENCY	0x1u
#define PKB_IN_CRASH	0x2u

/* pkb_logger.open() flags */
#define PKB_OPEN_CRASH	0x1u	/* install the logger's crash handling, if it has any */

struct pkb_logger {
	const char *name;
	const char *where;	/* where the lines go, for the table */
	int arg;		/* logger-specific (libprintk: the mode) */
	unsigned tables;	/* PKB_IN_LATENCY | PKB_IN_CRASH */
	/* 1 if it can run here; 0 with @why filled if not. */
	int (*available)(const struct pkb_logger *lg, char *why, size_t n);
	/* Set up, writing to @path.  0 or a negative errno. */
	int (*open)(const struct pkb_logger *lg, const char *path, unsigned flags);
	/* One call: the message with @a and @b.  Must be thread-safe. */
	void (*log)(long a, long b);
	/* Flush everything and tear down. */
	void (*close)(void);
	/*
	 * Optional, for a logger that writes no file: after close(), what it
	 * recorded of @calls and what it reports having dropped.  0, or -1 if
	 * it cannot tell.
	 */
	int (*count)(uint64_t calls, uint64_t *found, uint64_t *dropped);
};

extern const struct pkb_logger pkb_loggers[];
extern const int pkb_nloggers;

/*
 * libprintk's record store size for the next open(): large enough to hold
 * every record of the run, so that no record is overwritten before the
 * console prints it and every logger writes every line.
 */
extern size_t pkb_peer_buffer_size;
extern unsigned long pkb_peer_records;	/* the records of the next run */
void pkb_peer_size_store(unsigned long records);

/* Why open() failed when its errno does not say it; cleared before each open(). */
extern char pkb_peer_why[120];

/* peers_lttng.c, built when liblttng-ust-dev (2.13 or later) is found */
int pkb_lttng_available(const struct pkb_logger *lg, char *why, size_t n);
int pkb_lttng_open(const struct pkb_logger *lg, const char *path, unsigned flags);
void pkb_lttng_log(long a, long b);
void pkb_lttng_close(void);
int pkb_lttng_count(uint64_t calls, uint64_t *found, uint64_t *dropped);

/* peers_spdlog.cpp */
#ifdef __cplusplus
extern "C" {
#endif
int pkb_spdlog_open(const char *path, int async);
void pkb_spdlog_log(long a, long b);
void pkb_spdlog_close(void);
#ifdef __cplusplus
}
#endif

#endif /* PKB_PEERS_H */
