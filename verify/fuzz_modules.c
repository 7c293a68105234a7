// SPDX-License-Identifier: MIT
/*
 * fuzz_modules - libFuzzer target for PK_MODULES ("pattern=level,...",
 * src/core/module.c) and the module-name globs behind it.
 *
 * A few modules are registered once.  For each input (cut at its first
 * NUL) their levels are set back to their defaults and the input is
 * applied as PK_MODULES by pk__module_rules_apply().  A model written
 * here, from the documentation alone, parses the same string: every
 * module must end at the level of the last valid entry whose pattern
 * matches its name (its default if none), and the count of entries
 * ignored must agree, the rule table's limit (32 patterns) included.
 */
#include "fuzz_common.h"
#include "format/format.h"
#include "store/store.h"
#include "printk/printk.h"

#include <strings.h>

/*
 * A level as libprintk(7) "LEVELS" documents it for PK_MODULES: a digit
 * 0-7, a name in any case (syslog's "warning" and "error" too) or "off".
 * -2 if none.
 */
static int model_level(const char *s, size_t n)
{
	static const struct { const char *name; int level; } words[] = {
		{ "off", PK_MODULE_OFF }, { "emerg", 0 }, { "alert", 1 }, { "crit", 2 },
		{ "err", 3 }, { "error", 3 }, { "warn", 4 }, { "warning", 4 },
		{ "notice", 5 }, { "info", 6 }, { "debug", 7 },
	};
	size_t i;

	if (n == 1 && s[0] >= '0' && s[0] <= '7')
		return s[0] - '0';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].name) == n && !strncasecmp(s, words[i].name, n))
			return words[i].level;
	return -2;
}

static struct pk_module mods[] = {
	{ .name = "net", .level = PK_INFO, .default_level = PK_INFO },
	{ .name = "net_core", .level = PK_DEBUG, .default_level = PK_DEBUG },
	{ .name = "a", .level = PK_ERR, .default_level = PK_ERR },
	{ .name = "ab", .level = PK_MODULE_OFF, .default_level = PK_MODULE_OFF },
	{ .name = "x9_", .level = PK_NOTICE, .default_level = PK_NOTICE },
	{ .name = "Z", .level = PK_WARNING, .default_level = PK_WARNING },
	{ .name = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", .level = 0, .default_level = 0 },
};
#define NMODS	(sizeof(mods) / sizeof(mods[0]))

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	size_t i;

	(void)argc;
	(void)argv;
	for (i = 0; i < NMODS; i++)
		if (pk_module_register(&mods[i]))
			abort();
	return 0;
}

/* The model's glob: '*' any run, '?' one character; by dynamic programming. */
static int glob(const char *p, size_t pn, const char *s)
{
	size_t sn = strlen(s), i, j;
	unsigned char m[PK_MODULE_NAME_MAX + 2][PK_MODULE_NAME_MAX + 2];

	/* m[i][j]: the first i pattern characters match the first j of @s. */
	memset(m, 0, sizeof(m));
	m[0][0] = 1;
	for (i = 1; i <= pn; i++) {
		for (j = 0; j <= sn; j++) {
			if (p[i - 1] == '*')
				m[i][j] = m[i - 1][j] || (j && m[i][j - 1]);
			else
				m[i][j] = j && m[i - 1][j - 1] && (p[i - 1] == '?' || p[i - 1] == s[j - 1]);
		}
	}
	return m[pn][sn];
}

static int name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *v = fuzz_cstr(data, size);
	char pats[32][PK_MODULE_NAME_MAX + 1];
	int want[NMODS], level, bad = 0, got;
	size_t i, k, n, npats = 0;
	const char *p = v, *end, *eq;

	for (i = 0; i < NMODS; i++) {
		__atomic_store_n(&mods[i].level, mods[i].default_level, __ATOMIC_RELAXED);
		want[i] = mods[i].default_level;
	}
	/* The model. */
	while (*p) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (end == p) {
			p++;
			continue;
		}
		eq = memchr(p, '=', (size_t)(end - p));
		n = eq ? (size_t)(eq - p) : 0;
		level = eq ? model_level(eq + 1, (size_t)(end - eq - 1)) : -2;
		for (k = 0; k < n; k++)
			if (!name_char((unsigned char)p[k]) && p[k] != '*' && p[k] != '?')
				break;
		if (!n || n > PK_MODULE_NAME_MAX || k < n || level == -2) {
			bad++;
		} else {
			/* The rule table: a pattern given again moves last; 32 at most. */
			for (k = 0; k < npats; k++)
				if (strlen(pats[k]) == n && !memcmp(pats[k], p, n))
					break;
			if (k < npats) {
				memmove(pats[k], pats[k + 1], (npats - k - 1) * sizeof(pats[0]));
				npats--;
			}
			if (npats == 32) {
				bad++;
			} else {
				memcpy(pats[npats], p, n);
				pats[npats++][n] = '\0';
				for (i = 0; i < NMODS; i++)
					if (glob(p, n, mods[i].name))
						want[i] = level;
			}
		}
		p = *end ? end + 1 : end;
	}
	got = pk__module_rules_apply(v);
	if (got != bad)
		FUZZ_FAIL("\"%s\": %d entries ignored, the model ignores %d", v, got, bad);
	for (i = 0; i < NMODS; i++) {
		level = pk_module_get_level(mods[i].name);
		if (level != want[i])
			FUZZ_FAIL("\"%s\": module %s at level %d, the model says %d", v,
				  mods[i].name, level, want[i]);
	}
	free(v);
	return 0;
}
