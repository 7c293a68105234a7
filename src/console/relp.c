// SPDX-License-Identifier: MIT
/*
 * relp.c - console driver: RFC 5424 messages (rfc5424.c) to a syslog
 * receiver over RELP (rsyslog's imrelp and the like), through librelp.
 *
 * AT-LEAST-ONCE
 *
 * RELP acknowledges every message.  librelp's client keeps each frame it
 * sent in an unacknowledged list until the receiver's "rsp" arrives, and
 * when relpCltReconnect() re-establishes a broken session it sends that
 * list again, in order, before anything new (librelp, relpsess.c,
 * relpSessTryReestablish()).  A frame is only on that list once
 * relpCltSendSyslog() returned RELP_RET_OK: a send that fails leaves
 * nothing there.  So a message leaves this driver's queue only after
 * relpCltSendSyslog() took it; one that failed stays first in the queue
 * and is sent again after the reconnect, behind what librelp resends.
 * Delivery resumes at the first unacknowledged message; a message the
 * receiver wrote but whose ack was lost arrives twice, and the seq in its
 * structured data ([printk@32473 seq="S" ...]) lets the receiver drop the
 * second copy.  The exception: a receiver that accepts the connection but
 * refuses the session (not RELP, or offers librelp cannot accept) makes
 * the client start over, and the frames it held unacknowledged (at most
 * the RELP window, 128) are lost, uncounted.  (librelp itself leaks the
 * few hundred bytes of the frame whose send failed, once per lost
 * connection.)
 *
 * NEVER BLOCKS
 *
 * librelp's calls block (connect, a full window, waiting for acks), and a
 * console's write() may run in a pk_printk() caller or a signal handler
 * (handoff and legacy modes).  So write() only renders the message and
 * appends it to a bounded queue, a byte ring of queue_size bytes with one
 * producer (write()) and one consumer (the driver's sender thread, which
 * owns the librelp engine and client and does every librelp call).  A
 * message that finds the queue full is counted as missed and write()
 * returns -ENOBUFS (the console's write_errors); before the next message
 * it queues, one notice
 *
 *   <PRI>1 - HOST APP PROCID - [printk@32473 dropped="N"] ** N printk messages dropped **
 *
 * is queued, as syslog_net.c does for TCP.  write() uses plain memory,
 * atomics and futex(2): async-signal-safe.
 *
 * One producer: the console layer serialises a console's writes (one
 * owner prints at a time), but a crash print or an emergency takeover may
 * call in while an owner is stopped inside write(); a busy flag keeps the
 * second call out (-EBUSY), and that record is counted as missed too.
 *
 * NAMES
 *
 * A host name is resolved off the caller's path (resolve.c): make()
 * starts the lookup on a thread of its own (a numeric address resolves at
 * once) and returns.  The sender does not connect until the name resolved,
 * looking every RESOLVE_POLL_MS (10 ms doubling to 500 ms); meanwhile
 * write() queues as it does while the receiver is down, so what is logged
 * before the name resolves is kept and sent (or, past queue_size, counted
 * and reported in-band).  A failed lookup is tried again by resolve.c,
 * after pk__resolve_retry_ms doubling to a minute, for as long as the
 * console lives; the first failure is said once on stderr:
 *
 *   libprintk: syslog+relp://NAME:PORT: the name does not resolve (WHY); records are queued and the name is tried again
 *
 * librelp is then handed the numeric address (getnameinfo(NI_NUMERICHOST)),
 * so its own getaddrinfo() asks no resolver.  The name is used for nothing
 * else: the console enables no TLS, so no certificate is checked against
 * it.  A name is resolved once: a receiver that moves to another address
 * is not followed.
 *
 * LIBRELP, LOADED WHEN NEEDED
 *
 * librelp is not linked in: the first RELP console made loads
 * librelp.so.0 with dlopen() and takes the functions this file calls from
 * it, through the table lr (RELP_FUNCS).  So a program linked with
 * libprintk.a needs nothing but -pthread, and libprintk.so does not pull
 * librelp (and TLS libraries under it) into every program; only a program
 * that asks for RELP needs librelp installed.  Where it cannot be loaded,
 * make() says so on stderr, naming the library and why, and returns
 * -EPROTONOSUPPORT; a later make() tries again.  The build needs
 * librelp.h alone (PK_RELP, CMakeLists.txt); the table's types come from
 * it, so a prototype that changes is a compile error, not a crash.  The
 * library is never unloaded: senders may run in a fork child after the
 * console that loaded it is gone.
 *
 * CRASH
 *
 * write_atomic is NULL: at a crash the RELP console prints nothing (the
 * sender thread may be stopped anywhere, librelp is not signal-safe).
 * What was queued before may still go out if the process lives on long
 * enough; nothing is promised.
 *
 * RELEASE AND FORK
 *
 * release() waits up to RELEASE_DRAIN_MS for the sender to empty the
 * queue and up to RELP_TIMEOUT_S more for librelp's orderly close (which
 * follows the acks of what it sent), then stops the thread.  Anything
 * still queued then is lost.
 * In a fork() child the sender thread does not exist: an atfork handler
 * starts a new one, which connects a session of the child's own.  The
 * parent's queued messages are the parent's to send: the child drops its
 * copy of them, and never touches the parent's librelp objects (their
 * socket is shared with the parent); it leaves them allocated.  A name
 * the parent had not resolved at fork() is looked up again by the child's
 * sender (the parent's resolver thread is not in the child; its copy is
 * left allocated).  In a
 * ThreadSanitizer build no thread can be started in a threaded fork's
 * child: there the child's writes are counted as missed.
 *
 * Memory ordering:
 *   q:A (producer, acquire load of head) pairs with q:D (consumer,
 *       release store of head): the consumer has finished reading the
 *       bytes it gave back before the producer writes over them.
 *   q:B (producer, store of tail, seq_cst, a release) pairs with q:C
 *       (consumer, acquire load of tail): a message is written whole
 *       before the consumer sees it.
 *   wake:A (producer, seq_cst load of sleeping after q:B) and wake:B
 *       (consumer, seq_cst store of sleeping before its seq_cst q:C load):
 *       in the single total order one of them comes first, so either the
 *       producer sees the sleeper and wakes it, or the consumer sees the
 *       new tail and does not sleep.  A lost wake-up is also bounded by the
 *       consumer's IDLE_POLL_MS timeout.
 *   busy:A (acquire, taking the flag) pairs with busy:B (release, leaving
 *       it): the producer state one write() leaves is seen by the next.
 *   stop:A (release, in release()) pairs with stop:B (acquire, the
 *       sender): the sender sees the request, and shutdown_now before it.
 *   addr:A (the sender, release store of addr_ok after host and family)
 *       pairs with addr:B (a fork child's atfork handler, acquire): the
 *       child keeps the address only whole.  The sender alone reads them
 *       otherwise.
 *   Counters (missed_busy, sent, resent) are relaxed: statistics and
 *       in-band counts, no data hangs on them.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/atomics.h"
#include "core/core.h"
#include "core/futex.h"
#include "printk/console.h"
#include "relp.h"
#include "resolve.h"
#include "rfc5424.h"

#define LMM(label)

#ifndef PK_HAVE_RELP

int pk__relp_make(const struct pk_rfc5424_opts *o, struct pk_console_driver *out)
{
	(void)o;
	(void)out;
	fprintf(stderr, "libprintk: syslog over RELP is not available: this libprintk was "
		"built without it (PK_RELP=OFF, or librelp.h was not found: Debian "
		"librelp-dev)\n");
	return -EPROTONOSUPPORT;
}

#else /* PK_HAVE_RELP */

