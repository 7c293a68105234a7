/* SPDX-License-Identifier: MIT */
/*
 * store.h - what store/ offers the wings above it: the store in use
 * (pk__st) and its life (life.c), storing a record, a record's structure
 * and rendering for readers (record.c), the early store (early.c), the
 * configuration (config.c), store files (persist.c), readers (reader.c),
 * and with ringbuf.h and pathwalk.h the lanes and safe path walks.  Not
 * installed.
 */
#ifndef PK_STORE_H
#define PK_STORE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "printk/printk.h"
#include "printk/reader.h"
#include "store/pathwalk.h"
#include "store/ringbuf.h"
#include "store/lanes.h"





/* The store in use (the region, its file, its lanes). */
struct pk__store_state {
	struct pk_lanes lanes;
	void *mem;		/* the region */
	size_t mem_size;
	int mem_fd;		/* persistent store, or -1 */
	/*
	 * The store's seq_head when the process attached it: a persistent
	 * store may hold records of earlier runs and of other live processes,
	 * and this process's consoles print neither.
	 */
	uint64_t attach_seq[PK_LANES_MAX];	/* per lane */
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

extern struct pk__store_state pk__st;

/* Lane @i of the store in use (0 <= i < pk__st.lanes.n). */
static inline struct pk_ring *pk__lane(unsigned i)
{
	return &pk__st.lanes.lane[i];
}

/*
 * A position in the store in use, lane by lane: the seq each lane's
 * reader is at (only the first pk__st.lanes.n count).
 */
struct pk__spos {
	uint64_t s[PK_LANES_MAX];
};

/* Every lane's seq_head now (acquire loads). */
void pk__store_heads(struct pk__spos *out);
/* Make every lane's newest record readable if it is still open. */
void pk__store_finalize_last(void);

/* Tests: called while a store switch holds callers out (pk_init()); NULL: none. */
extern void (*pk__switch_hook)(void);

/*
 * Is this process the only one storing into its store (so that every
 * lost seq is one of its own records)?  Anonymous memory always is.
 */
bool pk__store_sole(void);


/* record.c: a stored record (and life.c: pk__store()) */
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
 * A lost note (record.c, "LOST NOTES"): its body counts records lost
 * where no console could see a gap in the seqs (struct pk__lost_note).
 * Consoles print it as a drop notice; readers see the notice as text.
 */
#define PK__REC_LOSTNOTE	0x0400u
/*
 * A record whose body ends with a fields block (record.c, "FIELDS"):
 * pk__rec_render() moves its entries into pk_ring_rec.fields.  Such a
 * record is never left open.  Readers never see the flag.
 */
#define PK__REC_FIELDS	0x0800u
/*
 * A record whose body has a location block after its module prefix (if
 * any), before its text or package (record.c, "LOCATIONS"):
 * pk__rec_render() moves it into pk_ring_rec.file, .func and .line.
 * Readers never see the flag.
 */
#define PK__REC_LOC	0x1000u
/* Its body: by console max_level 0..8, the lost records such a console counts. */
struct pk__lost_note {
	uint64_t cum[9];	/* cum[l]: those a console of max_level l would have printed */
	uint64_t unknown;	/* of each, those whose level was not known (counted by all) */
};
/*
 * Store a lost note into @ring (as this process, level PK_EMERG, so that
 * no console's level passes it over), with timestamp @ts (0: now).  Nothing if no console would count
 * any.  Also adds cum[8] to the store's `lost'.  Return: 0 or -ENOBUFS.
 */
int pk__lost_note_write(struct pk_ring *ring, const struct pk__lost_note *note, uint64_t ts,
			uint64_t *seq);
/* Records lost note @rec reports to a console of @max_level (0: not a valid note). */
uint64_t pk__lost_note_count(const struct pk_ring_rec *rec, int max_level);
uint64_t pk__lost_note_unknown(const struct pk_ring_rec *rec);

/* Write @mod's prefix into @dst (PK_RING_MOD_MAX bytes); its length, 0 for none. */
size_t pk__mod_prefix(char *dst, const struct pk_module *mod);
/*
 * The module name of raw record @rec (PK__REC_MODULE, not yet rendered)
 * into @name (PK_RING_MOD_MAX bytes): true, or false if it has none or
 * its prefix is damaged.  Context: async-signal-safe.
 */
bool pk__rec_module(const struct pk_ring_rec *rec, char *name);

/*
 * Encode @n fields into @dst (PK_RING_FIELDS_MAX bytes) as a fields
 * block; those that are bad or over the budget are left out and counted
 * in the block, *@err set to -EINVAL or -EMSGSIZE (else left alone).
 * Return: the block's bytes, 0 if there is nothing to store (@n == 0).
 * Context: async-signal-safe.
 */
size_t pk__fields_encode(char *dst, const struct pk_field *f, size_t n, int *err);
/*
 * Encode call site @loc into @dst (PK_RING_LOC_MAX bytes) as a location
 * block.  Return: its bytes; 0 for a NULL @loc or one with neither a file
 * nor a function.  Context: async-signal-safe.
 */
size_t pk__loc_encode(char *dst, const struct pk_srcloc *loc);
/* Is @key a valid field key (1 to PK_FIELD_KEY_MAX of [A-Z0-9_], a letter first)? */
bool pk__field_key_ok(const char *key, size_t len);
/*
 * The bytes beyond PK_RECORD_MAX raw body @text of @len bytes with
 * @flags may hold: its module prefix and its fields block.
 */
size_t pk__rec_extra(unsigned flags, const char *text, size_t len);
/*
 * Point @out's fields at @rec's (rendered) fields, through rec->fv, and
 * its file, func and line at @rec's call site (NULL, NULL, 0 if none):
 * what every rendering of a struct pk_ring_rec goes through.
 * Context: async-signal-safe.
 */
void pk__rec_fields(struct pk_ring_rec *rec, struct pk_record *out);
/*
 * @rec as a struct pk_record in @out, rendered first (pk__rec_render()):
 * what every reader of the store hands on.  Context: async-signal-safe.
 */
void pk__rec_export(struct pk_ring_rec *rec, struct pk_record *out);

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
/*
 * The body of an open record stored as a package (printk.c: an open line
 * deferred) made text, its module prefix and location kept in front: for
 * pk__ring_extend_x(), when pk_cont() joins the line.  A record of text is
 * left as it is.  0, -EINVAL for a record that cannot be open, -E2BIG.
 * Context: async-signal-safe.
 */
int pk__rec_open_unpack(struct pk_ring_rec *rec);
/*
 * Store preformatted text as a record (no flushing), in this CPU's lane:
 * its lane into *@lane and its seq into *@seq (either may be NULL).
 */
int pk__store(int level, unsigned flags, const char *text, size_t len, unsigned *lane,
	      uint64_t *seq);

/* early.c: the static early store (see there) */
/* May this thread initialise now (it is not, as far as can be told, in a signal handler)? */
bool pk__early_init_safe_here(void);
/* Store a record in the early store (its seq in *@seq).  Async-signal-safe.  0 or -ENOBUFS. */
int pk__early_store(int level, unsigned flags, const char *text, size_t len, uint64_t *seq);
/* Are there early records not yet moved into the configured store? */
bool pk__early_pending(void);
/*
 * Move them into pk__st.ring.  The caller keeps that store in use for the
 * whole call: it initialises or switches the store itself (init_lock), or
 * it is inside the gate (pk__gate_enter()), so that no switch copies and
 * releases the store under the migration.  Return: records moved.
 */
uint64_t pk__early_migrate(void);
/* This thread stored early records: see them moved before it stores directly (as migrate). */
void pk__early_settle(uint64_t last);
/* Wait (bounded) until every early record so far is moved (pk_flush, exit; as migrate). */
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
/* The console loglevel pk_config_init() writes when PK_LOGLEVEL does not say. */
#define PK__LOGLEVEL_DEFAULT	7
/* Does PK_LOGLEVEL give a valid loglevel (the user chose one)? */
bool pk__env_loglevel_set(void);
/* Is @c a configuration pk_init() takes?  0, or -EINVAL. */
int pk__config_check(const struct pk_config *c);
/*
 * Make @c's zeros the defaults and PK_CFG_ZERO (PK_PRINT_BUDGET_UNBOUNDED)
 * the value 0 (printk.h, "struct pk_config").  @c passed pk__config_check().
 */
void pk__config_resolve(struct pk_config *c);

/* persist.c: map a store file (absent: anonymous memory is used). */
struct pk_lanes;
/*
 * Open or create @cfg's store file for writing; *@size is the file's.  A
 * new file gets pk__lanes_for(@lanes) lanes (0: the default policy), an
 * existing one keeps its own: pk__lanes_attach() says how many.
 * pk__persist_open() asks for one lane (what the library writes today).
 */
int pk__persist_open_lanes(const struct pk_config *cfg, unsigned lanes, void **mem,
			   size_t *size, int *fd);
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
 * Why pk__persist_map_file(@path, read-only) refuses it: its error, and
 * the sentence persist.c's messages give in @why (@n bytes; "" for a
 * system call's error, or 0 if it maps now).  For pkmsg's messages.
 */
int pk__persist_explain(const char *path, char *why, size_t n);
/*
 * Fuzzing and tests: the checks pk__persist_map_file() makes of a file's
 * contents (size, every lane's header, sequence bounds, and the seq limit
 * when @writable), made on @size bytes at @mem; 0 attaches @ls to them.
 * And what an exclusive writer's open then does to a valid store
 * (recovery of dead writers' records, or a clear with
 * PK_CFG_BUFFER_CLEAR, in every lane).
 */
int pk__persist_check_image(void *mem, size_t size, bool writable, struct pk_lanes *ls);
void pk__persist_take_over(struct pk_lanes *ls, unsigned flags);
/*
 * reader.c, for fuzzing: a read-only reader of the store image @mem
 * (@size bytes, the caller's, kept until pk_reader_close()), checked as
 * pk_reader_open_file() checks a file's contents and read as a file
 * whose writers are gone.  NULL with errno set if it is not a store.
 */
struct pk_reader *pk__reader_open_image(void *mem, size_t size);


/* life.c: the store in use, opened, switched and closed by the front door. */
/* Open @cfg's store (a file that cannot be used: anonymous memory, its error in *@store_err). */
int pk__store_open(const struct pk_config *cfg, int *store_err);
void pk__store_close(void);
/* Is @cfg's store the one in use?  Is @path the store PK_BUFFER names? */
bool pk__store_same(const struct pk_config *cfg);
bool pk__store_from_env(const char *path);
/* After a fork(): a store file is shared by parent and child now. */
void pk__store_fork_shared(void);
/*
 * What a store switch asks of the wing that calls it (the consoles' places
 * in the store): their positions, taken once callers are held out, and
 * moving each to the new store's seqs through @map.
 */
struct pk__store_switch_ops {
	unsigned (*positions)(struct pk__spos *out, unsigned max);
	/*
	 * @map: the new position of a console at @old (lanes of the store
	 * in use) into *@now (lanes of the new one); for a position that
	 * positions() gave, also, per new lane, has_carry[l] and carry[l]:
	 * what the console missed before its first copied record there, to
	 * be reported by the console itself (the notes in the new store for
	 * it may be overwritten before it gets there).
	 */
	void (*rebase)(void (*map)(const struct pk__spos *old, struct pk__spos *now, void *arg,
				   struct pk__lost_note *carry, bool *has_carry),
		       void *arg, unsigned old_n);
};
/*
 * Adopt @cfg's store: open it, keep callers out, copy the records over,
 * move every console's position (@ops), release the old store.  The
 * library's threads are stopped.  Return: 0, or a negative errno with the
 * store in use unchanged.
 */
int pk__store_switch(const struct pk_config *cfg, const struct pk__store_switch_ops *ops);

#endif /* PK_STORE_H */
