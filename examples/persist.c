// SPDX-License-Identifier: MIT
/*
 * persist.c - a persistent record store, followed live with pkmsg -w and
 * read after the process is gone with pkmsg.
 *
 *   ./printk_persist STORE < jobs.txt
 *   pkmsg -w -F STORE          (in another terminal: follow it live)
 *   pkmsg -F STORE             (later: everything still in the store)
 *
 * A batch worker reads one job per line from standard input and logs what
 * it does.  With buffer_path set (or PK_BUFFER=STORE in the environment)
 * the record store lives in a shared mapping of STORE: every committed
 * record is in the file at once, so pkmsg can follow the log while the
 * program runs (it sleeps until a record is committed, no polling), and a
 * process killed at any moment, SIGKILL included, leaves every committed
 * record readable.  The worker prints nothing to a console: the store is
 * the log.
 *
 * The file is created mode 0600 (a store is private unless you loosen its
 * mode yourself).  PK_CFG_BUFFER_CLEAR starts afresh; without it a new run
 * appends to the records a previous run left, after a checked recovery.
 */
#include <printk/printk.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct pk_config cfg;
	char job[256];
	int n = 0, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s STORE < jobs\n", argv[0]);
		return 2;
	}
	pk_config_init(&cfg);
	cfg.buffer_path = argv[1];
	cfg.buffer_size = 256 << 10;		/* 256 KiB file */
	cfg.flags |= PK_CFG_BUFFER_CLEAR;	/* a new log for each run */
	cfg.flags |= PK_CFG_NO_CONSOLE;		/* the store is the log */
	ret = pk_init(&cfg);
	if (ret < 0) {
		/* The library still works, with records in memory only. */
		fprintf(stderr, "%s: %s\n", argv[1], pk_strerror(ret));
		return 1;
	}

	pk_notice("batch worker: store %s ready\n", argv[1]);
	while (fgets(job, sizeof(job), stdin)) {
		job[strcspn(job, "\n")] = '\0';
		if (!job[0])
			continue;
		n++;
		pk_info("job %d: %s: started\n", n, job);
		if (strstr(job, "fail"))
			pk_err("job %d: %s: failed\n", n, job);
		else
			pk_info("job %d: %s: done\n", n, job);
	}
	pk_notice("batch worker: %d jobs, input closed, exiting\n", n);
	pk_shutdown();
	return 0;
}