#include <dlfcn.h>
#include <librelp.h>

#define HDR		8u		/* uint32 length, uint32 unused */
#define WRAP		UINT32_MAX	/* length of a header that says "go to offset 0" */
#define RETRY_MIN_MS	100u
#define IDLE_POLL_MS	100u
#define RELEASE_DRAIN_MS 3000u
#define RELP_TIMEOUT_S	3		/* acks, the session's open and close */
#define RESOLVE_POLL_MS	10u		/* the sender looks for the address, doubling */
#define RESOLVE_POLL_MAX_MS 500u

extern char *program_invocation_short_name;

/* The soname loaded (see LIBRELP); tests point it elsewhere. */
const char *pk__relp_soname = "librelp.so.0";

/* Every librelp function this file calls, resolved from the loaded library. */
#define RELP_FUNCS(X)							\
	X(relpEngineConstruct) X(relpEngineDestruct) X(relpEngineSetDbgprint) \
	X(relpEngineSetShutdownImmdtPtr) X(relpEngineSetEnableCmd)		\
	X(relpEngineCltConstruct) X(relpEngineCltDestruct) X(relpCltSetTimeout) \
	X(relpCltSetConnTimeout) X(relpCltConnect) X(relpCltReconnect)	\
	X(relpCltSendSyslog)

