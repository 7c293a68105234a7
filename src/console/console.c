// SPDX-License-Identifier: MIT
/*
 * console.c - the console registry, per-console state and counters, the
 * PK_CONSOLE syntax, and how one record reaches one console.
 *
 * REGISTRY
 *
 * A fixed array of slots, each a console pointer, and counts of users.  A
 * user (a printer, possibly in a signal handler) increments its count for
 * the slot, then loads the pointer; pk_console_unregister() replaces the
 * pointer with DRAINING, then waits for every count of the slot to drop to
 * zero before it frees the console.  Both sides use seq_cst (reg:A,
 * reg:B): either the user sees DRAINING and backs off, or the
 * unregisterer sees the user's count and waits for it.  Register and
 * unregister serialize on a mutex; users never take it.
 *
 * The counts come in PIN_GROUPS groups, a thread's by its tid (chosen on
 * its first pin and kept, so that a pin and its release use one count),
 * each group's counts for all slots on one line of their own.  One count
 * per slot, shared by every thread, was a line that two writers passing
 * over filtered records on two CPUs took from each other at every batch
 * (two locked instructions a console).  pk__con_slots() says which slots
 * hold a console (or one draining), so that a pass over the consoles loads
 * one word, not sixteen slots.
 *
 * A thread counts its own pins of each slot in pk__self.pin_depth,
 * raised before its group's count and lowered after it, so that a fork
 * child, whose only thread is the one that forked (perhaps from inside a
 * console's write(), pinned), starts with that thread's pins counted
 * (pk__con_atfork_child()): zero, its own release would wrap the count,
 * and the next pin in the group would bring it back to zero while the
 * console is in use.  A signal between the two steps makes a fork in its
 * handler count one pin too many, which only makes an unregister in the
 * child give the console up (-EBUSY), never free it under a user.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "console/consoles.h"

#define LMM(label)
#define DRAINING ((struct pk_console *)1)

#define PIN_GROUPS	16

struct slot {
	_Atomic(struct pk_console *) con;
};

static struct slot slots[PK_MAX_CONSOLES];
/* 128 bytes apart: CPUs fetch lines in aligned pairs (as gate.c's counters). */
static struct pin_group {
	_Alignas(128) _Atomic uint32_t users[PK_MAX_CONSOLES];
} pins[PIN_GROUPS];
struct pk__con_slot_word pk__con_slot_word;	/* read on every call: a line of its own */
_Static_assert(PK_MAX_CONSOLES <= 32, "a slot's bit in pk__con_slots()");
_Static_assert(PK_MAX_CONSOLES <= sizeof(pk__self.pin_depth) / sizeof(pk__self.pin_depth[0]),
	       "a thread's pins of every slot");
static _Atomic int nr_consoles;
static _Atomic int max_loglevel;
/* pk_set_loglevel(): the loglevel of consoles that follow the global one. */
static _Atomic int global_loglevel = 7;
/*
 * The program set it (pk_set_loglevel()): pk_init() keeps it unless its
 * configuration names a loglevel, so that a call made before the first
 * pk_printk() survives the initialisation that call makes.
 */
static _Atomic bool loglevel_chosen;
/* The local time's offset from UTC, in seconds (PK_FMT_F_CTIME, _RFC3339). */
static _Atomic long utc_offset;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct pk__con_hooks *hooks;

void pk__con_set_hooks(const struct pk__con_hooks *h)
{
	hooks = h;
}

/* This thread's pin group, chosen by tid on its first pin and kept (also in a fork child). */
static inline struct pin_group *my_pins(void)
{
	unsigned g = pk__self.pin_idx;

	if (__builtin_expect(!g, 0)) {
		g = pk__tid() % PIN_GROUPS + 1;
		pk__self.pin_idx = g;
	}
	return &pins[g - 1];
}

struct pk_console *pk__con_get(int i)
{
	struct pin_group *p;
	struct pk_console *c;

	/*
	 * An empty slot costs one relaxed load, not two atomic RMWs.  Racing
	 * with a registration here only means we see the console next time;
	 * pk__con_register() kicks the flush mode itself once it is in.
	 */
	if (!atomic_load_explicit(&slots[i].con, memory_order_relaxed))
		return NULL;
	p = my_pins();
	*(volatile uint16_t *)&pk__self.pin_depth[i] = pk__self.pin_depth[i] + 1;
	atomic_signal_fence(memory_order_seq_cst);
	/* LMM(reg:A) */
	atomic_fetch_add_explicit(&p->users[i], 1, memory_order_seq_cst);
	c = atomic_load_explicit(&slots[i].con, memory_order_seq_cst);
	if (!c || c == DRAINING) {
		atomic_fetch_sub_explicit(&p->users[i], 1, memory_order_release);
		atomic_signal_fence(memory_order_seq_cst);
		*(volatile uint16_t *)&pk__self.pin_depth[i] = pk__self.pin_depth[i] - 1;
		return NULL;
	}
	return c;
}

void pk__con_put(int i)
{
	atomic_fetch_sub_explicit(&my_pins()->users[i], 1, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	*(volatile uint16_t *)&pk__self.pin_depth[i] = pk__self.pin_depth[i] - 1;
}

/* Does anyone pin slot @i (reg:B)? */
static bool slot_pinned(int i)
{
	unsigned g;

	for (g = 0; g < PIN_GROUPS; g++)
		if (atomic_load_explicit(&pins[g].users[i], memory_order_seq_cst))
			return true;
	return false;
}

int pk__con_count(void)
{
	return atomic_load_explicit(&nr_consoles, memory_order_relaxed);
}

int pk__con_loglevel(struct pk_console *c)
{
	int l = atomic_load_explicit(&c->loglevel, memory_order_relaxed);

	return l < 0 ? atomic_load_explicit(&global_loglevel, memory_order_relaxed) : l;
}

void pk__con_set_global_loglevel(int loglevel)
{
	int cancel;

	/* Relaxed: a printer that reads the old value filters one more record by it. */
	atomic_store_explicit(&global_loglevel, loglevel, memory_order_relaxed);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&reg_lock);
	pk__con_update_max_loglevel();
	pthread_mutex_unlock(&reg_lock);
	pthread_setcancelstate(cancel, NULL);
}

void pk__con_config_loglevel(int loglevel, bool weak)
{
	if (weak && atomic_load_explicit(&loglevel_chosen, memory_order_relaxed))
		return;
	pk__con_set_global_loglevel(loglevel);
}

int pk_set_loglevel(int loglevel)
{
	if (loglevel < 0 || loglevel > 8)
		return -EINVAL;
	atomic_store_explicit(&loglevel_chosen, true, memory_order_relaxed);
	pk__con_set_global_loglevel(loglevel);
	return 0;
}

