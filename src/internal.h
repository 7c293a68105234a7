/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the modules of libprintk share.  Not installed.
 */
#ifndef PK_INTERNAL_H
#define PK_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "printk/printk.h"
#include "printk/reader.h"
#include "ringbuf.h"

#define PK__TLS __thread __attribute__((tls_model("initial-exec")))

#define PK__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Library life cycle (pk__g.state). */
enum { PK__UNINIT = 0, PK__INITIALIZING = 1, PK__READY = 2 };

/* Per-thread state.  Initial-exec TLS: safe to touch from a signal handler. */
struct pk__thread {
	uint32_t tid;		/* cached gettid() */
	uint32_t fork_gen;	/* pk__g.fork_gen when tid was cached */
	int emergency;		/* pk_emergency_enter() depth */
	int in_printk;		/* pk_printk() nesting on this thread */
	bool open_valid;	/* this thread's newest record is OPEN */
	bool printer;		/* a libprintk printer thread */
	uint8_t open_level;
	uint8_t open_plen;	/* the module prefix's bytes in that record */
	char open_prefix[PK_RING_MOD_MAX];	/* and the prefix (pk__mod_prefix()) */
	bool mod_dropped;	/* a module's level dropped this thread's last line */
	uint64_t open_seq;
	/*
	 * Inside a console's write() on this thread (nesting depth), and the
	 * first record stored from there since this thread began printing:
	 * such records are printed later, never from the same call chain.
	 */
	int in_console;
	uint64_t recurse_seq;
	/*
	 * The console whose driver this thread is inside (the innermost), or
	 * NULL: a crash there must not have the crash handler call that same
	 * driver again (panic.c).
	 */
	const void *in_con;
	bool in_con_atomic;	/* ... inside its write_atomic(), not its write() */
	uint32_t stack_gen;	/* pk__crash_stack_gen when this thread last looked */
	/*
	 * Records this thread is writing right now (a signal handler may
	 * store while its thread is mid-record): the store writes the seq
	 * here as soon as it takes one, so a crash handler on this thread
	 * knows which records it left in progress and can never finish.
	 */
	unsigned wdepth;
	uint64_t wseq[4];
	uint32_t open_gen;	/* pk__g.store_gen when open_seq was stored */
	unsigned gate_depth;	/* store gates this thread is inside (pk__gates_quiesce) */
	uint64_t gate_by_slot;	/* bit d: its entry at depth d went through its slot */
	int gate_slot;		/* its gate slot + 1, 0 none yet, -1 none to be had */
	uint32_t gate_slot_gen;	/* pk__g.fork_gen when gate_slot was set */
	unsigned gate_idx;	/* its shared counter + 1, 0 not chosen yet (gate_idx()) */
	bool early_stored;	/* stored into the early store (pk__early_settle) */
	uint64_t early_seq;	/* the last of those */
};

#define PK__NO_SEQ UINT64_MAX

/* The lowest seq this thread left in progress, or PK__NO_SEQ. */
uint64_t pk__self_inflight(void);

extern PK__TLS struct pk__thread pk__self;

/*
 * panic.c: give this thread an alternate signal stack for the crash
 * handler, once the handler is installed (a thread that logs, or prints,
 * gets one at its first call after that).  Async-signal-safe.
 */
extern _Atomic uint32_t pk__crash_stack_gen;
void pk__crash_stack_thread(void);

static inline void pk__crash_stack_lazy(void)
{
	/* Relaxed: only asks whether to look; the look itself is a system call. */
	if (__builtin_expect(pk__self.stack_gen !=
			     atomic_load_explicit(&pk__crash_stack_gen, memory_order_relaxed), 0))
		pk__crash_stack_thread();
}

struct pk__global {
	_Atomic int state;
	struct pk_config cfg;
	struct pk_ring ring;
	void *mem;		/* the region */
	size_t mem_size;
	int mem_fd;		/* persistent store, or -1 */
	_Atomic uint32_t fork_gen;
	/*
	 * This process, as its records name it (updated in a fork child), and
	 * the store's seq_head when the process attached it: a persistent
	 * store may hold records of earlier runs and of other live processes,
	 * and this process's consoles print neither.
	 */
	_Atomic uint32_t pid;
	uint64_t attach_seq;
	/* Bumped when pk_init() adopts another store (seqs start afresh). */
	_Atomic uint32_t store_gen;
	/*
	 * Whether another process may store into the region too: a store
	 * file that other live processes held when this one opened it, or
	 * that was opened since (its header's `joins` moved past joins_seen),
	 * or shared with a fork child or parent.  See pk__store_sole().
	 */
	_Atomic bool store_shared;
	uint64_t joins_seen;
};