static struct {
#define RELP_FIELD(f) __typeof__(&f) f;
	RELP_FUNCS(RELP_FIELD)
#undef RELP_FIELD
} lr;
/*
 * lr_lock serialises loading.  A fork() while another thread holds it
 * (inside dlopen(), which can take long) would leave it held for ever in
 * the child: atfork_child() makes it afresh.  The child then loads again
 * if the table was not complete (lr_loaded false); dlopen() of a library
 * already open only counts it once more.
 */
static pthread_mutex_t lr_lock = PTHREAD_MUTEX_INITIALIZER;
static bool lr_loaded;		/* under lr_lock; the table is set for good */
void (*pk__relp_load_hook)(void);
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void atfork_setup(void);

/*
 * Load librelp and fill lr, once it works (see LIBRELP).  Normal context:
 * called by make(), never on the pk_printk() path.  Return: 0, or
 * -EPROTONOSUPPORT after saying on stderr what could not be loaded.
 */
static int load_librelp(void)
{
	const char *missing = NULL;
	void *h;
	int ret = 0;

	/* The child's reset of lr_lock is in place before it is first taken. */
	pthread_once(&atfork_once, atfork_setup);
	pthread_mutex_lock(&lr_lock);
	if (pk__relp_load_hook)
		pk__relp_load_hook();
	if (lr_loaded)
		goto out;
	h = dlopen(pk__relp_soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "libprintk: syslog over RELP needs %s, which could not be "
			"loaded (%s); install librelp (Debian: librelp0)\n", pk__relp_soname,
			dlerror());
		ret = -EPROTONOSUPPORT;
		goto out;
	}