int pk_get_loglevel(void)
{
	return atomic_load_explicit(&global_loglevel, memory_order_relaxed);
}

void pk__con_update_utc_offset(void)
{
	time_t now = time(NULL);
	struct tm tm;

	/* localtime_r() takes glibc's time zone lock: normal context only. */
	if (localtime_r(&now, &tm))
		atomic_store_explicit(&utc_offset, tm.tm_gmtoff, memory_order_relaxed);
}

int pk__con_max_loglevel(void)
{
	return atomic_load_explicit(&max_loglevel, memory_order_relaxed);
}

void pk__con_update_max_loglevel(void)
{
	struct pk_console *c;
	int i, l, max = 0;

	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = pk__con_get(i);
		if (!c)
			continue;
		l = pk__con_loglevel(c);
		if (l > max)
			max = l;
		pk__con_put(i);
	}
	atomic_store_explicit(&max_loglevel, max, memory_order_relaxed);
}

/*
 * The configuration's consoles that pk_init() just unregistered, by name,
 * with where each stopped: a new one of the same name goes on from there
 * (no record printed twice to the same stderr or file).  Only the thread
 * in pk_init() touches it, under reg_lock.
 */
struct handover {
	struct pk__spos next;
	struct pk__lost_note carry[PK_LANES_MAX];	/* a store switch's, not reported yet */
	bool has_carry[PK_LANES_MAX];
};

static struct {
	char *name;
	struct handover h;
} *inherit;	/* PK_MAX_CONSOLES of them, allocated on first use */
static int nr_inherit;

static void free_console(struct pk_console *c)
{
	free(c->recs);
	free(c->name);
	free(c);
}

/* Publish @c's whole position (the owner's, or a new one) as it stands. */
static void publish_all(struct pk_console *c, memory_order mo)
{
	unsigned i;

	for (i = 0; i < PK_LANES_MAX; i++) {
		atomic_store_explicit(&c->lp[i].undecided, UINT64_MAX, memory_order_relaxed);
		atomic_store_explicit(&c->lp[i].next_seq, i < c->pos.n ? c->pos.l[i].expect : 0,
				      mo);
	}
}

struct pk_console *pk__con_register_named(const struct pk_console_ops *ops, void *ctx,
					  int loglevel, unsigned fmt, const char *name,
					  bool config)
{
	struct pk_console *c;
	void *mem;
	int i, cancel;

	if (!ops || !ops->write || loglevel > 8) {
		errno = EINVAL;
		return NULL;
	}
	/* Aligned as its ownership line asks (malloc() gives 16 bytes). */
	c = NULL;
	if (!posix_memalign(&mem, _Alignof(struct pk_console), sizeof(*c)))
		c = mem;
	if (c) {
		memset(c, 0, sizeof(*c));
		c->name = strdup(name ? name : ops->name ? ops->name : "console");
		c->recs = calloc(PK_LANES_MAX, sizeof(*c->recs));
	}
	if (!c || !c->name || !c->recs) {
		if (c) {
			free(c->name);
			free(c->recs);
		}
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->pos.mr.buf = c->recs;
	c->ops = ops;
	c->ctx = ctx;
	c->config = config;
	c->color = fmt & PK_FMT_F_COLOR;
	fmt &= ~PK_FMT_F_COLOR;
	atomic_init(&c->loglevel, loglevel < 0 ? -1 : loglevel);
	atomic_init(&c->fmt, fmt);
	if (fmt & (PK_FMT_F_CTIME | PK_FMT_F_RFC3339))
		pk__con_update_utc_offset();

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&reg_lock);
	/*
	 * The store in use, as a store switch leaves it: a switch moves the
	 * consoles (pk__con_rebase(), under reg_lock) and then releases the
	 * old store, so a console set up outside the lock could start in a
	 * store already unmapped (SIGSEGV: registering in a loop against 300
	 * switches), and one set up in the new store before the rebase
	 * would be moved as if its position were the old store's.  Wait for
	 * the switch, which is short (its callers wait too).
	 */
	while (pk__switch_pending()) {
		struct timespec nap = { 0, 200000 };

		pthread_mutex_unlock(&reg_lock);
		nanosleep(&nap, NULL);
		pthread_mutex_lock(&reg_lock);
	}
	/* Earlier runs' records in a persistent store are pkmsg's, not ours. */
	{
		struct pk__spos at;
		unsigned l;

		for (l = 0; l < pk__st.lanes.n; l++)
			at.s[l] = pk__st.attach_seq[l];
		pk__con_pos_init(&c->pos, &at, false);
	}
	publish_all(c, memory_order_relaxed);
	for (i = 0; config && inherit && i < nr_inherit; i++) {
		if (inherit[i].name && !strcmp(inherit[i].name, c->name)) {
			unsigned l;

			/* What is gone since it stopped is reported as dropped. */
			pk__con_pos_init(&c->pos, &inherit[i].h.next, true);
			for (l = 0; l < pk__st.lanes.n; l++) {
				c->pos.l[l].carry = inherit[i].h.carry[l];
				c->pos.l[l].has_carry = inherit[i].h.has_carry[l];
			}
			publish_all(c, memory_order_relaxed);
			free(inherit[i].name);
			inherit[i].name = NULL;
			break;
		}
	}
	for (i = 0; i < PK_MAX_CONSOLES; i++)
		if (!atomic_load_explicit(&slots[i].con, memory_order_relaxed))
			break;
	if (i == PK_MAX_CONSOLES) {
		pthread_mutex_unlock(&reg_lock);
		pthread_setcancelstate(cancel, NULL);
		free_console(c);
		errno = ENOSPC;
		return NULL;
	}
	c->slot = i;
	if (hooks && hooks->added(c) < 0) {
		pthread_mutex_unlock(&reg_lock);
		pthread_setcancelstate(cancel, NULL);
		free_console(c);
		errno = EAGAIN;
		return NULL;
	}
	/*
	 * The bit first: a pass over the slots that sees the console must
	 * not miss it (a holder's stall at its position, cleared by a helper
	 * that did not see it).
	 */
	atomic_fetch_or_explicit(&pk__con_slot_word.mask, 1u << i, memory_order_relaxed);
	atomic_store_explicit(&slots[i].con, c, memory_order_seq_cst);
	atomic_fetch_add_explicit(&nr_consoles, 1, memory_order_relaxed);
	pk__con_update_max_loglevel();
	pthread_mutex_unlock(&reg_lock);
	pthread_setcancelstate(cancel, NULL);
	/*
	 * Print the backlog now, as register_console() does: inside the
	 * store gate, which keeps a store switch from releasing the store
	 * under the print (it faulted there: registering in a loop against
	 * 200 switches).  Not ready (a switch or a first init under way): the
	 * end of that init prints it.
	 */
	if (hooks && hooks->kick && pk__gate_enter()) {
		hooks->kick();
		pk__gate_exit();
	}
	return c;
}

