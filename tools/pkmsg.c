// SPDX-License-Identifier: MIT
/*
 * pkmsg - print or follow the records of a libprintk store file, as
 * dmesg(1) does for the kernel's log.  See docs/man/pkmsg.1.
 *
 * The store file is untrusted input: the library validates it, pkmsg
 * escapes control bytes in the text it prints for a terminal.
 *
 * Exit status: 0 success, 1 the file is missing, unreadable or not a
 * store, 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "format/format.h"
#include "store/store.h"	/* pk__mod_list_match() */
#include "printk/printk.h"
#include "printk/reader.h"
#include "store/ringbuf.h"

#define EXIT_NOSTORE	1
#define EXIT_USAGE	2

/* How long a dump waits for records in progress before it gives up. */
#define SETTLE_MS	2000

/* --field options one command takes. */
#define FIELD_FILTERS	16

struct opts {
	const char *path;
	unsigned fmt;		/* enum pk_format | PK_FMT_F_* */
	unsigned levels;	/* bit per level to print */
	bool follow, follow_new, clear, stats;
	bool have_since, have_tid, have_pid;
	uint64_t since;
	uint32_t tid, pid;
	const char *modules;	/* --module: comma-separated patterns, "-" for none */
	const char *fields[FIELD_FILTERS];	/* --field KEY=VALUE, all must match */
	unsigned nfields;
};

static void usage(FILE *f)
{
	fputs("Usage: pkmsg [options] [-F FILE]\n"
	      "Print the records of a libprintk store file (default: $PK_BUFFER).\n"
	      "\n"
	      "  -F, --file FILE       the store file\n"
	      "  -w, --follow          wait for new records\n"
	      "  -W, --follow-new      wait for and print only new records\n"
	      "  -l, --level LIST      only these levels: names or numbers, comma-separated;\n"
	      "                        N-M is a range, err+ adds the more urgent levels,\n"
	      "                        +err the less urgent ones\n"
	      "      --since-seq N     start at sequence number N\n"
	      "      --pid N           only records of process N\n"
	      "      --tid N           only records of thread N\n"
	      "      --module LIST     only records of these modules (comma-separated,\n"
	      "                        '*' and '?' patterns, '-' for records without one)\n"
	      "      --field KEY=VALUE only records with this field (exact match;\n"
	      "                        repeat it: records with all of them)\n"
	      "      --show-tid        print the thread id of each record\n"
	      "      --show-loc        print each record's call site (file:line func)\n"
	      "  -T, --ctime           print human-readable dates\n"
	      "  -d, --show-delta      print the time since the previous printed record\n"
	      "  -r, --raw             kmsg format: prio,seq,ts_usec,flags;text\n"
	      "  -J, --json            JSON Lines\n"
	      "      --syslog          <prio>[  sec.usec] text, as dmesg -F reads\n"
	      "      --stats           print the store's counters\n"
	      "  -C, --clear           clear: readers start after the records stored so far\n"
	      "  -h, --help            this text\n"
	      "\n"
	      "Long options are taken only as written in full.\n"
	      "Levels: emerg alert crit err warn notice info debug (0-7).\n"
	      "Exit status: 0 ok, 1 no such file or not a store, 2 bad usage.\n",
	      f);
}

/* Does @rec carry field "KEY=VALUE" @kv (checked by field_filter_ok())? */
static bool field_match(const struct pk_record *rec, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t klen = (size_t)(eq - kv), i;

	for (i = 0; rec->fields && i < rec->nfields; i++)
		if (strlen(rec->fields[i].key) == klen && !memcmp(rec->fields[i].key, kv, klen) &&
		    !strcmp(rec->fields[i].value, eq + 1))
			return true;
	return false;
}

/* A --field argument: KEY=VALUE with a key a record can carry (printk.h). */
static bool field_filter_ok(const char *kv)
{
	const char *eq = strchr(kv, '=');

	return eq && pk__field_key_ok(kv, (size_t)(eq - kv));
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "pkmsg: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'pkmsg --help'.\n");
	return EXIT_USAGE;
}

