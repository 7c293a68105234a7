/* SPDX-License-Identifier: MIT */
/*
 * wfd.h - writing a console's descriptor without SIGPIPE or SIGXFSZ.
 *
 * A console whose reader went away (a pipe to `head`, a restarted log
 * collector, a closed socket) must turn into write errors, not kill the
 * program: not in a caller's pk_printk(), and least of all in the crash
 * handler, where dying of SIGPIPE would lose the report on the other
 * consoles and the core dump.  The descriptor's kind is looked at once,
 * with fstat(), when the console is made; only pipes and sockets can raise
 * SIGPIPE, so writes to terminals cost nothing extra.  A regular file can
 * raise SIGXFSZ (RLIMIT_FSIZE), which kills as surely: it is blocked and
 * taken back the same way (two pthread_sigmask() calls a write).
 *
 * Context: pk__wfd_write() is async-signal-safe (write_atomic uses it).
 */
#ifndef PK_CONSOLE_WFD_H
#define PK_CONSOLE_WFD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum pk__wfd_kind {
	PK_WFD_PLAIN,	/* file, terminal, device: write(2) */
	PK_WFD_PIPE,	/* FIFO: write(2) with SIGPIPE (and SIGXFSZ) blocked and consumed */
	PK_WFD_SOCKET,	/* send(2) with MSG_NOSIGNAL */
	PK_WFD_FILE,	/* regular file: the same, for SIGXFSZ (RLIMIT_FSIZE) */
};

enum pk__wfd_kind pk__wfd_kind(int fd);

/*
 * For the library's own threads, which block every signal for good: tells
 * pk__wfd_write() on this thread that SIGPIPE and SIGXFSZ need no masking
 * around a write.  Call it after blocking them.
 */
void pk__wfd_sigpipe_blocked(void);

/* One write(2) of @fd as @kind.  Bytes written, or -1 with errno set. */
ssize_t pk__wfd_write(int fd, enum pk__wfd_kind kind, const void *buf, size_t len);

/*
 * pk__wfd_notice_count() - is @buf (one console write) the console's drop
 * notice, "** N printk messages dropped **\n" or {"dropped":N}\n?  A
 * driver that loses a write counts a lost notice as the N records it
 * stood for, so that its own notice later carries them.
 * Context: any, async-signal-safe.
 * Return: N, or 0 if @buf is not a notice.
 */
uint64_t pk__wfd_notice_count(const char *buf, size_t len);

/*
 * file.c: how often (ns) a file console's write() looks whether its path
 * still names its file; a second.  Tests shorten it.
 */
extern _Atomic uint64_t pk__file_check_ns;

#endif /* PK_CONSOLE_WFD_H */