struct pk_console *pk__con_register(const struct pk_console_ops *ops, void *ctx, int loglevel,
				    unsigned fmt)
{
	return pk__con_register_named(ops, ctx, loglevel, fmt, NULL, false);
}

struct pk_console *pk_console_register(const struct pk_console_ops *ops, void *ctx, int loglevel)
{
	int ret = pk__ensure_init();

	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	return pk__con_register(ops, ctx, loglevel, PK_FMT_HUMAN);
}

struct pk_console *pk_console_register_driver(const struct pk_console_driver *drv, int loglevel)
{
	struct pk_console *c;
	int ret;

	if (!drv || !drv->ops) {
		errno = EINVAL;
		return NULL;
	}
	ret = pk__ensure_init();
	if (ret < 0) {
		errno = -ret;
		c = NULL;
	} else {
		c = pk__con_register(drv->ops, drv->ctx, loglevel, drv->format);
	}
	if (!c && drv->ops->release)
		drv->ops->release(drv->ctx);
	return c;
}

/*
 * Consoles detached while a thread was stuck inside their write(): never
 * freed, since that thread may come back to them; kept here.
 */
static struct pk_console *abandoned[PK_MAX_CONSOLES * 4];
static unsigned nr_abandoned;

static int abandon(struct pk_console *c)
{
	if (nr_abandoned < PK__ARRAY_SIZE(abandoned))
		abandoned[nr_abandoned++] = c;
	return -EBUSY;
}

/*
 * Detach slot @i and free its console once nobody uses it.  reg_lock held.
 * @last: if not NULL, where the console stopped, once nobody prints on it.
 */
/* @last (may be NULL): where the console stopped, for one that goes on in its place. */
static int unregister_slot_at(int i, struct handover *last)
{
	struct pk_console *c = atomic_load_explicit(&slots[i].con, memory_order_relaxed);
	struct timespec nap = { 0, 1000000 };
	int waited;

	/* LMM(reg:B) */
	atomic_store_explicit(&slots[i].con, DRAINING, memory_order_seq_cst);
	atomic_fetch_sub_explicit(&nr_consoles, 1, memory_order_relaxed);
	pk__con_update_max_loglevel();
	if (hooks && hooks->removing(c) < 0) {
		if (last) {
			memset(last, 0, sizeof(*last));
			pk__con_next(c, &last->next);
		}
		return abandon(c);	/* its printer is stuck inside write() */
	}
	for (waited = 0; slot_pinned(i); waited++) {
		if (waited == 5000) {
			if (last) {
				memset(last, 0, sizeof(*last));
				pk__con_next(c, &last->next);
			}
			return abandon(c);	/* someone is stuck inside its write() */
		}
		nanosleep(&nap, NULL);
	}
	/* Acquire: pairs with publish()'s release; nobody prints on it any more. */
	if (last) {
		unsigned l;

		pk__con_next(c, &last->next);
		/* Its position is nobody's now: what it carries goes on too. */
		for (l = 0; l < PK_LANES_MAX; l++) {
			last->carry[l] = c->pos.l[l].carry;
			last->has_carry[l] = c->pos.l[l].has_carry;
		}
	}
	atomic_store_explicit(&slots[i].con, NULL, memory_order_release);
	atomic_fetch_and_explicit(&pk__con_slot_word.mask, ~(1u << i), memory_order_relaxed);
	pk__con_update_max_loglevel();
	if (c->ops->release)
		c->ops->release(c->ctx);
	free_console(c);
	return 0;
}

static int unregister_slot(int i)
{
	return unregister_slot_at(i, NULL);
}

int pk_console_unregister(struct pk_console *con)
{
	int i, cancel, ret = -EINVAL;

	if (!con)
		return -EINVAL;
	/* From inside a console's write(): it would wait for itself. */
	if (pk__self.in_console)
		return -EDEADLK;
	/* Cancelled while holding reg_lock, the thread would block every fork(). */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		if (atomic_load_explicit(&slots[i].con, memory_order_relaxed) == con) {
			ret = unregister_slot(i);
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	pthread_setcancelstate(cancel, NULL);
	return ret;
}

void pk__con_unregister_all(void)
{
	struct pk_console *c;
	int i, cancel;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = atomic_load_explicit(&slots[i].con, memory_order_relaxed);
		if (c && c != DRAINING)
			unregister_slot(i);
	}
	pthread_mutex_unlock(&reg_lock);
	pthread_setcancelstate(cancel, NULL);
}

int pk__con_replace_config(const char *spec)
{
	struct pk_console *c;
	int i, n, cancel;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&reg_lock);
	nr_inherit = 0;
	if (!inherit)
		inherit = calloc(PK_MAX_CONSOLES, sizeof(*inherit));
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = atomic_load_explicit(&slots[i].con, memory_order_relaxed);
		if (!c || c == DRAINING || !c->config)
			continue;
		if (!inherit) {
			unregister_slot_at(i, NULL);	/* no memory: started at the backlog */
			continue;
		}
		inherit[nr_inherit].name = strdup(c->name);
		unregister_slot_at(i, &inherit[nr_inherit].h);
		nr_inherit += inherit[nr_inherit].name != NULL;
	}
	pthread_mutex_unlock(&reg_lock);
	n = spec ? pk__console_register_env(spec) : 0;
	if (!spec)
		atomic_store_explicit(&pk__g.consoles_failed, 0, memory_order_relaxed);
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < nr_inherit; i++) {
		free(inherit[i].name);
		inherit[i].name = NULL;
	}
	nr_inherit = 0;
	pthread_mutex_unlock(&reg_lock);
	pthread_setcancelstate(cancel, NULL);
	return n;
}

void pk__con_each_locked(void (*fn)(struct pk_console *c))
{
	struct pk_console *c;
	int i, cancel;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = atomic_load_explicit(&slots[i].con, memory_order_relaxed);
		if (c && c != DRAINING)
			fn(c);
	}
	pthread_mutex_unlock(&reg_lock);
	pthread_setcancelstate(cancel, NULL);
}