/*
 * getopt_long() takes any unambiguous prefix of a long option: "--since 160"
 * would be "--since-seq 160", and adding an option "--since" later would
 * silently change what such a command line means.  pkmsg takes long options
 * only as written in full.  @arg is the argv element getopt_long() just
 * matched to @opt; refused with a usage error naming both when it is not
 * "--" followed by the exact name (and "=VALUE" for an option with one).
 */
static bool exact_long_option(const char *arg, const struct option *opt)
{
	size_t n = strlen(opt->name);

	if (strncmp(arg, "--", 2) == 0 && strncmp(arg + 2, opt->name, n) == 0 &&
	    (arg[2 + n] == '\0' || (arg[2 + n] == '=' && opt->has_arg != no_argument)))
		return true;
	fprintf(stderr, "pkmsg: unrecognized option '%.*s': long options are not abbreviated "
		"(did you mean '--%s'?)\nTry 'pkmsg --help'.\n",
		(int)strcspn(arg, "="), arg, opt->name);
	return false;
}

/* A level name or digit 0-7 (pk__level_parse(), as PK_MODULES).  The level, or -1. */
static int one_level(const char *s, size_t n)
{
	return pk__level_parse(s, n, PK__LEVEL);
}

/* "err,warn", "0-3", "err+", "+warn".  Bit mask of levels, or 0. */
static unsigned parse_levels(const char *list)
{
	unsigned mask = 0;
	const char *p = list, *end, *dash;
	int a, b, l;

	do {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (end == p)
			return 0;	/* empty item */
		dash = memchr(p, '-', (size_t)(end - p));
		if (end > p && *p == '+') {
			l = one_level(p + 1, (size_t)(end - p - 1));
			a = l;
			b = 7;
		} else if (end > p && end[-1] == '+') {
			l = one_level(p, (size_t)(end - p - 1));
			a = 0;
			b = l;
		} else if (dash) {
			a = one_level(p, (size_t)(dash - p));
			b = one_level(dash + 1, (size_t)(end - dash - 1));
			l = a < 0 || b < 0 || a > b ? -1 : a;
		} else {
			l = a = b = one_level(p, (size_t)(end - p));
		}
		if (l < 0)
			return 0;
		for (l = a; l <= b; l++)
			mask |= 1u << l;
		p = end + 1;
	} while (*end);
	return mask;
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static const char *open_error(const char *path, int err)
{
	static char msg[160];
	uint32_t v[3];
	struct stat pre, st;
	int fd;

	switch (err) {
	case EINVAL:	return "not a libprintk store, or corrupt";
	case EPROTO:
		/*
		 * Name both versions: the header's third word is its version.
		 * Opened as the reader opens a store: nothing but a regular
		 * file (looked at first: opening a device is an act of its
		 * own), no symlink followed, and a FIFO swapped in meanwhile
		 * cannot make us wait.
		 */
		if (lstat(path, &pre) < 0 || !S_ISREG(pre.st_mode))
			return pk_strerror(-EPROTO);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_dev == pre.st_dev && st.st_ino == pre.st_ino &&
		    pread(fd, v, sizeof(v), 0) == (ssize_t)sizeof(v)) {
			close(fd);
			snprintf(msg, sizeof(msg),
				 "%s: version %u, this pkmsg reads version %u%s", pk_strerror(-EPROTO),
				 v[2], PK_RING_VERSION,
				 v[2] < PK_RING_VERSION ? " (read it with the pkmsg that wrote it)" : "");
			return msg;
		}
		if (fd >= 0)
			close(fd);
		return pk_strerror(-EPROTO);
	default:	return strerror(err);
	}
}

