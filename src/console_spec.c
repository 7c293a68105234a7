// SPDX-License-Identifier: MIT
/*
 * console_spec.c - the PK_CONSOLE grammar: a comma-separated list of
 * console entries, each NAME[@LEVEL][%BYTES_PER_SEC], turned into drivers
 * and registered.  Apart from the registry, which knows no syntax.
 *
 *   stderr | stdout | fd:N | file:PATH | syslog | syslog:SOCKET |
 *   net:HOST:PORT | net:[IPV6]:PORT
 *
 * A bad entry is reported on stderr, naming it, and skipped; the others
 * still count.  At init (pk__console_register_env), a PK_CONSOLE none of
 * whose entries could be used falls back to stderr, saying so once: a typo
 * must not leave the program with no output at all.  An empty PK_CONSOLE
 * (no entries) means no console, as asked.
 *
 * Numbers are overflow-checked: fd:N up to 2^20, a port 1-65535, a rate
 * 1-10^9 bytes/s; a level is a digit 0-8 or a whole level name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "consoles.h"
#include "internal.h"

/* HOST:PORT or [IPV6]:PORT */
static int net_entry(char *s, struct pk_console_driver *drv)
{
	char *colon, *end, *host = s;
	unsigned long port;

	if (*s == '[') {
		end = strchr(s, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		*end = '\0';
		host = s + 1;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		*colon = '\0';
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || !port || port > 65535 || !*host)
		return -EINVAL;
	return pk_console_net_make(host, (unsigned)port, drv);
}

static int make_entry(const char *name, size_t len, struct pk_console_driver *drv)
{
	char tmp[512];
	char *end;
	long fd;

	if (len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, name, len);
	tmp[len] = '\0';
	if (!strcmp(tmp, "stderr"))
		return pk_console_fd_make(STDERR_FILENO, drv);
	if (!strcmp(tmp, "stdout"))
		return pk_console_fd_make(STDOUT_FILENO, drv);
	if (!strncmp(tmp, "fd:", 3)) {
		errno = 0;
		fd = strtol(tmp + 3, &end, 10);
		if (errno || end == tmp + 3 || *end || fd < 0 || fd > 1 << 20)
			return -EINVAL;
		if (fcntl((int)fd, F_GETFD) < 0)
			return -EBADF;
		return pk_console_fd_make((int)fd, drv);
	}
	if (!strncmp(tmp, "file:", 5) && tmp[5])
		return pk_console_file_make(tmp + 5, 0, drv);
	if (!strcmp(tmp, "syslog"))
		return pk_console_syslog_make(NULL, NULL, drv);
	if (!strncmp(tmp, "syslog:", 7) && tmp[7])
		return pk_console_syslog_make(tmp + 7, NULL, drv);
	if (!strncmp(tmp, "net:", 4))
		return net_entry(tmp + 4, drv);
	return -EINVAL;
}

/* Register @spec's entries; *@bad counts those refused.  Return: registered. */
static int register_spec(const char *spec, int *bad)
{
	const char *p = spec, *e, *at, *pct, *name_end;
	struct pk_console_driver drv, thr;
	unsigned long bps;
	int level, n = 0, ret;
	char tmp[32];

	*bad = 0;
	for (; *p; p = *e ? e + 1 : e) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		if (e == p)
			continue;
		level = -1;
		bps = 0;
		name_end = e;
		pct = memrchr(p, '%', (size_t)(e - p));
		at = memrchr(p, '@', (size_t)(e - p));
		ret = 0;
		if (pct && (!at || pct > at)) {
			errno = 0;
			bps = strtoul(pct + 1, (char **)&name_end, 10);
			/* Out of range would wrap (or saturate) into no throttle at all. */
			ret = name_end != e || !bps || errno == ERANGE || pct[1] == '-' ||
					      bps > 1000000000ul ? -EINVAL : 0;
			name_end = pct;
			at = at && at < pct ? at : NULL;
		}
		if (!ret && at) {
			size_t l = (size_t)(name_end - at - 1);

			if (l >= sizeof(tmp))
				ret = -EINVAL;
			else {
				memcpy(tmp, at + 1, l);
				tmp[l] = '\0';
				ret = pk__parse_level(tmp, &level);
			}
			name_end = at;
		}
		if (!ret)
			ret = make_entry(p, (size_t)(name_end - p), &drv);
		if (!ret && bps) {
			ret = pk_console_throttle_make(&drv, bps, &thr);
			if (!ret)
				drv = thr;
		}
		if (!ret) {
			struct pk_console *c = pk__con_register(drv.ops, drv.ctx, level, drv.format);

			if (!c) {
				ret = -errno;
				if (drv.ops->release)
					drv.ops->release(drv.ctx);
			}
		}
		if (ret < 0) {
			fprintf(stderr, "libprintk: PK_CONSOLE: ignoring \"%.*s\": %s\n", (int)(e - p), p,
				strerror(-ret));
			(*bad)++;
			continue;
		}
		n++;
	}
	return n;
}

int pk_console_register_spec(const char *spec)
{
	int bad;

	if (!spec)
		return -EINVAL;
	return register_spec(spec, &bad);
}

int pk__console_register_env(const char *spec)
{
	struct pk_console_driver drv;
	int n, bad;

	if (!spec)
		return -EINVAL;
	n = register_spec(spec, &bad);
	if (n > 0 || !bad)
		return n;
	fprintf(stderr, "libprintk: PK_CONSOLE=\"%s\" has no usable console; printing to stderr\n",
		spec);
	if (pk_console_fd_make(STDERR_FILENO, &drv) < 0)
		return 0;
	if (!pk__con_register(drv.ops, drv.ctx, -1, drv.format)) {
		if (drv.ops->release)
			drv.ops->release(drv.ctx);
		return 0;
	}
	return 1;
}

