// SPDX-License-Identifier: MIT
/*
 * server.c - a threaded server's logging: worker threads take requests off
 * a queue and log each one at the level its outcome deserves.
 *
 *   ./printk_server [WORKERS [REQUESTS]]
 *   PK_MODE=thread ./printk_server 8 1000     (printer thread per console)
 *   PK_CONSOLE=file:/tmp/server.log ./printk_server
 *
 * Unless PK_CONSOLE says otherwise, the log goes to stdout with a syslog
 * priority in front of every line ("<14>[    1.234567] text": facility
 * user (1) * 8 + level info (6)), which is what a service manager reads
 * from a service's output (systemd's journal files <11> as err, <12> as
 * warning, <14> as info).  Debug lines are stored but
 * not printed: the console prints levels below its loglevel, 7 by default
 * (PK_LOGLEVEL=8 prints them too).
 *
 * No thread waits for the console while another prints: in the default
 * mode a worker that finds the console busy hands its records to the
 * thread printing, or becomes the next printer; pk_flush() at the end
 * waits until every console has caught up.
 */
#include <printk/console.h>
#include <printk/printk.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The request queue: main() "accepts" requests, workers take them. */
struct queue {
	pthread_mutex_t lock;
	pthread_cond_t more;
	int next;		/* next request id to hand out, from 1 */
	int last;		/* last request id */
	bool closed;		/* no more requests will come */
};

/* What the workers did, added up under the queue's lock. */
struct totals {
	int ok, not_found, failed;
};

static struct queue q = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.more = PTHREAD_COND_INITIALIZER,
	.next = 1,
};
static struct totals totals;

/* Take a request id, or 0 once the queue is closed and empty. */
static int queue_take(void)
{
	int id = 0;

	pthread_mutex_lock(&q.lock);
	while (q.next > q.last && !q.closed)
		pthread_cond_wait(&q.more, &q.lock);
	if (q.next <= q.last)
		id = q.next++;
	pthread_mutex_unlock(&q.lock);
	return id;
}

static long elapsed_us(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000000L + (t1.tv_nsec - t0->tv_nsec) / 1000;
}

/*
 * "Handle" request @id: the outcome depends on the id alone, so that a
 * test can tell which level each line must have.
 */
static int handle(int w, int id)
{
	unsigned long etag = 5381;
	int i;

	for (i = 0; i < 2000; i++)	/* a little work */
		etag = etag * 33 + (unsigned long)(i ^ id);
	pk_debug("worker %d: req %d: etag %08lx\n", w, id, etag & 0xffffffffu);
	if (id % 13 == 0)
		return 500;
	if (id % 5 == 0)
		return 404;
	return 200;
}

static void *worker(void *arg)
{
	int w = (int)(long)arg, id, status;
	struct totals mine = { 0 };
	struct timespec t0;

	pk_info("worker %d: started\n", w);
	while ((id = queue_take()) != 0) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		pk_debug("worker %d: req %d: cache miss for /item/%d\n", w, id, id);
		status = handle(w, id);
		/* One line per request, its level chosen by the outcome. */
		switch (status) {
		case 200:
			pk_info("worker %d: req %d GET /item/%d 200 %ld us\n", w, id, id, elapsed_us(&t0));
			mine.ok++;
			break;
		case 404:
			pk_warn("worker %d: req %d GET /item/%d 404 not found\n", w, id, id);
			mine.not_found++;
			break;
		default:
			pk_err("worker %d: req %d GET /item/%d 500 backend timed out\n", w, id, id);
			mine.failed++;
			break;
		}
	}
	pthread_mutex_lock(&q.lock);
	totals.ok += mine.ok;
	totals.not_found += mine.not_found;
	totals.failed += mine.failed;
	pthread_mutex_unlock(&q.lock);
	pk_info("worker %d: stopped after %d requests\n", w, mine.ok + mine.not_found + mine.failed);
	return NULL;
}

/* stdout with "<PRI>" prefixes, unless PK_CONSOLE chose otherwise. */
static int log_to_stdout(void)
{
	struct pk_console_driver drv;
	int ret;

	ret = pk_console_fd_make(1, &drv);
	if (ret < 0)
		return ret;
	drv.format = PK_FMT_SYSLOG;
	/* loglevel -1: follow the global console_loglevel (PK_LOGLEVEL). */
	return pk_console_register_driver(&drv, -1) ? 0 : -1;
}

int main(int argc, char **argv)
{
	int workers = argc > 1 ? atoi(argv[1]) : 4;
	int requests = argc > 2 ? atoi(argv[2]) : 200;
	struct pk_config cfg;
	pthread_t *t;
	int i, ret;

	if (workers < 1 || workers > 256 || requests < 0) {
		fprintf(stderr, "usage: %s [WORKERS (1-256) [REQUESTS]]\n", argv[0]);
		return 2;
	}
	pk_config_init(&cfg);		/* defaults, then PK_* from the environment */
	if (!getenv("PK_CONSOLE"))
		cfg.flags |= PK_CFG_NO_CONSOLE;	/* we register stdout below */
	ret = pk_init(&cfg);
	if (ret < 0) {
		fprintf(stderr, "pk_init: %s\n", pk_strerror(ret));
		return 1;
	}
	if (!getenv("PK_CONSOLE") && log_to_stdout() < 0) {
		perror("stdout console");
		return 1;
	}

	t = calloc((size_t)workers, sizeof(*t));
	if (!t)
		return 1;
	pk_notice("server: %d workers, %d requests\n", workers, requests);
	for (i = 0; i < workers; i++) {
		if (pthread_create(&t[i], NULL, worker, (void *)(long)i) != 0) {
			pk_crit("server: cannot start worker %d\n", i);
			return 1;
		}
	}

	/* "Accept" the requests in bursts, as a listener would. */
	for (i = 0; i < requests; i += 10) {
		pthread_mutex_lock(&q.lock);
		q.last = i + 10 < requests ? i + 10 : requests;
		pthread_cond_broadcast(&q.more);
		pthread_mutex_unlock(&q.lock);
	}
	pthread_mutex_lock(&q.lock);
	q.closed = true;
	pthread_cond_broadcast(&q.more);
	pthread_mutex_unlock(&q.lock);
	for (i = 0; i < workers; i++)
		pthread_join(t[i], NULL);
	free(t);

	pk_notice("server: %d requests served: %d ok, %d not found, %d failed\n",
		  totals.ok + totals.not_found + totals.failed, totals.ok, totals.not_found,
		  totals.failed);
	/*
	 * Everything is stored; wait (at most 5 s) until the consoles have
	 * printed it.  Exit would flush too, but a server shutting down
	 * wants to know.
	 */
	ret = pk_flush(5000);
	if (ret < 0) {
		fprintf(stderr, "pk_flush: %s\n", pk_strerror(ret));
		return 1;
	}
	return 0;
}