void pk__con_rebase(void (*map)(const struct pk__spos *old, struct pk__spos *now, void *arg,
				struct pk__lost_note *carry, bool *has_carry),
		    void *arg, unsigned old_n)
{
	struct pk__lost_note carry[PK_LANES_MAX];
	bool has_carry[PK_LANES_MAX];
	struct pk__spos old, now;
	struct pk_console *c;
	unsigned l;
	int i, cancel;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		c = atomic_load_explicit(&slots[i].con, memory_order_relaxed);
		if (!c || c == DRAINING)
			continue;
		/* The old store's lanes (pk__st moved to the new one after the copy). */
		for (l = 0; l < PK_LANES_MAX; l++)
			old.s[l] = atomic_load_explicit(&c->lp[l].next_seq, memory_order_acquire);
		map(&old, &now, arg, carry, has_carry);
		/*
		 * A count an earlier switch left that the console has not
		 * reported yet goes on with it, into the lane its old lane went
		 * (life.c, THE COPY): it stands for records before the
		 * console's position, which no copy counts again.
		 */
		for (l = 0; l < old_n; l++) {
			struct pk__con_lane *ol = &c->pos.l[l];
			unsigned j = l % pk__st.lanes.n, k;

			if (!ol->has_carry)
				continue;
			for (k = 0; k < 9; k++)
				carry[j].cum[k] += ol->carry.cum[k];
			carry[j].unknown += ol->carry.unknown;
			has_carry[j] = true;
		}
		/*
		 * Counting the gap: a copied record overwritten in the new
		 * store before the console got to it is reported, not passed
		 * over (the copy leaves room; this is the backstop).
		 */
		pk__con_pos_init(&c->pos, &now, true);
		for (l = 0; l < pk__st.lanes.n; l++) {
			c->pos.l[l].carry = carry[l];
			c->pos.l[l].has_carry = has_carry[l];
		}
		publish_all(c, memory_order_release);
	}
	pthread_mutex_unlock(&reg_lock);
	pthread_setcancelstate(cancel, NULL);
}

unsigned pk__con_positions(struct pk__spos *out, unsigned max)
{
	struct pk_console *c;
	unsigned n = 0;
	int i, cancel;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < PK_MAX_CONSOLES && n < max; i++) {
		c = atomic_load_explicit(&slots[i].con, memory_order_relaxed);
		if (c && c != DRAINING)
			pk__con_next(c, &out[n++]);
	}
	pthread_mutex_unlock(&reg_lock);
	pthread_setcancelstate(cancel, NULL);
	return n;
}

void pk__con_next(struct pk_console *c, struct pk__spos *out)
{
	unsigned l;

	for (l = 0; l < PK_LANES_MAX; l++)
		out->s[l] = atomic_load_explicit(&c->lp[l].next_seq, memory_order_acquire);
}

uint64_t pk__con_progress(struct pk_console *c)
{
	uint64_t sum = 0;
	unsigned l;

	for (l = 0; l < pk__st.lanes.n; l++)
		sum += atomic_load_explicit(&c->lp[l].next_seq, memory_order_relaxed);
	return sum;
}

struct pk_console *pk_console_find(const char *name)
{
	struct pk_console *c, *found = NULL;
	int i, cancel;

	if (!name) {
		errno = EINVAL;
		return NULL;
	}
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < PK_MAX_CONSOLES && !found; i++) {
		c = atomic_load_explicit(&slots[i].con, memory_order_relaxed);
		if (c && c != DRAINING && !strcmp(c->name, name))
			found = c;
	}
	pthread_mutex_unlock(&reg_lock);
	pthread_setcancelstate(cancel, NULL);
	if (!found)
		errno = ENOENT;
	return found;
}

const char *pk_console_name(const struct pk_console *con)
{
	return con ? con->name : "";
}

int pk_console_set_format(struct pk_console *con, unsigned fmt)
{
	if (!con || PK_FMT_KIND(fmt) > PK_FMT_JOURNAL ||
	    (fmt & ~(0xffu | PK_FMT_F_TID | PK_FMT_F_LEVEL | PK_FMT_F_CTIME | PK_FMT_F_RFC3339 |
		     PK_FMT_F_LOC)))
		return -EINVAL;
	/*
	 * A console registered in journald's protocol speaks nothing else, and
	 * no other takes it: a journal console in raw would send a text that
	 * begins "PRIORITY=" as the entry's own fields, and another console
	 * would write binary entries.
	 */
	if ((PK_FMT_KIND(fmt) == PK_FMT_JOURNAL) !=
	    (PK_FMT_KIND(atomic_load_explicit(&con->fmt, memory_order_relaxed)) == PK_FMT_JOURNAL))
		return -EINVAL;
	pk__con_update_utc_offset();
	atomic_store_explicit(&con->fmt, fmt, memory_order_relaxed);
	return 0;
}

