/* SPDX-License-Identifier: MIT */
/* strip_tu.c, built with PK_MAX_LEVEL at PK_WARNING, called by test_strip.c. */
#ifndef PK_STRIP_TU_H
#define PK_STRIP_TU_H

/* What the calls of strip_tu.c evaluated: their arguments count here. */
struct strip_counts {
	int gone;	/* arguments of stripped calls: must stay 0 */
	int kept;	/* arguments of kept calls */
	int sum;	/* return values of the stripped calls that return one */
};

/* Kept calls strip_calls() makes, each printing one "strip-kept" line. */
#define STRIP_KEPT_LINES	16
/* ... of which arguments counted in strip_counts.kept. */
#define STRIP_KEPT_ARGS		16

/* Every stripped and kept form, once (call it once: the _once forms). */
void strip_calls(struct strip_counts *c);
/* Stripped calls as the branches of if/else and loop bodies. */
void strip_in_statements(struct strip_counts *c, int x);
/* The forms PK_MAX_LEVEL leaves alone whatever their level. */
int strip_never_stripped(int *count);

#endif
