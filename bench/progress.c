// SPDX-License-Identifier: MIT
/*
 * progress.c - one progress line on stderr, rewritten in place with \r.
 * Nothing is written unless stderr is a terminal, so logs and pipes stay
 * clean.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "bench.h"

static int shown;

static int enabled(void)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	return tty;
}

void pkb_progress(const char *fmt, ...)
{
	va_list ap;

	if (!enabled())
		return;
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	shown = 1;
}

void pkb_progress_clear(void)
{
	if (!enabled() || !shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	shown = 0;
}