#define RELP_LOAD(f)							\
	if (!missing && !(*(void **)&lr.f = dlsym(h, #f)))		\
		missing = #f;
	RELP_FUNCS(RELP_LOAD)
#undef RELP_LOAD
	if (missing) {
		fprintf(stderr, "libprintk: syslog over RELP: %s has no %s (librelp too old?)\n",
			pk__relp_soname, missing);
		dlclose(h);
		ret = -EPROTONOSUPPORT;
		goto out;
	}
	lr_loaded = true;	/* h stays open for the life of the process */
out:
	pthread_mutex_unlock(&lr_lock);
	return ret;
}

struct relp {
	struct pk__rfc5424_id id;
	char *name;			/* the host as given */
	unsigned portnum;
	struct pk__resolver *res;	/* until the sender has the address */
	atomic_bool addr_ok;		/* host and family are set */
	bool said;			/* "does not resolve" is said */
	char host[NI_MAXHOST];		/* the address, numeric */
	char port[8];
	int family;
	unsigned conn_timeout_s, retry_max_ms;

	/* the queue: messages at byte positions [head, tail), modulo qsize */
	char *q;
	size_t qsize;
	_Atomic uint64_t head;		/* written by the sender */
	_Atomic uint64_t tail;		/* written by write() */

	/* producer (write()) side */
	atomic_bool busy;
	uint64_t missed;		/* not queued, not yet reported */
	_Atomic uint64_t missed_busy;	/* kept out by the busy flag */
	char msg[PK_RFC5424_MSG_MAX];
	char note[256];

	/* the sender */
	pthread_t thread;
	bool running;			/* a thread to join */
	_Atomic uint32_t wake;		/* futex word: bumped by write() */
	_Atomic uint32_t sleeping;
	atomic_int stop;
	int shutdown_now;		/* librelp's "stop at once" (written atomically) */
	relpEngine_t *engine;
	relpClt_t *clt;
	bool established;		/* the client had a session: reconnect, not connect */

	struct relp *next;		/* all_relp */
};

static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct relp *all_relp;

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* ---- the queue: producer ---- */

static bool q_put(struct relp *r, const char *m, size_t len)
{
	/* LMM(q:A) pairs with LMM(q:D): the sender is done with what it gave back. */
	uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	size_t need = HDR + align8(len), off = (size_t)(t % r->qsize);
	size_t skip = r->qsize - off < need ? r->qsize - off : 0;
	uint32_t l32 = (uint32_t)len;

	if (t + skip + need - h > r->qsize)
		return false;
	if (skip) {
		uint32_t w = WRAP;

		memcpy(r->q + off, &w, sizeof(w));
		off = 0;
	}
	memcpy(r->q + off, &l32, sizeof(l32));
	memcpy(r->q + off + HDR, m, len);
	/* LMM(q:B) pairs with LMM(q:C); seq_cst for LMM(wake:A). */
	atomic_store_explicit(&r->tail, t + skip + need, memory_order_seq_cst);
	/* LMM(wake:A) pairs with LMM(wake:B): a sleeping sender is woken. */
	if (atomic_load_explicit(&r->sleeping, memory_order_seq_cst)) {
		atomic_fetch_add_explicit(&r->wake, 1, memory_order_relaxed);
		pk__futex_wake(&r->wake, 1);
	}
	return true;
}

static long relp_write(void *ctx, const char *buf, size_t len)
{
	struct relp *r = ctx;
	uint64_t kept_out;
	size_t mlen, nlen;
	long ret = (long)len;

	/* LMM(busy:A) pairs with LMM(busy:B) below. */
	if (atomic_exchange_explicit(&r->busy, true, memory_order_acquire)) {
		atomic_fetch_add_explicit(&r->missed_busy, 1, memory_order_relaxed);
		return -EBUSY;
	}
	kept_out = atomic_exchange_explicit(&r->missed_busy, 0, memory_order_relaxed);
	r->missed += kept_out;
	mlen = pk__rfc5424_render(&r->id, buf, len, r->msg, sizeof(r->msg));
	if (!mlen) {
		ret = -EMSGSIZE;
	} else if (!r->running) {
		/* No sender (a fork child that could not start one). */
		r->missed++;
		ret = -ENOTCONN;
	} else {
		if (r->missed) {
			nlen = pk__rfc5424_dropped(&r->id, r->missed, r->note, sizeof(r->note));
			if (q_put(r, r->note, nlen))
				r->missed = 0;
		}
		if (!q_put(r, r->msg, mlen)) {
			r->missed++;
			ret = -ENOBUFS;
		}
	}
	/* LMM(busy:B) pairs with LMM(busy:A): what this call did is seen by the next. */
	atomic_store_explicit(&r->busy, false, memory_order_release);
	return ret;
}

/* ---- the sender ---- */

static bool stopping(struct relp *r)
{
	/* LMM(stop:B) pairs with LMM(stop:A). */
	return atomic_load_explicit(&r->stop, memory_order_acquire) != 0;
}

/* Sleep up to @ms, or until write() queues (@r->wake changes) or a stop. */
static void nap(struct relp *r, unsigned ms, bool for_data)
{
	uint32_t w = atomic_load_explicit(&r->wake, memory_order_relaxed);

	if (for_data) {
		/* LMM(wake:B) pairs with LMM(wake:A): seen as sleeping, or sees the tail. */
		atomic_store_explicit(&r->sleeping, 1, memory_order_seq_cst);
		if (atomic_load_explicit(&r->tail, memory_order_seq_cst) !=
		    atomic_load_explicit(&r->head, memory_order_relaxed) || stopping(r)) {
			atomic_store_explicit(&r->sleeping, 0, memory_order_relaxed);
			return;
		}
	}
	pk__futex_wait(&r->wake, w, (uint64_t)ms * 1000000u);
	atomic_store_explicit(&r->sleeping, 0, memory_order_relaxed);
}

static void drop_client(struct relp *r)
{
	if (r->clt)
		lr.relpEngineCltDestruct(r->engine, &r->clt);
	r->clt = NULL;
	r->established = false;
}

/* Once, on stderr: the name does not resolve (yet). */
static void say_unresolved(struct relp *r, int err)
{
	char m[512];
	int n;

	r->said = true;
	n = snprintf(m, sizeof(m), "libprintk: syslog+relp://%s:%s: the name does not resolve "
		     "(%s); records are queued and the name is tried again\n", r->name, r->port,
		     err == EAI_SYSTEM ? "system error" : gai_strerror(err));
	if (n > 0 && write(STDERR_FILENO, m, (size_t)n > sizeof(m) - 1 ? sizeof(m) - 1
								      : (size_t)n) < 0)
		return;	/* stderr is gone: nothing to say it on */
}

/*
 * The address to connect to, once the name resolved (see NAMES); never
 * waits for a resolver.  Return: true when r->host and r->family are set.
 */
static bool have_addr(struct relp *r)
{
	struct sockaddr_storage sa;
	socklen_t len;
	int err;

	if (atomic_load_explicit(&r->addr_ok, memory_order_relaxed))
		return true;
	/* A fork child's sender: the lookup is its own (see RELEASE AND FORK). */
	if (!r->res && pk__resolve_start(&r->res, r->name, r->portnum, SOCK_STREAM) < 0) {
		r->res = NULL;
		return false;
	}
	if (!pk__resolve_get(r->res, &sa, &len)) {
		if (!r->said && pk__resolve_failures(r->res, &err))
			say_unresolved(r, err);
		return false;
	}
	if (getnameinfo((struct sockaddr *)&sa, len, r->host, sizeof(r->host), NULL, 0,
			NI_NUMERICHOST))
		return false;	/* not an address getnameinfo() knows: polled on */
	r->family = sa.ss_family;
	/* LMM(addr:A) pairs with LMM(addr:B): host and family before the flag. */
	atomic_store_explicit(&r->addr_ok, true, memory_order_release);
	pk__resolve_release(r->res);
	r->res = NULL;
	return true;
}

/* One attempt to have a session.  Blocks up to the connect and RELP timeouts. */
static bool connect_once(struct relp *r)
{
	relpRetVal ret;

	if (!r->clt) {
		if (lr.relpEngineCltConstruct(r->engine, &r->clt) != RELP_RET_OK) {
			r->clt = NULL;
			return false;
		}
		lr.relpCltSetTimeout(r->clt, RELP_TIMEOUT_S);
		lr.relpCltSetConnTimeout(r->clt, (int)r->conn_timeout_s);
	}
	if (!r->established) {
		/* A failed first connect leaves no session: the next is a connect again. */
		ret = lr.relpCltConnect(r->clt, r->family, (unsigned char *)r->port,
					(unsigned char *)r->host);
		r->established = ret == RELP_RET_OK;
		return r->established;
	}
	/* Re-establish, and librelp resends what was not acknowledged. */
	ret = lr.relpCltReconnect(r->clt);
	if (ret == RELP_RET_INVALID_OFFER || ret == RELP_RET_INCOMPAT_OFFERS ||
	    ret == RELP_RET_RQD_FEAT_MISSING) {
		/* Not a session librelp can resume: start over. */
		drop_client(r);
		return false;
	}
	return ret == RELP_RET_OK;
}

/* Take back a SIGPIPE that librelp's send() left pending on this thread. */
static void consume_sigpipe(void)
{
	static const struct timespec zero = { 0, 0 };
	sigset_t pipe_set;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	while (sigtimedwait(&pipe_set, NULL, &zero) > 0 || errno == EINTR)
		;
}

static void *sender_main(void *arg)
{
	struct relp *r = arg;
	unsigned backoff = RETRY_MIN_MS, poll_ms = RESOLVE_POLL_MS;
	uint64_t h, t, retry_at = 0;
	bool up = false;
	uint32_t len;
	size_t off;

	pk__thread_name("pk-relp");
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	if (lr.relpEngineConstruct(&r->engine) != RELP_RET_OK)
		return NULL;
	/* Set, or the engine calls a NULL debug printer. */
	lr.relpEngineSetDbgprint(r->engine, NULL);
	lr.relpEngineSetShutdownImmdtPtr(r->engine, &r->shutdown_now);
	lr.relpEngineSetEnableCmd(r->engine, (unsigned char *)"syslog", eRelpCmdState_Required);
	h = atomic_load_explicit(&r->head, memory_order_relaxed);
	while (!stopping(r)) {
		if (!up) {
			if (mono_ms() < retry_at) {
				nap(r, (unsigned)(retry_at - mono_ms()), false);
				continue;
			}
			if (!have_addr(r)) {
				/* write() queues meanwhile: see NAMES. */
				retry_at = mono_ms() + poll_ms;
				poll_ms = poll_ms * 2 > RESOLVE_POLL_MAX_MS ? RESOLVE_POLL_MAX_MS
									    : poll_ms * 2;
				continue;
			}
			up = connect_once(r);
			consume_sigpipe();
			if (!up) {
				retry_at = mono_ms() + backoff;
				backoff = backoff * 2 > r->retry_max_ms ? r->retry_max_ms
									: backoff * 2;
				continue;
			}
			backoff = RETRY_MIN_MS;
		}
		/* LMM(q:C) pairs with LMM(q:B): the message is there whole. */
		t = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (h == t) {
			nap(r, IDLE_POLL_MS, true);
			continue;
		}
		off = (size_t)(h % r->qsize);
		memcpy(&len, r->q + off, sizeof(len));
		if (len == WRAP) {
			h += r->qsize - off;
			/* LMM(q:D) pairs with LMM(q:A). */
			atomic_store_explicit(&r->head, h, memory_order_release);
			continue;
		}
		if (lr.relpCltSendSyslog(r->clt, (unsigned char *)r->q + off + HDR, len) !=
		    RELP_RET_OK) {
			/* Not taken: stays first in the queue, sent after the reconnect. */
			consume_sigpipe();
			up = false;
			retry_at = 0;	/* the first reconnect at once */
			continue;
		}
		h += HDR + align8(len);
		/* LMM(q:D) pairs with LMM(q:A): librelp has its copy; the bytes are free. */
		atomic_store_explicit(&r->head, h, memory_order_release);
	}
	drop_client(r);		/* an orderly close unless shutdown_now */
	consume_sigpipe();
	lr.relpEngineDestruct(&r->engine);
	return NULL;
}

static int start_sender(struct relp *r)
{
	sigset_t all, old;
	int ret;

	/* Every signal blocked in the thread, SIGPIPE from librelp's send() included. */
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGABRT);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&r->thread, NULL, sender_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	r->running = ret == 0;
	return -ret;
}

/* ---- fork ---- */

/*
 * No prepare handler takes all_lock: release() runs under the console
 * registry's lock, which the library's own prepare handler takes, so
 * holding all_lock across fork() would order the two locks both ways.
 * all_lock only serialises make() and release(); each changes the list
 * with one pointer store, so the child sees the list whole, with or
 * without a driver being added or removed at the instant of fork().  One
 * being released then is no longer the child's console either.
 */
static void atfork_child(void)
{
	struct relp *r;
	uint64_t t;

	pthread_mutex_init(&all_lock, NULL);	/* maybe held by a thread left behind */
	pthread_mutex_init(&lr_lock, NULL);	/* the same: a load in progress */
	/* Relaxed: the child's only thread is the one running this. */
	for (r = all_relp; r; r = r->next) {
		/* LMM(addr:B) pairs with LMM(addr:A): a whole address, or none. */
		if (!atomic_load_explicit(&r->addr_ok, memory_order_acquire)) {
			/* The parent's lookup: its thread is not here (copy left allocated). */
			r->res = NULL;
			r->said = false;
		}
		/* The parent's librelp objects and socket: left alone, never freed. */
		r->engine = NULL;
		r->clt = NULL;
		r->established = false;
		r->running = false;
		r->shutdown_now = 0;
		atomic_store_explicit(&r->stop, 0, memory_order_relaxed);
		atomic_store_explicit(&r->sleeping, 0, memory_order_relaxed);
		atomic_store_explicit(&r->busy, false, memory_order_relaxed);
		/* The parent sends what it had queued. */
		t = atomic_load_explicit(&r->tail, memory_order_relaxed);
		atomic_store_explicit(&r->head, t, memory_order_relaxed);
		r->missed = 0;
		atomic_store_explicit(&r->missed_busy, 0, memory_order_relaxed);
#ifndef PK_TSAN
		start_sender(r);
#endif
	}
}

static void atfork_setup(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

/* ---- the driver ---- */

static void relp_release(void *ctx)
{
	struct relp *r = ctx, **pp;
	uint64_t end = mono_ms() + RELEASE_DRAIN_MS;

	pthread_mutex_lock(&all_lock);
	for (pp = &all_relp; *pp && *pp != r; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = r->next;
	pthread_mutex_unlock(&all_lock);
	if (r->running) {
		while (atomic_load_explicit(&r->head, memory_order_acquire) !=
		       atomic_load_explicit(&r->tail, memory_order_relaxed) && mono_ms() < end)
			usleep(5000);
		if (atomic_load_explicit(&r->head, memory_order_acquire) !=
		    atomic_load_explicit(&r->tail, memory_order_relaxed))
			__atomic_store_n(&r->shutdown_now, 1, __ATOMIC_RELEASE);
		/* LMM(stop:A) pairs with LMM(stop:B). */
		atomic_store_explicit(&r->stop, 1, memory_order_release);
		atomic_fetch_add_explicit(&r->wake, 1, memory_order_relaxed);
		pk__futex_wake(&r->wake, 1);
		pthread_join(r->thread, NULL);
	}
	pk__resolve_release(r->res);	/* a lookup still under way finishes on its own */
	free(r->name);
	free(r->q);
	free(r);
}

static const struct pk_console_ops relp_ops = {
	.name = "syslog5424-relp",
	.write = relp_write,
	.write_atomic = NULL,	/* librelp is not signal-safe: nothing at a crash */
	.release = relp_release,
};

/* Start resolving @o->host (see NAMES): never waits for a resolver. */
static int resolve(struct relp *r, const struct pk_rfc5424_opts *o)
{
	if (!o->host || !*o->host || o->port > 65535)
		return -EINVAL;
	r->portnum = o->port ? o->port : 514;
	snprintf(r->port, sizeof(r->port), "%u", r->portnum);
	r->name = strdup(o->host);
	if (!r->name)
		return -ENOMEM;
	return pk__resolve_start(&r->res, r->name, r->portnum, SOCK_STREAM);
}

int pk__relp_make(const struct pk_rfc5424_opts *o, struct pk_console_driver *out)
{
	char host[256];
	struct relp *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	ret = resolve(r, o);
	if (ret < 0)
		goto fail;
	ret = load_librelp();	/* after the options are known good */
	if (ret < 0)
		goto fail;
	r->id.facility = o->facility ? o->facility >> 3 : -1;
	r->id.bom = o->flags & PK_RFC5424_BOM;
	r->id.pid = (unsigned)getpid();
	if (!o->hostname && gethostname(host, sizeof(host)) == 0)
		host[sizeof(host) - 1] = '\0';
	else
		snprintf(host, sizeof(host), "%s", o->hostname ? o->hostname : "-");
	pk__rfc5424_id_names(&r->id, host, o->app_name ? o->app_name :
				program_invocation_short_name);
	r->conn_timeout_s = o->connect_timeout_ms ? (o->connect_timeout_ms + 999) / 1000 : 1;
	r->retry_max_ms = o->retry_max_ms ? o->retry_max_ms : 5000;
	if (r->retry_max_ms < RETRY_MIN_MS)
		r->retry_max_ms = RETRY_MIN_MS;
	r->qsize = align8(o->queue_size ? o->queue_size : 256u << 10);
	if (r->qsize < 2 * (HDR + PK_RFC5424_MSG_MAX))
		r->qsize = 2 * (HDR + PK_RFC5424_MSG_MAX);
	r->q = malloc(r->qsize);
	ret = -ENOMEM;
	if (!r->q)
		goto fail;
	pthread_once(&atfork_once, atfork_setup);
	pthread_mutex_lock(&all_lock);
	ret = start_sender(r);
	if (!ret) {
		r->next = all_relp;
		/* r->next before the link: a fork child sees the list whole. */
		atomic_signal_fence(memory_order_release);
		all_relp = r;
	}
	pthread_mutex_unlock(&all_lock);
	if (ret < 0)
		goto fail;
	memset(out, 0, sizeof(*out));
	out->ops = &relp_ops;
	out->ctx = r;
	out->format = PK_FMT_JSON | PK_FMT_F_RFC3339;
	return 0;
fail:
	pk__resolve_release(r->res);
	free(r->name);
	free(r->q);
	free(r);
	return ret;
}

#endif /* PK_HAVE_RELP */