extern struct pk__global pk__g;

/*
 * Is this process the only one storing into its store (so that every
 * lost seq is one of its own records)?  Anonymous memory always is.
 */
bool pk__store_sole(void);

/*
 * vsnprintf.c: glibc's snprintf() output, async-signal-safe (the names are
 * those of the stb_sprintf copy it replaced).  %m prints strerror(errno)
 * of errno at the call.  Return: the length C's vsnprintf would return
 * (>= @count: cut; INT_MAX at most), or -1 when the format is refused (@buf
 * is then ""): %n in any spelling (nothing is written through the
 * pointer), or positional arguments mixed with sequential ones, numbered
 * above 64, left out between others, or used as two types.
 */
int pk__stbsp_vsnprintf(char *buf, int count, const char *fmt, va_list va);
int pk__stbsp_snprintf(char *buf, int count, const char *fmt, ...);
/*
 * As pk__stbsp_vsnprintf(); with PK__FMT_KERNEL in @flags, or PK_KFMT at
 * the start of @fmt (skipped), %p takes the kernel's extensions (ptrext.c).
 */
#define PK__FMT_KERNEL	0x1u
int pk__vsnprintf_flags(char *buf, int count, const char *fmt, va_list va, unsigned flags);
/*
 * pk__vpack() - the format and its arguments as a package (vsnprintf.c,
 * "PACKAGES"), to be formatted later by pk__unpack().
 * Return: the package's length; -1 the formatter refuses the format (%n);
 * -2 it cannot be packed (positional arguments, %ls, a kernel %p
 * extension, more than @cap bytes): format it now.
 */
int pk__vpack(unsigned char *out, size_t cap, const char *fmt, va_list va, unsigned flags,
	      int err);
/*
 * pk__unpack() - format package @pkg of @len bytes (untrusted) into @buf,
 * as pk__vsnprintf_flags() would have at the call.
 * Context: async-signal-safe, no malloc.
 * Return: as vsnprintf; -1 for a package that is not valid (@buf empty).
 */
int pk__unpack(char *buf, int count, const unsigned char *pkg, size_t len);
/*
 * Call sites that pack at compile time (printk.h, "STATIC PACKAGING"):
 * what the site's format takes, worked out once, on its first call, by
 * the formatter's own conversion parser (pk__site_classify()).  Each
 * argument is one of PK__SK_*, with the precision of a %s (-1 none, -2
 * the '*' argument before it).
 */
enum { PK__SK_I32 = 1, PK__SK_U32, PK__SK_I64, PK__SK_DBL, PK__SK_LDBL, PK__SK_PTR, PK__SK_STR };
struct pk__site_class {
	uint8_t n;			/* arguments */
	uint16_t fmt_len;		/* the format's bytes, its newline included */
	uint8_t kind[PK_SITE_ARGS];
	int16_t prec[PK_SITE_ARGS];
};
/* 0: packable, @cl filled; -1 refused (%n); -2 formatted at the call. */
int pk__site_classify(const char *fmt, struct pk__site_class *cl);
/* Do the @n arguments of signature @sig (PK_SIG_*) fit what @cl reads? */
bool pk__site_matches(const struct pk__site_class *cl, const unsigned char *sig, unsigned n);
/* The package of a call at a classified site.  Length, or -2 (too long). */
int pk__site_pack(unsigned char *out, size_t cap, const char *fmt,
		  const struct pk__site_class *cl, const unsigned char *sig,
		  const union pk_arg *args, int err);
/* The kernel's struct va_format (%pV), as printk/kernel.h declares it. */
struct pk__va_format {
	const char *fmt;
	va_list *va;
};

/* printk.c */
/*
 * A record whose body is a package (vsnprintf.c, "PACKAGES"), formatted
 * when read: pk__rec_render().  Readers never see the flag.
 */
#define PK__REC_PACKED	0x0100u
/*
 * A record whose body starts with its module's name: a length byte (1 to
 * PK_MODULE_NAME_MAX), then the name; pk__rec_render() moves it into
 * pk_ring_rec.module.  Readers never see the flag.
 */
#define PK__REC_MODULE	0x0200u
/*
 * A lost note (printk.c, "LOST NOTES"): its body counts records lost
 * where no console could see a gap in the seqs (struct pk__lost_note).
 * Consoles print it as a drop notice; readers see the notice as text.
 */
