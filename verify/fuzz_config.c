// SPDX-License-Identifier: MIT
/*
 * fuzz_config - libFuzzer target for the parsers of the PK_* variables
 * (src/store/config.c): sizes (PK_BUFFER_SIZE, rotate=), levels (PK_LOGLEVEL,
 * @LEVEL, loglevel=) and modes (PK_MODE).
 *
 * Each input, cut at its first NUL, goes through all three, and each
 * result is compared with a model written here from the documentation:
 * a size is decimal digits (no sign or space, no overflow) and an optional
 * k, m or g (either case), at most PK_BUFFER_SIZE_MAX; a level is one
 * digit 0-8 alone or a whole level name in any case (warning and error
 * too); a mode is handoff, legacy or thread in any case.  A refused input
 * leaves the result untouched.
 */
#include <strings.h>

#include "fuzz_common.h"
#include "format/format.h"
#include "store/store.h"

static int model_size(const char *s, unsigned long long *out)
{
	unsigned long long v = 0;
	unsigned shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (~0ull - (unsigned long long)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (unsigned long long)(*s - '0');
	}
	if (*s == 'k' || *s == 'K')
		shift = 10;
	else if (*s == 'm' || *s == 'M')
		shift = 20;
	else if (*s == 'g' || *s == 'G')
		shift = 30;
	if (shift)
		s++;
	if (*s || v > ((unsigned long long)PK_BUFFER_SIZE_MAX >> shift))
		return -1;
	*out = v << shift;
	return 0;
}

static int model_level(const char *s, int *out)
{
	static const char *const names[] = { "emerg", "alert", "crit", "err", "warn", "notice",
					     "info", "debug" };
	int i;

	if (s[0] >= '0' && s[0] <= '8' && !s[1]) {
		*out = s[0] - '0';
		return 0;
	}
	for (i = 0; i < 8; i++) {
		if (!strcasecmp(s, names[i])) {
			*out = i + 1;
			return 0;
		}
	}
	if (!strcasecmp(s, "warning") || !strcasecmp(s, "error")) {
		*out = (s[0] | 0x20) == 'w' ? 5 : 4;
		return 0;
	}
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	unsigned long long wsize = 0;
	size_t got = 12345;
	int lvl = -7, wlvl = -7, r, w;
	enum pk_mode mode = (enum pk_mode)99;

	r = pk__parse_size(s, &got);
	w = model_size(s, &wsize);
	if ((r == 0) != (w == 0) || (r == 0 && got != wsize) || (r && got != 12345))
		FUZZ_FAIL("size \"%s\": %d (%zu), the model %d (%llu)", s, r, got, w, wsize);
	r = pk__parse_level(s, &lvl);
	w = model_level(s, &wlvl);
	if ((r == 0) != (w == 0) || lvl != wlvl)
		FUZZ_FAIL("level \"%s\": %d (%d), the model %d (%d)", s, r, lvl, w, wlvl);
	r = pk__parse_mode(s, &mode);
	w = !strcasecmp(s, "handoff") ? PK_MODE_HANDOFF : !strcasecmp(s, "legacy") ? PK_MODE_LEGACY
	    : !strcasecmp(s, "thread") ? PK_MODE_THREAD : -1;
	if ((r == 0) != (w >= 0) || (int)mode != (w >= 0 ? w : 99))
		FUZZ_FAIL("mode \"%s\": %d (%d), the model %d", s, r, (int)mode, w);
	free(s);
	return 0;
}
