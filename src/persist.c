// SPDX-License-Identifier: MIT
/*
 * persist.c - the file-backed record store.  Not yet supported.
 */
#include <errno.h>

#include "internal.h"

int pk__persist_open(const struct pk_config *cfg, void **mem, size_t *size, int *fd)
{
	(void)cfg; (void)mem; (void)size; (void)fd;
	return -ENOSYS;
}

void pk__persist_close(void *mem, size_t size, int fd)
{
	(void)mem; (void)size; (void)fd;
}

int pk__persist_map_reader(const char *path, void **mem, size_t *size, bool *live)
{
	(void)path; (void)mem; (void)size; (void)live;
	return -ENOSYS;
}