#define PK__REC_LOSTNOTE	0x0400u
/* Its body: by console max_level 0..8, the lost records such a console counts. */
struct pk__lost_note {
	uint64_t cum[9];	/* cum[l]: those a console of max_level l would have printed */
	uint64_t unknown;	/* of each, those whose level was not known (counted by all) */
};
/*
 * Store a lost note into @ring (as this process, level PK_EMERG, so that
 * no console's level passes it over).  Nothing if no console would count
 * any.  Also adds cum[8] to the store's `lost'.  Return: 0 or -ENOBUFS.
 */
int pk__lost_note_write(struct pk_ring *ring, const struct pk__lost_note *note, uint64_t *seq);
/* Records lost note @rec reports to a console of @max_level (0: not a valid note). */
uint64_t pk__lost_note_count(const struct pk_ring_rec *rec, int max_level);
uint64_t pk__lost_note_unknown(const struct pk_ring_rec *rec);
/* A module name's characters: letters, digits and '_' (a C identifier's). */
static inline bool pk__mod_name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Write @mod's prefix into @dst (PK_RING_MOD_MAX bytes); its length, 0 for none. */
size_t pk__mod_prefix(char *dst, const struct pk_module *mod);
/*
 * The module name of raw record @rec (PK__REC_MODULE, not yet rendered)
 * into @name (PK_RING_MOD_MAX bytes): true, or false if it has none or
 * its prefix is damaged.  Context: async-signal-safe.
 */
bool pk__rec_module(const struct pk_ring_rec *rec, char *name);

/* module.c */
/*
 * Does @s match the first @plen bytes of @pat ('*' any run, '?' any one)?
 * Context: async-signal-safe.
 */
bool pk__glob_match(const char *pat, size_t plen, const char *s);
/*
 * Does @module (NULL: a record without one) match comma-separated pattern
 * list @list?  "-" in the list stands for records without a module.
 * Context: async-signal-safe.
 */
bool pk__mod_list_match(const char *list, const char *module);
/*
 * module.c, for fuzzing and tests: forget the level patterns, then apply
 * @v as PK_MODULES ("pattern=level,...") to the registered modules and
 * keep its patterns, saying nothing.  Return: the entries ignored.
 */
int pk__module_rules_apply(const char *v);
/*
 * Is @list a module list pk_console_set_modules() and pkmsg --module take:
 * 1 to 255 bytes of comma-separated, non-empty entries of letters,
 * digits, '_', '*', '?' and '-'?
 */
bool pk__mod_list_valid(const char *list);
/* Bytes a record's text is formatted into: PK_RECORD_MAX, a newline, a NUL. */
#define PK__TEXT_BUF	(PK_RECORD_MAX + 2)
/*
 * The length of the record text @buf, formatted to @n (vsnprintf's
 * return) into PK__TEXT_BUF bytes, without its newline; PK_REC_TRUNC or
 * PK_REC_NOEOL added to *@flags as it was cut or left open.
 */
size_t pk__text_settle(const char *buf, int n, unsigned *flags);
/*
 * Format @rec in place if it holds a package; else leave it.
 * Context: async-signal-safe, any thread (the reader's).
 */
void pk__rec_render(struct pk_ring_rec *rec);
/* Tests: this thread's store-gate slot (-1: none); do callers use slots (printk.c)? */
int pk__gate_slot_self(void);
bool pk__gate_slots_on(void);
/* Tests: turn slots on or off for new entries; how many gates and slots count an entry (or wrapped). */
void pk__gate_slots_set(bool on);
unsigned long pk__gate_count(void);
/*
 * Is a store switch holding callers out (printk.c, "THE SWITCH WORD")?  A
 * hint (relaxed): a caller printing inside its gate stops, so that the
 * switch need not wait for a slow console.
 */
bool pk__switch_pending(void);
/* Tests: called while a store switch holds callers out (pk_init()); NULL: none. */
extern void (*pk__switch_hook)(void);
uint32_t pk__tid(void);
uint64_t pk__now_ns(void);
/* Lazily initialise; 0 or a negative errno.  Async-signal-tolerant. */
int pk__ensure_init(void);
/*
 * The exit path: another thread is initialising (or changing the store);
 * wait until it is done, @ms at most.  Return: is the library READY?
 */
