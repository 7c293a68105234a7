// SPDX-License-Identifier: MIT
/*
 * docs_dyndbg - run by docs_check.sh on each PK_DYNDBG example of the docs,
 * as a user who pastes one would: the program registers its call sites
 * before main(), which applies PK_DYNDBG and names each query it refuses
 * on stderr.
 *
 *   docs_dyndbg            register, and nothing else
 *   docs_dyndbg QUERY      also run QUERY with pk_dyndbg_exec(): print
 *                          "matched N" (sites), or the reason and exit 1
 *
 * Its sites are those of the examples (pk_dyndbg(3)): module netio, a
 * function parse_header.
 */
#define PK_MODNAME "netio"
#include <stdio.h>
#include <string.h>

#include "printk/dyndbg.h"
#include "printk/printk.h"

static int parse_header(const char *p)
{
	pk_dyndbg("header %s\n", p);
	return (int)strlen(p);
}

int main(int argc, char **argv)
{
	char err[512];
	int ret;

	if (argc > 1) {
		ret = pk_dyndbg_exec(argv[1], err, sizeof(err));
		if (ret < 0) {
			printf("refused: %s\n", err);
			return 1;
		}
		printf("matched %d\n", ret);
	}
	return parse_header("") == 0 ? 0 : 1;
}
