// SPDX-License-Identifier: MIT
/*
 * fuzz_dyndbg - libFuzzer target for PK_DYNDBG and pk_dyndbg_exec()
 * queries (src/kernel/dyndbg.c): the kernel's dynamic debug grammar (match
 * specs, quotes, escapes, line ranges, wildcards, flag changes), several
 * queries per input separated by ';' or newlines.
 *
 * A set of sites is registered once; each input sets their flags back,
 * then runs as a query (cut at its first NUL; its first byte, when there
 * is one, also chooses the size of the error buffer, from 0 to 63 bytes,
 * in a heap block of exactly that size).  The checks: no crash, hang or
 * sanitizer report; a result that is a count of matches (at most the
 * sites times the queries) or -EINVAL; an error text terminated within
 * its buffer, none written into a buffer of size 0; only known flags set
 * on any site; and on success, flags only where a query could have put
 * them (no site changed by a query that matched nothing).
 */
#include <errno.h>

#include "fuzz_common.h"
#include "printk/dyndbg.h"

#define ALL_FLAGS	(PK_DYNDBG_PRINT | PK_DYNDBG_MODNAME | PK_DYNDBG_FUNCNAME | \
			 PK_DYNDBG_LINENO | PK_DYNDBG_TID)

static struct pk_dyndbg_site sites[] = {
	{ "net", "net_send", "src/net/send.c", "sent %d bytes\n", 10, 0, { 0 }, NULL },
	{ "net", "net_recv", "src/net/recv.c", "got %s from %s\n", 120, PK_DYNDBG_PRINT, { 0 }, NULL },
	{ "disk", "disk_io", "/abs/path/disk.c", "io error %d at %llu\n", 7, 0, { 0 }, NULL },
	{ NULL, "main", "main.c", "starting\n", 1, PK_DYNDBG_PRINT | PK_DYNDBG_TID, { 0 }, NULL },
	{ "x_y", "f", "a/b/c/d.c", "tab\there \"quoted\" 100%%\n", 65535, 0, { 0 }, NULL },
	{ "net_core", "net_core_init", "net/core.c", "", 4000000000u, 0, { 0 }, NULL },
};
#define NSITES	(sizeof(sites) / sizeof(sites[0]))
static unsigned char defaults[NSITES];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t i;

	(void)argc;
	(void)argv;
	for (i = 0; i < NSITES; i++)
		defaults[i] = sites[i].flags;
	if (pk_dyndbg_register_sites(sites, sites + NSITES))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *q = fuzz_cstr(data, size), *err;
	size_t i, queries = 1, errlen = size ? data[0] % 64 : 16;
	bool changed = false;
	int ret;

	for (i = 0; q[i]; i++)
		queries += q[i] == ';' || q[i] == '\n';
	for (i = 0; i < NSITES; i++)
		__atomic_store_n(&sites[i].flags, defaults[i], __ATOMIC_RELAXED);
	err = malloc(errlen ? errlen : 1);
	if (!err)
		abort();
	if (!errlen)
		err[0] = 'x';
	ret = pk_dyndbg_exec(q, err, errlen);
	if (ret != -EINVAL && (ret < 0 || (size_t)ret > NSITES * queries))
		FUZZ_FAIL("\"%s\": returned %d", q, ret);
	if (errlen && !memchr(err, '\0', errlen))
		FUZZ_FAIL("\"%s\": error text not terminated in %zu bytes", q, errlen);
	if (!errlen && err[0] != 'x')
		FUZZ_FAIL("\"%s\": wrote into an error buffer of size 0", q);
	if (ret == 0 && errlen && err[0])
		FUZZ_FAIL("\"%s\": success with an error text \"%s\"", q, err);
	for (i = 0; i < NSITES; i++) {
		unsigned f = __atomic_load_n(&sites[i].flags, __ATOMIC_RELAXED);

		if (f & ~ALL_FLAGS)
			FUZZ_FAIL("\"%s\": site %zu has flags %#x", q, i, f);
		changed |= f != defaults[i];
	}
	if (ret == 0 && changed)
		FUZZ_FAIL("\"%s\": no site matched, yet flags changed", q);
	free(err);
	free(q);
	return 0;
}