int pk_console_set_loglevel(struct pk_console *con, int loglevel)
{
	if (!con || loglevel > 8)
		return -EINVAL;
	atomic_store_explicit(&con->loglevel, loglevel < 0 ? -1 : loglevel, memory_order_relaxed);
	/* Under reg_lock: a racing register must not store an older maximum. */
	pthread_mutex_lock(&reg_lock);
	pk__con_update_max_loglevel();
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

/*
 * MODULE FILTER
 *
 * Versions in slots: the setter (one at a time: modf_lock) writes version
 * N + 1 into slot (N + 1) % SLOTS, a slot no printer has been told about
 * for SLOTS - 1 versions, and then publishes N + 1.  A printer copies the
 * newest version's slot and keeps the copy if, afterwards, the newest
 * version is still less than SLOTS - 1 past the one it copied: the
 * setter had not begun to write that slot again (it begins only after
 * publishing the version SLOTS - 1 past it).  So a printer never waits on
 * a setter, not even on one it interrupted on its own thread, and a copy
 * fails only if SLOTS - 1 changes were made while it copied (it then
 * tries again).
 *
 *   modf:A  the setter's bytes, then its release store of the version;
 *           the printer's acquire load of the version, then its copy:
 *           a version seen is a slot written whole.
 *   modf:B  the setter publishes version N + SLOTS - 1 (relaxed), then a
 *           release fence, then rewrites slot N % SLOTS; the printer
 *           copies, then an acquire fence, then loads the version again.
 *           If the copy read a byte of the rewrite, the fences
 *           synchronise and the second load sees N + SLOTS - 1 or later:
 *           the copy is discarded.
 */
static pthread_mutex_t modf_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t modf_once = PTHREAD_ONCE_INIT;

/* A fork() while another thread sets a filter leaves no lock held in the child. */
static void modf_prepare(void)
{
	pthread_mutex_lock(&modf_lock);
}

static void modf_release(void)
{
	pthread_mutex_unlock(&modf_lock);
}

static void modf_atfork(void)
{
	pthread_atfork(modf_prepare, modf_release, modf_release);
}

static bool modf_pass(struct pk_console *c, const char *module)
{
	char list[PK_CON_MODULES_MAX + 1];
	const char *slot;
	uint64_t g, g2;
	unsigned tries, i;

	if (!atomic_load_explicit(&c->modf_gen, memory_order_relaxed))
		return true;	/* never set: the common case, no copy */
	for (tries = 0; tries < 64; tries++) {
		/* LMM(modf:A) */
		g = atomic_load_explicit(&c->modf_gen, memory_order_acquire);
		slot = c->modf[g % PK_CON_MODF_SLOTS];
		for (i = 0; i < sizeof(list) - 1; i++) {
			list[i] = __atomic_load_n(&slot[i], __ATOMIC_RELAXED);
			if (!list[i])
				break;
		}
		list[i] = '\0';
		/* LMM(modf:B) */
		atomic_thread_fence(memory_order_acquire);
		g2 = atomic_load_explicit(&c->modf_gen, memory_order_relaxed);
		if (g2 - g < PK_CON_MODF_SLOTS - 1)
			return !list[0] || pk__mod_list_match(list, module);
	}
	/* SLOTS - 1 changes during each of 64 copies: print it (nothing lost). */
	return true;
}

int pk_console_set_modules(struct pk_console *con, const char *modules)
{
	size_t i, n = modules ? strlen(modules) : 0;
	uint64_t g;
	char *slot;

	if (!con || n > PK_CON_MODULES_MAX || (n && !pk__mod_list_valid(modules)))
		return -EINVAL;
	pthread_once(&modf_once, modf_atfork);
	pthread_mutex_lock(&modf_lock);
	g = atomic_load_explicit(&con->modf_gen, memory_order_relaxed) + 1;
	slot = con->modf[g % PK_CON_MODF_SLOTS];
	/* LMM(modf:B): the version SLOTS - 1 before g is published: fence, then rewrite. */
	atomic_thread_fence(memory_order_release);
	for (i = 0; i <= n; i++)
		__atomic_store_n(&slot[i], i < n ? modules[i] : '\0', __ATOMIC_RELAXED);
	/* LMM(modf:A) */
	atomic_store_explicit(&con->modf_gen, g, memory_order_release);
	pthread_mutex_unlock(&modf_lock);
	return 0;
}

int pk_console_stats_get(struct pk_console *con, struct pk_console_stats *st)
{
	if (!con || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->name = con->name;
	/* Summed over the lanes, as pk_stats_get()'s next_seq. */
	for (unsigned l = 0; l < pk__st.lanes.n; l++)
		st->next_seq += atomic_load_explicit(&con->lp[l].next_seq, memory_order_acquire);
	st->records = atomic_load_explicit(&con->records, memory_order_relaxed);
	st->notices = atomic_load_explicit(&con->notices, memory_order_relaxed);
	st->bytes = atomic_load_explicit(&con->bytes, memory_order_relaxed);
	st->dropped = atomic_load_explicit(&con->dropped, memory_order_relaxed);
	st->skipped = atomic_load_explicit(&con->skipped, memory_order_relaxed);
	for (unsigned l = 0; l < PK_LANES_MAX; l++)
		st->skipped += atomic_load_explicit(&con->lp[l].skipped, memory_order_relaxed);
	st->write_errors = atomic_load_explicit(&con->write_errors, memory_order_relaxed);
	st->busy_ns = atomic_load_explicit(&con->busy_ns, memory_order_relaxed);
	st->unattributed = atomic_load_explicit(&con->unattributed, memory_order_relaxed);
	return 0;
}

/* ---- printing one record ---- */

/*
 * Write all of @buf; a short write is retried with the rest, and so are
 * EINTR, EAGAIN and a zero return, a bounded number of times.  A driver
 * that claims more than it was given is taken to have written it all.
 * The thread is marked as inside a console, so that a record the driver
 * logs is stored and printed later, never from this call chain, and as
 * inside this one, so that a crash in the driver leaves it out of the
 * crash report (panic.c).
 */
static void con_write(struct pk_console *c, const char *buf, size_t len, bool atomic)
{
	long (*fn)(void *, const char *, size_t) = atomic ? c->ops->write_atomic : c->ops->write;
	uint64_t t0 = pk__now_ns();
	size_t done = 0;
	unsigned again = 0;
	long n;

	const void *outer = pk__self.in_con;
	bool outer_atomic = pk__self.in_con_atomic;

	pk__crash_stack_lazy();		/* printer threads log nothing themselves */
	pk__self.in_console++;
	pk__self.in_con = c;
	pk__self.in_con_atomic = atomic;
	while (done < len) {
		n = fn(c->ctx, buf + done, len - done);
		if (n > 0) {
			done += (size_t)n < len - done ? (size_t)n : len - done;
		} else if ((n == -EINTR || n == -EAGAIN || n == 0) && ++again < 100) {
			continue;
		} else {
			atomic_fetch_add_explicit(&c->write_errors, 1, memory_order_relaxed);
			break;
		}
	}
	pk__self.in_con = outer;
	pk__self.in_con_atomic = outer_atomic;
	pk__self.in_console--;
	atomic_fetch_add_explicit(&c->busy_ns, pk__now_ns() - t0, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->bytes, done, memory_order_relaxed);
	pk__share_add(pk__tid(), done, pk__self.printer);
}

void pk__con_pos_init(struct pk__con_pos *pos, const struct pk__spos *seq, bool count_gap)
{
	struct pk_ring_rec *buf = pos->mr.buf;
	unsigned i;

	pk__lanes_reader_init(&pos->mr, &pk__st.lanes, buf, false, true);
	pos->n = pk__st.lanes.n;
	for (i = 0; i < pos->n; i++) {
		struct pk_ring_reader *rd = &pos->mr.l[i].rd;
		struct pk__con_lane *l = &pos->l[i];

		if (rd->next < seq->s[i])
			rd->next = seq->s[i];
		/*
		 * Taking over a console's position: what was overwritten since
		 * it was published is reported as dropped by the first read,
		 * not lost silently.
		 */
		l->expect = count_gap ? seq->s[i] : rd->next;
		l->counted_to = l->expect;
		l->lost.counted = l->lost.unknown = l->lost.filtered = 0;
		l->has_carry = false;
	}
}

/* What lane @l carries from a store switch, at @max_level: into its lost count, once. */
static void take_carry(struct pk__con_lane *l, int max_level)
{
	uint64_t n;

	if (!l->has_carry)
		return;
	n = l->carry.cum[max_level < 0 ? 0 : max_level > 8 ? 8 : max_level];
	l->lost.counted += n;
	l->lost.unknown += l->carry.unknown < n ? l->carry.unknown : n;
	l->has_carry = false;
}

/*
 * A seq the console passed in @lane without knowing whose it was
 * (ringbuf.c, "OWN RECORDS") has been claimed since: its next read counts
 * it if it was ours.  Relaxed: the value is the console owner's last
 * publication, seen by the owner itself or through the console's
 * ownership and the console lock; the descriptor's load is seq_cst
 * (pk__ring_claimed), as pk__ring_readable()'s, for fl:A and fl:B.
 */
static bool undecided_ready(struct pk_console *c, unsigned lane, uint64_t below)
{
	uint64_t u = atomic_load_explicit(&c->lp[lane].undecided, memory_order_relaxed);

	return u < below && pk__ring_claimed(pk__lane(lane), u);
}

bool pk__con_pending(struct pk_console *c)
{
	unsigned i;

	for (i = 0; i < pk__st.lanes.n; i++)
		if (pk__ring_readable(pk__lane(i), atomic_load_explicit(&c->lp[i].next_seq,
									memory_order_acquire)) ||
		    undecided_ready(c, i, UINT64_MAX))
			return true;
	return false;
}

bool pk__con_behind(struct pk_console *c, const struct pk__spos *target)
{
	uint64_t t;
	unsigned i;

	for (i = 0; i < pk__st.lanes.n; i++) {
		t = target ? target->s[i] : pk__ring_next_seq(pk__lane(i));
		if (atomic_load_explicit(&c->lp[i].next_seq, memory_order_acquire) < t ||
		    undecided_ready(c, i, t))
			return true;
	}
	return false;
}

bool pk__con_behind_seq(struct pk_console *c, unsigned lane, uint64_t seq)
{
	return lane < pk__st.lanes.n &&
	       (atomic_load_explicit(&c->lp[lane].next_seq, memory_order_acquire) <= seq ||
		undecided_ready(c, lane, seq + 1));
}

/*
 * The counters are updated before next_seq is published (release), so
 * that whoever sees a console caught up (pk_flush, stats) also sees the
 * counts of every record up to there.  A private position (a takeover)
 * only ever moves it forward: the old owner may publish a stale one.
 */
static void publish(struct pk_console *c, struct pk__con_pos *pos)
{
	uint64_t cur;
	unsigned i;

	for (i = 0; i < pos->n; i++) {
		if (pos == &c->pos) {
			/*
			 * The owner's position: a lane that did not move is not
			 * stored (the release that stored this value covers
			 * what led to it), so that writers passing over
			 * filtered records on two lanes each write only their
			 * own lane's line.
			 */
			if (atomic_load_explicit(&c->lp[i].next_seq, memory_order_relaxed) !=
			    pos->l[i].expect)
				atomic_store_explicit(&c->lp[i].next_seq, pos->l[i].expect,
						      memory_order_release);
			continue;
		}
		cur = atomic_load_explicit(&c->lp[i].next_seq, memory_order_relaxed);
		while (cur < pos->l[i].expect &&
		       !atomic_compare_exchange_weak_explicit(&c->lp[i].next_seq, &cur,
							      pos->l[i].expect,
							      memory_order_release,
							      memory_order_relaxed))
			;
	}
}

/*
 * The flush wing's view of who owns a console (pk__con_owner_register()).
 * Release store, acquire loads: the table is seen whole.
 */
static _Atomic(const struct pk__con_owner_ops *) owner_ops;

void pk__con_owner_register(const struct pk__con_owner_ops *ops)
{
	atomic_store_explicit(&owner_ops, ops, memory_order_release);
}

/* Do we (@tid) still own @c?  0: the caller does not check. */
static bool still_ours(struct pk_console *c, uint32_t tid)
{
	const struct pk__con_owner_ops *o = atomic_load_explicit(&owner_ops, memory_order_acquire);

	return !tid || !o || o->owner(&c->own) == tid;
}

/*
 * What @c passes over (below its loglevel, another process's records) and
 * which of the lost records it reports: only those of this process that it
 * would have printed (ringbuf.c, "OWN RECORDS").
 */
static void con_filter(struct pk_console *c, struct pk_ring_filter *f)
{
	f->max_level = pk__con_loglevel(c);
	f->pid = atomic_load_explicit(&pk__g.pid, memory_order_relaxed);
	f->own = true;
	f->sole = pk__store_sole();
	f->batch = 0;		/* PK_RING_SKIP_BATCH; a writer's help sets its own */
}

static void print_dropped(struct pk_console *c, char *buf, const struct pk_ring_lost *lost,
			  unsigned fmt, bool atomic)
{
	uint64_t gap = lost->counted;

	size_t len = pk__format_dropped(buf, PK_FORMAT_MAX, gap, fmt);

	atomic_fetch_add_explicit(&c->dropped, gap, memory_order_relaxed);
	if (lost->unknown)
		atomic_fetch_add_explicit(&c->unattributed, lost->unknown, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->notices, 1, memory_order_relaxed);
	con_write(c, buf, len, atomic);
}

/*
 * Read lane @i's next record into the position's slot for it, unless it
 * holds one; what was lost on the way (and, after a takeover, between the
 * last record accounted for and where the read began) goes into the
 * lane's lost count, reported with its next record.
 * Return: as pk__lanes_fill().
 */
static int fill_lane(struct pk_console *c, struct pk__con_pos *pos, unsigned i,
		     const struct pk_ring_filter *f, uint64_t *skipped)
{
	struct pk__con_lane *l = &pos->l[i];
	struct pk_lanes_lane *ml = &pos->mr.l[i];
	uint64_t from = ml->rd.next;
	int ret;

	if (ml->have)
		return 1;
	ret = pk__lanes_fill(&pos->mr, i, f, skipped, NULL, &l->lost);
	if (pos == &c->pos) {
		uint64_t u = pk__ring_undecided(&ml->rd);

		/* The owner's: stored only if it changed, as publish() does. */
		if (atomic_load_explicit(&c->lp[i].undecided, memory_order_relaxed) != u)
			atomic_store_explicit(&c->lp[i].undecided, u, memory_order_relaxed);
	}
	if (l->counted_to < from)
		pk__ring_lost_counted(ml->rd.ring, f, l->counted_to, from, &l->lost);
	l->counted_to = ret == 1 ? pos->mr.buf[i].seq + 1 : ml->rd.next;
	/* Lost records it would have filtered: accounted as filtered. */
	*skipped += l->lost.filtered;
	l->lost.filtered = 0;
	return ret;
}


enum pk__emit pk__con_emit(struct pk_console *c, struct pk__con_pos *pos,
			   struct pk__con_scratch *scratch, bool atomic, uint32_t tid)
{
	char *buf = scratch ? scratch->buf : c->buf;
	struct pk_format_opts fo = { 0 };
	struct pk_ring_filter f;
	struct pk_ring_rec *rec;
	struct pk_record r;
	struct pk_ring_lost lost = { 0, 0, 0 };
	struct pk__con_lane *l;
	uint64_t skipped = 0;
	unsigned i, n;
	bool again = false, moved = false;
	int ch;

	if (!pos)
		pos = &c->pos;
	n = pos->n;
	fo.fmt = atomic_load_explicit(&c->fmt, memory_order_relaxed);
	if (c->color)
		fo.fmt |= PK_FMT_F_COLOR;
	/* Seqs count within a lane: the machine formats name it (kmsg, JSON, journal). */
	if (n > 1)
		fo.fmt |= PK_FMT_F_LANE;
	if (fo.fmt & (PK_FMT_F_CTIME | PK_FMT_F_RFC3339)) {
		struct timespec rt;

		/* As dmesg -T: the clocks' offset now (clock_gettime is signal-safe). */
		clock_gettime(CLOCK_REALTIME, &rt);
		fo.realtime_zero_ns = (int64_t)((uint64_t)rt.tv_sec * 1000000000ull +
						(uint64_t)rt.tv_nsec - pk__now_ns());
		fo.utc_offset_s = atomic_load_explicit(&utc_offset, memory_order_relaxed);
	}
	/*
	 * Records below the loglevel, and another process's records in a
	 * shared store (a fork child's, or one of several programs writing one
	 * file), are passed over without copying their text, in every lane.
	 */
	con_filter(c, &f);
	for (i = 0; i < n; i++)
		if (fill_lane(c, pos, i, &f, &skipped) == -EAGAIN)
			again = true;
	if (skipped)
		atomic_fetch_add_explicit(&c->skipped, skipped, memory_order_relaxed);
	/*
	 * A lane that holds no record: what it passed over is accounted for
	 * (filtered), and what it lost is reported now, in one notice for
	 * all such lanes.
	 */
	for (i = 0; i < n; i++) {
		l = &pos->l[i];
		if (pos->mr.l[i].have ||
		    (l->expect >= pos->mr.l[i].rd.next && !l->lost.counted && !l->has_carry))
			continue;
		/*
		 * A count a store switch left (taken only when reported: a
		 * position set afresh keeps what is not, pk__con_rebase()).
		 */
		take_carry(l, f.max_level);
		lost.counted += l->lost.counted;
		lost.unknown += l->lost.unknown;
		l->lost.counted = l->lost.unknown = 0;
		l->expect = pos->mr.l[i].rd.next;
		moved = true;
	}
	if (lost.counted) {
		if (!still_ours(c, tid))
			return PK_EMIT_LOST;
		print_dropped(c, buf, &lost, fo.fmt, atomic);
	}
	ch = again ? -EAGAIN : pk__lanes_choose(&pos->mr);
	if (ch < 0) {
		if (!moved)
			return PK_EMIT_NONE;
		if (!still_ours(c, tid))
			return PK_EMIT_LOST;
		publish(c, pos);
		return lost.counted ? PK_EMIT_PRINTED : PK_EMIT_SKIPPED;
	}
	/* Lane ch's record goes out, after what its lane lost before it. */
	rec = &pos->mr.buf[ch];
	pos->mr.l[ch].have = false;
	l = &pos->l[ch];
	take_carry(l, f.max_level);
	lost = l->lost;
	l->lost.counted = l->lost.unknown = 0;
	l->expect = rec->seq + 1;
	if (!still_ours(c, tid))
		return PK_EMIT_LOST;
	/*
	 * A lost note (record.c, "LOST NOTES"): records lost where this
	 * console could not see a gap, as many as it would have printed.
	 * Reported as its own drop notice, in the console's format.
	 */
	if (rec->meta.flags & PK__REC_LOSTNOTE) {
		uint64_t k = pk__lost_note_count(rec, f.max_level);

		lost.counted += k;
		lost.unknown += pk__lost_note_unknown(rec) < k ? pk__lost_note_unknown(rec) : k;
		if (lost.counted)
			print_dropped(c, buf, &lost, fo.fmt, atomic);
		if (!still_ours(c, tid))
			return PK_EMIT_LOST;
		publish(c, pos);
		return lost.counted ? PK_EMIT_PRINTED : PK_EMIT_SKIPPED;
	}
	if (lost.counted)
		print_dropped(c, buf, &lost, fo.fmt, atomic);
	/* Filtered by module: decided on the raw prefix, before any formatting. */
	if (atomic_load_explicit(&c->modf_gen, memory_order_relaxed)) {
		char name[PK_RING_MOD_MAX];

		if (!modf_pass(c, pk__rec_module(rec, name) ? name : NULL)) {
			atomic_fetch_add_explicit(&c->skipped, 1, memory_order_relaxed);
			if (!still_ours(c, tid))
				return PK_EMIT_LOST;
			publish(c, pos);
			return lost.counted ? PK_EMIT_PRINTED : PK_EMIT_SKIPPED;
		}
	}
	pk__rec_export(rec, &r);
	if (!still_ours(c, tid))
		return PK_EMIT_LOST;
	con_write(c, buf, pk__format_record(buf, PK_FORMAT_MAX, &r, &fo), atomic);
	atomic_fetch_add_explicit(&c->records, 1, memory_order_relaxed);
	if (!still_ours(c, tid))
		return PK_EMIT_LOST;
	publish(c, pos);
	return PK_EMIT_PRINTED;
}

/*
 * pk__con_skip_filtered() - pass over the records @c filters, and those
 * lost that it would not have printed, up to each lane's next record to
 * print, without writing anything.  The caller owns @c as @tid.  A record
 * to print stays held in the console's position for its printer, and a
 * gap to report stays counted for it.  Return: true if the position moved.
 */
bool pk__con_skip_filtered(struct pk_console *c, unsigned lane, uint32_t tid)
{
	struct pk_ring_filter f;
	uint64_t skipped = 0;
	unsigned i, n = c->pos.n;
	bool moved = false;

	/*
	 * As pk__con_emit() counts them: records lost that the console would
	 * not have printed (filtered, another process's) are passed over like
	 * filtered ones; one it would have printed is a gap to report.
	 */
	con_filter(c, &f);
	f.batch = PK__CON_HELP_BATCH;	/* a writer's share: short (flush.c, help_one()) */
	for (i = 0; i < n; i++) {
		struct pk__con_lane *l = &c->pos.l[i];

		if (lane != PK__ALL_LANES && i != lane)
			continue;	/* another CPU's lane: its own writers help there */
		fill_lane(c, &c->pos, i, &f, &skipped);
		if (c->pos.mr.l[i].have || l->lost.counted || l->has_carry ||
		    l->expect >= c->pos.mr.l[i].rd.next)
			continue;
		l->lost.unknown = 0;
		l->expect = c->pos.mr.l[i].rd.next;
		moved = true;
	}
	if (skipped)
		atomic_fetch_add_explicit(&c->lp[lane == PK__ALL_LANES ? 0 : lane].skipped, skipped,
					  memory_order_relaxed);
	if (!moved || !still_ours(c, tid))
		return false;
	publish(c, &c->pos);
	return true;
}

/* Would @c print held record @rec (its module filter)?  Lost notes count what they say. */
static uint64_t left_of(struct pk_console *c, struct pk_ring_rec *rec, int max_level)
{
	char name[PK_RING_MOD_MAX];

	if (rec->meta.flags & PK__REC_LOSTNOTE)
		return pk__lost_note_count(rec, max_level);
	if (!atomic_load_explicit(&c->modf_gen, memory_order_relaxed) ||
	    modf_pass(c, pk__rec_module(rec, name) ? name : NULL))
		return 1;
	return 0;
}

uint64_t pk__con_give_up(struct pk_console *c, const struct pk__spos *head, uint32_t tid)
{
	struct pk_ring_lost lost = { 0, 0, 0 };
	struct pk_ring_filter f;
	struct pk_ring_rec *rec;
	uint64_t skipped = 0;
	unsigned i, n = c->pos.n;
	bool any = false;
	int ret;

	for (i = 0; i < n; i++)
		if (c->pos.l[i].expect < head->s[i] || c->pos.l[i].has_carry ||
		    c->pos.l[i].lost.counted)
			any = true;
	if (!any)
		return 0;
	con_filter(c, &f);
	/*
	 * The records it leaves are still in the store: read them through
	 * the console's own filters (level, process, module), without
	 * writing, and count those it would have printed and those lost on
	 * the way, as a gap is counted.  Bounded: up to @head, a pass over
	 * each lane at most.
	 */
	for (i = 0; i < n; i++) {
		struct pk__con_lane *l = &c->pos.l[i];
		struct pk_lanes_lane *ml = &c->pos.mr.l[i];

		take_carry(l, f.max_level);
		ml->rd.stall_limit_ns = 0;	/* a record still in progress now is not waited for */
		rec = &c->pos.mr.buf[i];
		if (ml->have) {
			ml->have = false;
			if (rec->seq < head->s[i])
				lost.counted += left_of(c, rec, f.max_level);
			ml->rd.next = rec->seq + 1;
			l->counted_to = ml->rd.next;
		}
		if (l->counted_to < ml->rd.next)
			pk__ring_lost_counted(ml->rd.ring, &f, l->counted_to, ml->rd.next, &l->lost);
		while (ml->rd.next < head->s[i] &&
		       (ret = pk__ring_read_filtered(&ml->rd, rec, &f, &skipped, &l->lost)) != 0) {
			if (ret < 0)
				continue;
			if (rec->seq >= head->s[i]) {
				ml->rd.next = rec->seq;
				break;
			}
			lost.counted += left_of(c, rec, f.max_level);
		}
		lost.counted += l->lost.counted;
		lost.unknown += l->lost.unknown;
		skipped += l->lost.filtered;
		l->lost.counted = l->lost.unknown = l->lost.filtered = 0;
		l->expect = l->counted_to = ml->rd.next;
	}
	if (!still_ours(c, tid))
		return 0;
	/* What it passed over filtered is accounted as filtered, as a read would. */
	if (skipped)
		atomic_fetch_add_explicit(&c->skipped, skipped, memory_order_relaxed);
	if (lost.counted)
		print_dropped(c, c->buf, &lost, atomic_load_explicit(&c->fmt, memory_order_relaxed),
			      c->ops->write_atomic != NULL);
	publish(c, &c->pos);
	return lost.counted;
}

/* ---- printer shares ---- */

#define SHARES 512

static struct {
	_Atomic uint32_t tid;
	_Atomic unsigned printer;
	_Atomic uint64_t bytes, records;
} shares[SHARES];

void pk__share_add(uint32_t tid, uint64_t bytes, bool printer_thread)
{
	unsigned i, h = (tid * 2654435761u) % SHARES;
	uint32_t cur;

	for (i = 0; i < SHARES; i++, h = (h + 1) % SHARES) {
		cur = atomic_load_explicit(&shares[h].tid, memory_order_relaxed);
		if (cur != tid) {
			if (cur)
				continue;
			if (!atomic_compare_exchange_strong_explicit(&shares[h].tid, &cur, tid,
								     memory_order_relaxed,
								     memory_order_relaxed) &&
			    cur != tid)
				continue;
		}
		if (printer_thread)
			atomic_store_explicit(&shares[h].printer, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&shares[h].bytes, bytes, memory_order_relaxed);
		atomic_fetch_add_explicit(&shares[h].records, 1, memory_order_relaxed);
		return;
	}
	/* Table full: more than SHARES printing threads; not counted per thread. */
}

void pk__share_reset(void)
{
	unsigned i;

	for (i = 0; i < SHARES; i++) {
		atomic_store_explicit(&shares[i].bytes, 0, memory_order_relaxed);
		atomic_store_explicit(&shares[i].records, 0, memory_order_relaxed);
	}
}

int pk_printer_shares(struct pk_printer_share *out, int max)
{
	int i, n = 0;
	uint64_t b;

	for (i = 0; i < SHARES; i++) {
		uint32_t tid = atomic_load_explicit(&shares[i].tid, memory_order_relaxed);

		b = atomic_load_explicit(&shares[i].bytes, memory_order_relaxed);
		if (!tid || !b)
			continue;
		if (out && n < max) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].tid = tid;
			out[n].printer_thread = atomic_load_explicit(&shares[i].printer,
								     memory_order_relaxed);
			out[n].bytes = b;
			out[n].records = atomic_load_explicit(&shares[i].records,
							      memory_order_relaxed);
		}
		n++;
	}
	return n;
}