bool pk__init_settle(unsigned ms);
/*
 * The store gate: pk_printk(), pk_flush() and pk_stats_get() use pk__g.ring
 * between pk__gate_enter() (true: ready, and the store cannot change until
 * pk__gate_exit()) and pk__gate_exit(); pk_init() waits for them before it
 * changes the store.  Async-signal-safe.
 */
bool pk__gate_enter(void);
void pk__gate_exit(void);
/*
 * Panic and crash (this thread has set pk__panic_tid): wait, at most @ms,
 * until no other thread is inside a store gate, so that a caller that
 * passed the panic check before the panic began has stored its record
 * and returned.  Async-signal-safe.  Return: true if they all left.
 */
bool pk__gates_quiesce(unsigned ms);
/* Store preformatted text as a record (no flushing). */
int pk__store(int level, unsigned flags, const char *text, size_t len, uint64_t *seq);

/* early.c: the static early store (see there) */
/* May this thread initialise now (it is not, as far as can be told, in a signal handler)? */
bool pk__early_init_safe_here(void);
/* Store a record in the early store (its seq in *@seq).  Async-signal-safe.  0 or -ENOBUFS. */
int pk__early_store(int level, unsigned flags, const char *text, size_t len, uint64_t *seq);
/* Are there early records not yet moved into the configured store? */
bool pk__early_pending(void);
/* Move them into pk__g.ring (initialising, or just initialised).  Return: records moved. */
uint64_t pk__early_migrate(void);
/* This thread stored early records: see them moved before it stores directly. */
void pk__early_settle(uint64_t last);
/* Wait (bounded) until every early record stored so far has been moved (pk_flush, exit). */
void pk__early_drain(void);
/* Panic or crash before initialisation: write them to @fd.  Async-signal-safe. */
void pk__early_print_raw(int fd);

/* config.c */
int pk__parse_mode(const char *s, enum pk_mode *mode);
int pk__parse_size(const char *s, size_t *out);
int pk__parse_level(const char *s, int *level);
/* PK_BUFFER_SIZE: the largest data ring (its store stays under PK_BUFFER_SIZE_MAX). */
#define PK__DATA_SIZE_MAX	((size_t)512 << 20)
size_t pk__store_size_for(size_t data);
/*
 * console_spec.c: PK_CONSOLE at init.  As pk_console_register_spec(), but
 * if entries were given and none could be used, stderr is registered
 * instead, with one warning.  Return: consoles registered, or -EINVAL.
 */
int pk__console_register_env(const char *spec);
/*
 * The same grammar parsed only (fuzzing, tests): nothing is opened,
 * resolved, registered or said.  Return: the entries that would be made
 * (with their options), *@nbad the entries refused; -EINVAL for NULL.
 */
int pk__console_spec_check(const char *spec, int *nbad);

/* persist.c: map a store file (absent: anonymous memory is used). */
int pk__persist_open(const struct pk_config *cfg, void **mem, size_t *size, int *fd);
void pk__persist_close(void *mem, size_t size, int fd);
/*
 * Map store file @path read-only for a reader, validated.  *live: the
 * creating process still runs (records in progress may yet commit).
 */
int pk__persist_map_reader(const char *path, void **mem, size_t *size, bool *live);
/*
 * The same, read-write if @writable, keeping the file open in *fd (for
 * pk__persist_live; the caller closes it).
 */
int pk__persist_map_file(const char *path, bool writable, void **mem, size_t *size, int *fd,
			 bool *live);
/* Does some process still have store @fd (mapped at @mem) open for writing? */
bool pk__persist_live(int fd, const void *mem);
/*
 * Fuzzing and tests: the checks pk__persist_map_file() makes of a file's
 * contents (size, header, sequence bounds, and the seq limit when
 * @writable), made on @size bytes at @mem; 0 attaches @ring to them.  And
 * what an exclusive writer's open then does to a valid store (recovery of
 * dead writers' records, or a clear with PK_CFG_BUFFER_CLEAR).
 */
int pk__persist_check_image(void *mem, size_t size, bool writable, struct pk_ring *ring);
void pk__persist_take_over(struct pk_ring *ring, unsigned flags);
/*
 * reader.c, for fuzzing: a read-only reader of the store image @mem
 * (@size bytes, the caller's, kept until pk_reader_close()), checked as
 * pk_reader_open_file() checks a file's contents and read as a file
 * whose writers are gone.  NULL with errno set if it is not a store.
 */
struct pk_reader *pk__reader_open_image(void *mem, size_t size);

#endif /* PK_INTERNAL_H */
