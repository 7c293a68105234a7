// SPDX-License-Identifier: MIT
/*
 * symtab.c - the symbol that contains a code address, for %pS and the
 * backtraces, from any context.  It writes its text itself: the printf
 * engine calls the %p extensions, which call this file, and nothing here
 * calls back.
 *
 * dladdr() takes the dynamic loader's lock: a signal handler that
 * interrupted dlopen() would wait for itself.  This file reads what the
 * loader has already published instead:
 *  - the list of loaded objects, _r_debug.r_map (<link.h>), the list
 *    debuggers walk.  glibc links a new object in only once it is set up,
 *    and the walk takes no lock, so it may run in a signal handler;
 *  - each object's dynamic section (l_ld): DT_SYMTAB, DT_STRTAB, DT_STRSZ
 *    and DT_GNU_HASH or DT_HASH, which give the number of symbols;
 *  - the symbols, in place.  A symbol contains @addr when @addr lies in
 *    [value, value + st_size); a symbol of size 0 only its own address.
 *    Unlike dladdr(), an address in a static function is not named after
 *    the exported function before it: it has no symbol here.
 *
 * glibc relocates the d_ptr entries of most dynamic sections to absolute
 * addresses, but not those of a read-only one (the vDSO's): an entry below
 * the object's load address is taken as relative to it.
 *
 * No lock, no allocation, no writes to shared memory.  The one hazard is
 * an object that another thread dlclose()s while we read its tables, as
 * with any unwinder; libprintk itself is never unloaded (-z nodelete).
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>

#include "core/core.h"
#include "format/format.h"
#include "format/symtab.h"

/* st_info's halves, the same for ELF32 and ELF64. */
#define ST_BIND(i)	((unsigned)(i) >> 4)
#define ST_TYPE(i)	((unsigned)(i) & 0xfu)

struct dynobj {
	uintptr_t base;
	const ElfW(Sym) *sym;
	const char *str;
	size_t strsz;
	uint32_t nsym;
};

/* A d_ptr, relocated when the loader left it relative (see above). */
static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) p)
{
	return p < base ? base + p : p;
}

/* The number of symbols from DT_GNU_HASH: past the last chain's end. */
static uint32_t gnu_hash_nsym(const uint32_t *h)
{
	uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2], max = 0, i;
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(const void *)(h + 4);
	const uint32_t *buckets = (const uint32_t *)(const void *)(bloom + bloom_size);
	const uint32_t *chain = buckets + nbuckets;

	for (i = 0; i < nbuckets; i++)
		if (buckets[i] > max)
			max = buckets[i];
	if (max < symoffset)
		return symoffset;
	while (!(chain[max - symoffset] & 1))
		max++;
	return max + 1;
}

static int dynobj_get(const struct link_map *m, struct dynobj *o)
{
	const ElfW(Dyn) *d = m->l_ld;
	const uint32_t *hash = NULL, *gnu = NULL;

	if (!d)
		return -ENOENT;
	memset(o, 0, sizeof(*o));
	o->base = (uintptr_t)m->l_addr;
	for (; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			o->sym = (const ElfW(Sym) *)dyn_ptr(o->base, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			o->str = (const char *)dyn_ptr(o->base, d->d_un.d_ptr);
			break;
		case DT_STRSZ:
			o->strsz = d->d_un.d_val;
			break;
		case DT_HASH:
			hash = (const uint32_t *)dyn_ptr(o->base, d->d_un.d_ptr);
			break;
		case DT_GNU_HASH:
			gnu = (const uint32_t *)dyn_ptr(o->base, d->d_un.d_ptr);
			break;
		}
	}
	if (!o->sym || !o->str || (!hash && !gnu))
		return -ENOENT;
	o->nsym = gnu ? gnu_hash_nsym(gnu) : hash[1];
	return 0;
}

