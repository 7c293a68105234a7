// SPDX-License-Identifier: MIT
/*
 * util.c - clocks, the run's private directory, line counting, units.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static char tmpdir[256];

uint64_t pkb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void pkb_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

const char *pkb_tmpdir(void)
{
	const char *base;

	if (tmpdir[0])
		return tmpdir;
	base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	snprintf(tmpdir, sizeof(tmpdir), "%s/pkbench.XXXXXX", base);
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "pkbench: mkdtemp %s: %s\n", tmpdir, strerror(errno));
		tmpdir[0] = '\0';
	}
	return tmpdir;
}

void pkb_tmpdir_remove(void)
{
	DIR *d;
	struct dirent *e;
	char path[512];

	if (!tmpdir[0])
		return;
	d = opendir(tmpdir);
	if (d) {
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", tmpdir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(tmpdir);
	tmpdir[0] = '\0';
}

long pkb_count_lines(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	long n = 0;

	if (!f)
		return -1;
	while (getline(&line, &cap, f) >= 0)
		if (!needle || strstr(line, needle))
			n++;
	free(line);
	fclose(f);
	return n;
}

void pkb_scan_file(const char *path, const char *mark, struct pkb_file_scan *out)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *p;
	size_t cap = 0;
	unsigned long n;

	memset(out, 0, sizeof(*out));
	if (!f)
		return;
	while (getline(&line, &cap, f) >= 0) {
		if (strstr(line, mark)) {
			out->data_lines++;
		} else if ((p = strstr(line, "** ")) && strstr(p, "printk messages dropped") &&
			   sscanf(p, "** %lu", &n) == 1) {
			out->notice_lines++;
			out->notice_sum += n;
		} else {
			out->other_lines++;
		}
	}
	free(line);
	fclose(f);
}

const char *pkb_fmt_ns(char *buf, size_t n, uint64_t ns)
{
	double v = (double)ns;

	if (ns < 1000)
		snprintf(buf, n, "%luns", (unsigned long)ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.3gus", v / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.3gms", v / 1e6);
	else
		snprintf(buf, n, "%.3gs", v / 1e9);
	return buf;
}