/* ---- fork ---- */

void pk__con_atfork_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
	pk__file_atfork_prepare();	/* after reg_lock: a release takes it under reg_lock */
}

void pk__con_atfork_parent(void)
{
	pk__file_atfork_parent();
	pthread_mutex_unlock(&reg_lock);
}

void pk__con_atfork_child(const struct pk__spos *head)
{
	const struct pk__con_owner_ops *oo = atomic_load_explicit(&owner_ops, memory_order_acquire);
	struct pk_console *c;
	int i;

	pthread_mutex_init(&reg_lock, NULL);
	pk__file_atfork_child();
	for (i = 0; i < PK_MAX_CONSOLES; i++) {
		unsigned g;

		/* The other threads are gone: only this one's pins remain. */
		for (g = 0; g < PIN_GROUPS; g++)
			atomic_store_explicit(&pins[g].users[i], 0, memory_order_relaxed);
		if (pk__self.pin_idx)
			atomic_store_explicit(&pins[pk__self.pin_idx - 1].users[i],
					      pk__self.pin_depth[i], memory_order_relaxed);
		c = atomic_load_explicit(&slots[i].con, memory_order_relaxed);
		if (c && c != DRAINING) {
			if (oo)
				oo->reset(&c->own);
			pk__con_pos_init(&c->pos, head, false);
			publish_all(c, memory_order_relaxed);
		}
	}
}