static void print_stats(const char *path, const struct pk_store_info *in)
{
	printf("file:             %s\n", path);
	printf("format version:   %u\n", PK_RING_VERSION);
	printf("live:             %s\n", in->live ? "yes" : "no");
	printf("generation:       %llu\n", (unsigned long long)in->generation);
	printf("last opener pid:  %d\n", (int)in->creator_pid);
	printf("first seq:        %llu\n", (unsigned long long)in->first_seq);
	printf("next seq:         %llu\n", (unsigned long long)in->next_seq);
	printf("oldest seq:       %llu\n", (unsigned long long)in->oldest_seq);
	printf("clear seq:        %llu\n", (unsigned long long)in->clear_seq);
	printf("stored:           %llu\n", (unsigned long long)(in->next_seq - in->first_seq));
	printf("overwritten:      %llu\n", (unsigned long long)(in->oldest_seq - in->first_seq));
	printf("lost:             %llu\n", (unsigned long long)in->lost);
	printf("reserve failed:   %llu\n", (unsigned long long)in->reserve_failed);
	printf("truncated:        %llu\n", (unsigned long long)in->truncated);
	printf("refused:          %llu\n", (unsigned long long)in->refused);
	printf("data ring bytes:  %llu\n", (unsigned long long)in->data_size);
	printf("descriptors:      %llu\n", (unsigned long long)in->desc_count);
}

/*
 * A follower registers in the store header's waiter count while it sleeps.
 * Interrupted (^C), it must leave through pk_reader_wait's exit path, which
 * takes itself off the count; so these signals only set a flag and break
 * the sleep (no SA_RESTART), and are re-raised once the reader is closed.
 * (Killed outright, it leaves the count raised; its lease, which writers
 * also check, runs out within a second, so they stop waking nobody.)
 */
static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static void catch_stop_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/*
 * The store is mapped: if its file shrinks under us (truncated by another
 * process, or an I/O error on its disk), touching the lost pages raises
 * SIGBUS.  That is bad input, not a bug of ours, so it ends in a clear
 * message and exit status 1.  The reader only copies records out of the
 * mapping into private memory before anything is printed, so jumping out
 * of it leaves stdio and our state intact; the reader is abandoned.
 */
static sigjmp_buf bus_jump;
static off_t size_at_open;	/* of the store file, when it was opened */

static void on_bus(int sig)
{
	(void)sig;
	siglongjmp(bus_jump, 1);
}

static void catch_bus_errors(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_bus;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
}

