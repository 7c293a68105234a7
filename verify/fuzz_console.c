// SPDX-License-Identifier: MIT
/*
 * fuzz_console - libFuzzer target for the PK_CONSOLE grammar
 * (src/console/console_spec.c): entries, @LEVEL, %RATE, KEY=VALUE options,
 * quotes and escapes, every console kind's address syntax.
 *
 * The input, cut at its first NUL, is parsed by pk__console_spec_check():
 * the parser pk_console_register_spec() and PK_CONSOLE at init run, with
 * nothing opened, resolved or registered.  The checks: no crash, hang or
 * sanitizer report; as many entries made or refused as there can be
 * (at most one per comma, plus one); the same result twice; and empty
 * items before the spec change nothing.
 */
#include <errno.h>

#include "fuzz_common.h"
#include "format/format.h"
#include "store/store.h"
#include "console/consoles.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = fuzz_cstr(data, size), *pre;
	size_t i, items = 1, len = strlen(spec);
	int n, bad = -1, n2, bad2 = -1;

	for (i = 0; i < len; i++)
		items += spec[i] == ',';
	n = pk__console_spec_check(spec, &bad);
	if (n < 0 || bad < 0 || (size_t)n + (size_t)bad > items)
		FUZZ_FAIL("\"%s\": %d made, %d refused, of at most %zu items", spec, n, bad, items);
	n2 = pk__console_spec_check(spec, &bad2);
	if (n2 != n || bad2 != bad)
		FUZZ_FAIL("\"%s\": %d/%d then %d/%d", spec, n, bad, n2, bad2);
	pre = malloc(len + 3);
	if (!pre)
		abort();
	memcpy(pre, ",,", 2);
	memcpy(pre + 2, spec, len + 1);
	n2 = pk__console_spec_check(pre, &bad2);
	if (n2 != n || bad2 != bad)
		FUZZ_FAIL("\"%s\": %d/%d, after empty items %d/%d", spec, n, bad, n2, bad2);
	free(pre);
	free(spec);
	return 0;
}