/* Does @s name code or data that may contain @addr? */
static bool contains(const struct dynobj *o, const ElfW(Sym) *s, uintptr_t addr)
{
	unsigned type = ST_TYPE(s->st_info);
	uintptr_t start;

	if (s->st_shndx == SHN_UNDEF || !s->st_value || s->st_name >= o->strsz)
		return false;
	if (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE)
		return false;
	start = o->base + s->st_value;
	if (addr < start)
		return false;
	return s->st_size ? addr - start < s->st_size : addr == start;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int pk__sym_lookup(uintptr_t addr, struct pk__sym *sym)
{
	const struct link_map *m;
	const ElfW(Sym) *best = NULL, *s;
	struct dynobj o, best_o;
	const char *best_mod = NULL;
	uint32_t i;

	/* The loader's list: read, never written (see the file's comment). */
	for (m = *(struct link_map *volatile *)&_r_debug.r_map; m; m = m->l_next) {
		if (dynobj_get(m, &o) < 0)
			continue;
		for (i = 1; i < o.nsym; i++) {
			s = &o.sym[i];
			if (!contains(&o, s, addr))
				continue;
			/* Of aliases, a global name rather than a weak or local one. */
			if (!best || (ST_BIND(best->st_info) != STB_GLOBAL &&
				      ST_BIND(s->st_info) == STB_GLOBAL)) {
				best = s;
				best_o = o;
				best_mod = m->l_name && *m->l_name ? basename_of(m->l_name) : NULL;
			}
		}
		if (best)
			break;
	}
	if (!best)
		return -ENOENT;
	sym->name = best_o.str + best->st_name;
	sym->start = best_o.base + best->st_value;
	sym->size = best->st_size;
	sym->module = best_mod;
	return 0;
}

/*
 * The text of a symbol, built here rather than by the printf engine
 * (format/vsnprintf.c), which calls into the %p extensions that call this
 * file: no circle.  The same bytes as snprintf() would write; the length
 * counts what did not fit, as snprintf()'s return does.
 */
struct sym_out {
	char *buf;
	size_t size, len;	/* len: bytes wanted so far */
};

static void put_c(struct sym_out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_s(struct sym_out *o, const char *str)
{
	while (*str)
		put_c(o, *str++);
}

/* @v in base @base (10 or 16, lower case), at least @width digits. */
static void put_u(struct sym_out *o, unsigned long v, unsigned base, int width)
{
	char d[24];
	int n = 0;

	do {
		d[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n < width)
		d[n++] = '0';
	while (n)
		put_c(o, d[--n]);
}

static size_t sym_out_end(struct sym_out *o)
{
	o->buf[o->len < o->size ? o->len : o->size - 1] = '\0';
	return o->len < o->size ? o->len : o->size - 1;
}

static void put_module(struct sym_out *o, const char *module)
{
	if (module) {
		put_s(o, " [");
		put_s(o, module);
		put_s(o, "]");
	}
}

size_t pk__sym_format(char *buf, size_t size, uintptr_t addr, int offset, int backtrace)
{
	struct pk__sym s;
	struct sym_out o = { buf, size, 0 };

	if (!size)
		return 0;
	if (pk__sym_lookup(addr - (backtrace ? 1 : 0), &s) < 0) {
		put_s(&o, "0x");
		put_u(&o, (unsigned long)addr, 16, 1);
	} else {
		put_s(&o, s.name);
		if (offset) {
			put_s(&o, "+0x");
			put_u(&o, (unsigned long)(addr - s.start), 16, 1);
			put_s(&o, "/0x");
			put_u(&o, (unsigned long)s.size, 16, 1);
		}
		put_module(&o, s.module);
	}
	return sym_out_end(&o);
}

/*
 * The loaded object whose PT_LOAD segments hold @addr: its name (the
 * program's own for the main program) and load base, from its program
 * headers (the ELF header at its base for a shared object or a PIE; the
 * auxiliary vector's for a program loaded at its link address).  NULL
 * if none does.
 */
static const char *object_of(uintptr_t addr, uintptr_t *base)
{
	const struct link_map *m;
	const ElfW(Phdr) *ph;
	const ElfW(Ehdr) *eh;
	unsigned long phnum;
	unsigned i;

	for (m = *(struct link_map *volatile *)&_r_debug.r_map; m; m = m->l_next) {
		if (m->l_addr) {
			eh = (const ElfW(Ehdr) *)m->l_addr;
			if (memcmp(eh->e_ident, ELFMAG, SELFMAG))
				continue;
			ph = (const ElfW(Phdr) *)(m->l_addr + eh->e_phoff);
			phnum = eh->e_phnum;
		} else if (m == _r_debug.r_map) {
			ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);	/* reads a copy: safe */
			phnum = getauxval(AT_PHNUM);
			if (!ph)
				continue;
		} else {
			continue;
		}
		for (i = 0; i < phnum; i++) {
			uintptr_t start = m->l_addr + ph[i].p_vaddr;

			if (ph[i].p_type == PT_LOAD && addr >= start && addr - start < ph[i].p_memsz) {
				*base = m->l_addr;
				return m->l_name && *m->l_name ? basename_of(m->l_name)
							       : program_invocation_short_name;
			}
		}
	}
	return NULL;
}

size_t pk__sym_frame(char *buf, size_t size, int idx, uintptr_t addr)
{
	struct pk__sym s;
	const char *obj = "?";
	struct sym_out o = { buf, size, 0 };
	uintptr_t base;

	if (!size)
		return 0;
	/* A return address may lie just past its function's end: look up addr - 1. */
	if (pk__sym_lookup(addr - 1, &s) < 0) {
		/* No symbol (a hidden or local function): the offset in its object. */
		s.name = "?";
		s.start = addr;
		if ((obj = object_of(addr - 1, &base)) != NULL)
			s.start = base;
		else
			obj = "?";
	} else {
		obj = s.module ? s.module : program_invocation_short_name;
	}
	put_s(&o, " #");
	if (idx < 0)
		put_c(&o, '-');
	put_u(&o, idx < 0 ? -(unsigned long)idx : (unsigned long)idx, 10, idx < 0 ? 1 : 2);
	put_s(&o, " 0x");
	put_u(&o, (unsigned long)addr, 16, 1);
	put_c(&o, ' ');
	put_s(&o, s.name);
	put_s(&o, "+0x");
	put_u(&o, (unsigned long)(addr - s.start), 16, 1);
	put_s(&o, " [");
	put_s(&o, obj);
	put_c(&o, ']');
	return sym_out_end(&o);
}