static int bus_error(const char *path)
{
	struct stat st;

	fflush(stdout);
	if (stat(path, &st) == 0 && st.st_size < size_at_open)
		fprintf(stderr, "pkmsg: %s: the store file was truncated while being read "
			"(%lld bytes, was %lld)\n", path, (long long)st.st_size,
			(long long)size_at_open);
	else
		fprintf(stderr, "pkmsg: %s: bus error reading the store file (I/O error?)\n",
			path);
	return EXIT_NOSTORE;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct pk_reader *open_store(const struct opts *o)
{
	struct pk_reader *r;

	if (o->clear)
		return pk_reader_open_file_flags(o->path, PK_READER_WRITABLE);
	if (o->follow) {
		/*
		 * Writable lets the writers wake us; without permission, or
		 * through a symlink (never followed into writing: ELOOP), poll.
		 */
		r = pk_reader_open_file_flags(o->path, PK_READER_WRITABLE);
		if (r || (errno != EACCES && errno != EPERM && errno != EROFS && errno != ELOOP))
			return r;
	}
	return pk_reader_open_file(o->path);
}

static int run_store(const struct opts *o)
{
	static char line[PK_FORMAT_MAX];
	struct pk_format_opts fo = { .fmt = o->fmt };
	struct pk_store_info info;
	struct pk_record rec;
	struct pk_reader *r;
	uint64_t expect, dump_end, waited_since = 0;
	struct stat st;
	size_t n;
	unsigned i;
	int ret;

	r = open_store(o);
	if (!r) {
		fprintf(stderr, "pkmsg: %s: %s\n", o->path, open_error(o->path, errno));
		return EXIT_NOSTORE;
	}
	if (stat(o->path, &st) == 0)
		size_at_open = st.st_size;
	catch_bus_errors();
	pk_reader_info(r, &info);
	if (o->stats) {
		print_stats(o->path, &info);
		pk_reader_close(r);
		return 0;
	}
	if (o->clear) {
		ret = pk_reader_clear(r);
		pk_reader_close(r);
		if (ret < 0) {
			fprintf(stderr, "pkmsg: %s: cannot clear: %s\n", o->path, strerror(-ret));
			return EXIT_NOSTORE;
		}
		return 0;
	}
	fo.realtime_zero_ns = info.realtime_zero_ns;
	if (o->follow_new)
		pk_reader_seek(r, info.next_seq);
	else if (o->have_since)
		pk_reader_seek(r, o->since);
	expect = pk_reader_tell(r);
	dump_end = info.next_seq;
	if (o->follow)
		catch_stop_signals();

	for (;;) {
		ret = pk_reader_next(r, &rec);
		if (ret < 0) {
			fprintf(stderr, "pkmsg: %s: %s\n", o->path, strerror(-ret));
			pk_reader_close(r);
			return EXIT_NOSTORE;
		}
		if (ret > 0) {
			waited_since = 0;
			if (rec.seq > expect) {
				n = pk__format_dropped(line, sizeof(line), rec.seq - expect, o->fmt);
				fwrite(line, 1, n, stdout);
			}
			expect = rec.seq + 1;
			if (!(o->levels & (1u << (rec.level & 7))))
				continue;
			if (o->have_tid && rec.tid != o->tid)
				continue;
			if (o->have_pid && rec.pid != o->pid)
				continue;
			if (o->modules && !pk__mod_list_match(o->modules, rec.module))
				continue;
			for (i = 0; i < o->nfields && field_match(&rec, o->fields[i]); i++)
				;
			if (i < o->nfields)
				continue;
			n = pk__format_record(line, sizeof(line), &rec, &fo);
			fwrite(line, 1, n, stdout);
			fo.prev_ts_ns = rec.ts_ns;
			continue;
		}
		if (fflush(stdout) == EOF)
			break;
		if (o->follow) {
			if (stop_sig)
				break;
			ret = pk_reader_wait(r, 1000);
			if (stop_sig)
				break;
			if (ret == -EFAULT)	/* the futex word's page is gone */
				return bus_error(o->path);
			if (ret < 0) {
				fprintf(stderr, "pkmsg: %s: %s\n", o->path, strerror(-ret));
				pk_reader_close(r);
				return EXIT_NOSTORE;
			}
			/* A new writer may have reopened the store. */
			pk_reader_info(r, &info);
			fo.realtime_zero_ns = info.realtime_zero_ns;
			continue;
		}
		/*
		 * A dump of a live store: records stored before we started may
		 * still be in progress.  Wait for them, within a bound (the
		 * reader skips a record abandoned for a second by itself).
		 */
		if (pk_reader_tell(r) >= dump_end)
			break;
		pk_reader_info(r, &info);
		if (!info.live)
			break;
		if (!waited_since)
			waited_since = mono_ms();
		else if (mono_ms() - waited_since > SETTLE_MS)
			break;
		pk_reader_wait(r, 50);
	}
	pk_reader_close(r);
	if (stop_sig) {
		fflush(stdout);
		signal(stop_sig, SIG_DFL);
		raise(stop_sig);
	}
	if (ferror(stdout)) {
		fprintf(stderr, "pkmsg: write error: %s\n", strerror(errno));
		return EXIT_NOSTORE;
	}
	return 0;
}

static int run(const struct opts *o)
{
	/* No locals here: they would be unreliable after the jump. */
	if (sigsetjmp(bus_jump, 1))
		return bus_error(o->path);
	return run_store(o);
}

int main(int argc, char **argv)
{
	enum { OPT_SINCE = 256, OPT_TID, OPT_PID, OPT_SYSLOG, OPT_STATS, OPT_SHOW_TID, OPT_MODULE,
	       OPT_FIELD, OPT_SHOW_LOC };
	static const struct option lopts[] = {
		{ "file", required_argument, NULL, 'F' },
		{ "follow", no_argument, NULL, 'w' },
		{ "follow-new", no_argument, NULL, 'W' },
		{ "level", required_argument, NULL, 'l' },
		{ "since-seq", required_argument, NULL, OPT_SINCE },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "module", required_argument, NULL, OPT_MODULE },
		{ "field", required_argument, NULL, OPT_FIELD },
		{ "show-tid", no_argument, NULL, OPT_SHOW_TID },
		{ "show-loc", no_argument, NULL, OPT_SHOW_LOC },
		{ "ctime", no_argument, NULL, 'T' },
		{ "show-delta", no_argument, NULL, 'd' },
		{ "raw", no_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'J' },
		{ "syslog", no_argument, NULL, OPT_SYSLOG },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "clear", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .fmt = PK_FMT_HUMAN, .levels = 0xff };
	unsigned kind = PK_FMT_HUMAN, flags = 0;
	int c, kinds = 0, li = -1;
	uint64_t v;

	while ((c = getopt_long(argc, argv, "F:wWl:TdrJCh", lopts, &li)) != -1) {
		if (li >= 0) {
			/*
			 * The option's own element is the last one scanned, or
			 * the one before when its argument was the next element.
			 */
			const char *arg = argv[optind - 1];

			if (optarg == arg && optind >= 2)
				arg = argv[optind - 2];
			if (!exact_long_option(arg, &lopts[li]))
				return EXIT_USAGE;
			li = -1;
		}
		switch (c) {
		case 'F': o.path = optarg; break;
		case 'w': o.follow = true; break;
		case 'W': o.follow = o.follow_new = true; break;
		case 'l':
			o.levels = parse_levels(optarg);
			if (!o.levels)
				return bad_usage("bad level list '%s': expected levels "
						 PK__LEVEL_WANT ", N-M, LEVEL+ or +LEVEL", optarg);
			break;
		case OPT_SINCE:
			if (!parse_u64(optarg, UINT64_MAX, &o.since))
				return bad_usage("bad sequence number '%s'", optarg);
			o.have_since = true;
			break;
		case OPT_TID:
			if (!parse_u64(optarg, UINT32_MAX, &v))
				return bad_usage("bad thread id '%s'", optarg);
			o.tid = (uint32_t)v;
			o.have_tid = true;
			break;
		case OPT_PID:
			if (!parse_u64(optarg, UINT32_MAX, &v))
				return bad_usage("bad process id '%s'", optarg);
			o.pid = (uint32_t)v;
			o.have_pid = true;
			break;
		case OPT_SHOW_TID: flags |= PK_FMT_F_TID; break;
		case OPT_SHOW_LOC: flags |= PK_FMT_F_LOC; break;
		case OPT_MODULE:
			if (!pk__mod_list_valid(optarg))
				return bad_usage("bad module list '%s'", optarg);
			o.modules = optarg;
			break;
		case OPT_FIELD:
			if (!field_filter_ok(optarg))
				return bad_usage("bad field '%s': give KEY=VALUE, KEY of A-Z, 0-9"
						 " and _ (a letter first, at most 64)", optarg);
			if (o.nfields == FIELD_FILTERS)
				return bad_usage("more than 16 --field options at '%s'", optarg);
			o.fields[o.nfields++] = optarg;
			break;
		case 'T': flags |= PK_FMT_F_REALTIME; break;
		case 'd': flags |= PK_FMT_F_DELTA; break;
		case 'r': kind = PK_FMT_KMSG; kinds++; break;
		case 'J': kind = PK_FMT_JSON; kinds++; break;
		case OPT_SYSLOG: kind = PK_FMT_SYSLOG; kinds++; break;
		case OPT_STATS: o.stats = true; break;
		case 'C': o.clear = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	if (kinds > 1)
		return bad_usage("%s", "choose one of --raw, --json and --syslog");
	if (o.clear + o.stats + o.follow > 1)
		return bad_usage("%s", "--clear, --stats and --follow exclude each other");
	if (!o.path) {
		o.path = secure_getenv("PK_BUFFER");	/* a set-id pkmsg trusts no caller's path */
		if (!o.path || !*o.path)
			return bad_usage("%s", "no store file: give -F FILE or set PK_BUFFER");
	}
	/* Text from an untrusted file goes to a terminal: escape controls. */
	o.fmt = kind | flags | PK_FMT_F_ESCAPE;
	return run(&o);
}
