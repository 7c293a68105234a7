/* SPDX-License-Identifier: MIT */
/*
 * symtab.h - naming a code address from the dynamic symbol tables of the
 * loaded objects, without the loader's lock (src/symtab.c).
 */
#ifndef PK_SYMTAB_H
#define PK_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct pk__sym {
	const char *name;	/* in the object's string table */
	uintptr_t start;	/* the symbol's address */
	size_t size;		/* its st_size (0: unknown) */
	const char *module;	/* the object's file name without directories;
				 * NULL for the main program */
};

/*
 * pk__sym_lookup() - the function or object that contains @addr.
 *
 * Walks the dynamic linker's list of loaded objects (_r_debug) and their
 * .dynsym tables in place: no lock, no allocation, no dladdr().  Only
 * symbols of the dynamic symbol tables are known: a static function, or
 * a function of a program linked without -rdynamic, is not found.
 *
 * Context: any thread, async-signal-safe.  An object that another thread
 * dlclose()s during the walk may be read after it is unmapped.
 * Return: 0 and @sym filled, or -ENOENT.
 */
int pk__sym_lookup(uintptr_t addr, struct pk__sym *sym);

/*
 * pk__sym_format() - the kernel's sprint_symbol() text for @addr into @buf
 * (@size bytes, NUL-terminated): "name+0xOFF/0xSIZE [module]", or
 * "name [module]" without @offset, or "0xADDR" when no symbol contains it.
 * @backtrace: @addr is a return address (the kernel's %pB): the symbol of
 * @addr - 1 is looked up, the offset printed is of @addr.
 *
 * Context: any thread, async-signal-safe.
 * Return: the length of the text (cut to @size - 1).
 */
size_t pk__sym_format(char *buf, size_t size, uintptr_t addr, int offset, int backtrace);

/*
 * pk__sym_frame() - one line of a crash or WARN backtrace for return
 * address @addr, frame @idx: " #NN 0xADDR name+0xOFF [object]", the object
 * being the program's own name for the main program; "?+0x0 [?]" when no
 * dynamic symbol contains @addr - 1.  No newline.
 *
 * Context: any thread, async-signal-safe (unlike dladdr(), which takes the
 * loader's lock: a crash inside dlopen() would deadlock in it).
 * Return: the length of the text (cut to @size - 1).
 */
size_t pk__sym_frame(char *buf, size_t size, int idx, uintptr_t addr);

#endif /* PK_SYMTAB_H */
