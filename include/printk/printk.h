/* SPDX-License-Identifier: MIT */
/*
 * libprintk - kernel-grade printk() for user space.
 *
 * One logging call, pk_printk(), that may be used from any thread, from a
 * signal handler and with the caller's own locks held.  Records go into a
 * lockless record store first; a flush mode then decides which caller (or
 * which printer thread) writes them to the consoles.
 *
 * Synchronization table (which calls may run concurrently without outside
 * locking):
 *
 *   pk_printk / pk_vprintk / pk_cont     any thread, signal handlers, all at once
 *   pk_flush                             any thread (not from a signal handler)
 *   pk_emergency_enter / _exit           any thread, nests per thread
 *   pk_panic                             any thread or signal handler
 *   pk_init / pk_shutdown                not concurrently with each other;
 *                                        pk_printk may run concurrently
 *                                        with pk_init
 *   pk_set_loglevel, pk_console_find     any thread
 *   pk_stats_get                         any thread
 */
#ifndef PRINTK_PRINTK_H
#define PRINTK_PRINTK_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Building libprintk: what this header declares is its exported API. */
#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#if defined(__GNUC__)
#define PK__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PK__PRINTF(f, a)
#endif

/* Does not return, in C11 and in C++11 and later. */
#if defined(__cplusplus)
#define PK__NORETURN [[noreturn]]
#else
#define PK__NORETURN _Noreturn
#endif

/** Message levels, as in the kernel and syslog(3). */
enum pk_level {
	PK_EMERG,	/* system is unusable */
	PK_ALERT,	/* action must be taken immediately */
	PK_CRIT,	/* critical conditions */
	PK_ERR,		/* error conditions */
	PK_WARNING,	/* warning conditions */
	PK_NOTICE,	/* normal but significant condition */
	PK_INFO,	/* informational */
	PK_DEBUG,	/* debug-level messages */
};

/* Pseudo levels for pk_printk()'s level argument. */
#define PK_LEVEL_DEFAULT	(-1)	/* the configured default message level */
#define PK_LEVEL_CONT		(-2)	/* continue this thread's open record */
/*
 * PK_LEVEL_DEFAULT, and the format is a kernel format: %p takes the
 * kernel's pointer extensions (%pS, %ph, %pI4, ...: see printk/kernel.h),
 * as PK_KFMT at its start does.  printk() of <printk/kernel.h> uses it.
 */
#define PK_LEVEL_KERNEL		(-3)

/*
 * Kernel-style level prefixes inside the format string are accepted too:
 * pk_printk(PK_LEVEL_DEFAULT, PK_SOH "3" "disk on fire\n").
 */
#define PK_SOH		"\001"
#define PK_KERN_ERR	PK_SOH "3"
#define PK_KERN_CONT	PK_SOH "c"
/*
 * A kernel format: with PK_KFMT among the prefixes at its start, %p takes
 * the kernel's pointer extensions (printk/kernel.h).  Without it, %p is
 * the C library's.
 */
#define PK_KFMT		PK_SOH "k"

/** Flush modes: who writes stored records to the consoles. */
enum pk_mode {
	PK_MODE_HANDOFF,	/* console owner/waiter handoff (Linux 4.16); default */
	PK_MODE_LEGACY,		/* pre-4.16: the lock holder flushes everything */
	PK_MODE_THREAD,		/* printer thread per console, direct in emergencies */
};

/* Longest text one record carries; longer text is truncated and flagged. */
#define PK_RECORD_MAX	1024

/* pk_config.flags */
#define PK_CFG_NO_CONSOLE	0x01u	/* register no console from PK_CONSOLE/default */
#define PK_CFG_NO_ATEXIT	0x02u	/* do not flush from an atexit() handler */
#define PK_CFG_CRASH_HANDLER	0x04u	/* install the crash handler at init */
#define PK_CFG_BUFFER_CLEAR	0x08u	/* persistent store: start afresh */
#define PK_CFG_EAGER		0x10u	/* format every record at the call (no deferring) */
/*
 * Callers count themselves in the store gate's shared counters and
 * membarrier(2) is never called (PK_GATE=counters): for a program that
 * installs a seccomp filter refusing it.  Takes full effect in the first
 * initialisation only; given later, new callers use the counters but
 * waiters (a store switch, a panic) still call membarrier(2).
 */
#define PK_CFG_GATE_COUNTERS	0x20u
/*
 * Records keep no call site (printk.h, SOURCE LOCATIONS; PK_SRCLOC=0):
 * storing it costs some 20 cycles a call (10%, measured with a console
 * that prints nothing) and 6 bytes plus the names in each record.
 */
#define PK_CFG_NO_SRCLOC	0x40u

/*
 * The configuration pk_init() takes.  ABI: like every public struct a
 * caller allocates, it ends in reserved space that must be zero, so that
 * later versions can add fields without changing its size.  Fill it with
 * pk_config_init() (which zeroes all of it first) or a designated
 * initializer (struct pk_config cfg = { .buffer_size = ..., ... }, which
 * zeroes what it does not name), never field by field on the stack.
 *
 * Zero is the default in every field, so struct pk_config cfg = { 0 }
 * is the defaults pk_config_init() starts from (without the environment:
 * pk_init() reads no PK_* variable for a configuration it is given;
 * start from pk_config_init() to let the user's variables apply).  Where
 * 0 is a value of its own, PK_CFG_ZERO asks for it:
 *
 *   field             0 (default)              PK_CFG_ZERO
 *   buffer_size       PK_BUFFER_SIZE_DEFAULT   -
 *   buffer_path       NULL: anonymous memory   -
 *   mode              PK_MODE_HANDOFF          -
 *   console_loglevel  7 (all but debug), or    0: print nothing
 *                     pk_set_loglevel()'s
 *   print_budget_us   PK_PRINT_BUDGET_DEFAULT_US  PK_PRINT_BUDGET_UNBOUNDED:
 *                                              unbounded, as Linux 4.16
 *   flags             none                     -
 *   default_level     PK_WARNING               PK_EMERG
 *   facility          1 (user)                 0 (kern)
 *   consoles          NULL: "stderr"           -
 *   lanes             one lane per CPU online  -
 *                     (docs/lanes.md)
 *
 * console_loglevel is a console loglevel, counted as the kernel's
 * (libprintk(7), "LEVELS"): 0-8, records with a level below it print.
 *
 * buffer_size is the whole store's size (header and descriptors
 * included), from PK_BUFFER_SIZE_MIN to PK_BUFFER_SIZE_MAX: the store used
 * is the largest whose power-of-two data ring, plus a quarter of it for
 * descriptors, plus the 512-byte header, fits in it.  The default,
 * PK_BUFFER_SIZE_DEFAULT (1311232 bytes), thus has a 1 MiB data ring;
 * PK_BUFFER_SIZE names the data ring itself (see pk_config_init()).
 */
struct pk_config {
	size_t buffer_size;		/* record store bytes (header included) */
	const char *buffer_path;	/* NULL: anonymous memory; else a file */
	enum pk_mode mode;
	int console_loglevel;		/* print records with level < this;
					   0: 7, PK_CFG_ZERO: nothing */
	unsigned print_budget_us;	/* handoff: 0: PK_PRINT_BUDGET_DEFAULT_US;
					   PK_PRINT_BUDGET_UNBOUNDED, as Linux 4.16 */
	unsigned flags;			/* PK_CFG_* */
	int default_level;		/* level of a message that names none;
					   0: PK_WARNING, PK_CFG_ZERO: PK_EMERG */
	int facility;			/* syslog facility stored with records;
					   0: 1 (user), PK_CFG_ZERO: 0 (kern) */
	const char *consoles;		/* PK_CONSOLE syntax; NULL: "stderr" */
	union {				/* lanes of a new store (PK_LANES, docs/lanes.md);
					   0: one per CPU */
		unsigned lanes;
		uint64_t reserved_lanes;
	};
	uint64_t reserved[7];		/* zero: later fields (docs/building.md "ABI") */
};

/* A 1 MiB data ring: the store PK_BUFFER_SIZE=1m gives (data + data/4 + 512). */
#define PK_BUFFER_SIZE_DEFAULT	((1u << 20) + (1u << 18) + 512u)
#define PK_PRINT_BUDGET_DEFAULT_US 20000u	/* handoff: 20 ms, docs/guide/flush-modes.md */
/* In a struct pk_config field where 0 means the default: the value 0 itself. */
#define PK_CFG_ZERO		(-1)
/* print_budget_us: no bound (PK_BUDGET_US=0), as Linux 4.16. */
#define PK_PRINT_BUDGET_UNBOUNDED	(~0u)
#define PK_BUFFER_SIZE_MIN	(16u << 10)
#define PK_BUFFER_SIZE_MAX	((size_t)1 << 30)

/**
 * pk_config_init() - fill @cfg with defaults, then apply the environment.
 * @cfg: the configuration to fill; all of it is written (reserved zeroed).
 *
 * Defaults: buffer_size PK_BUFFER_SIZE_DEFAULT, buffer_path NULL, mode
 * PK_MODE_HANDOFF, console_loglevel 7, print_budget_us
 * PK_PRINT_BUDGET_DEFAULT_US, flags 0, default_level PK_WARNING, facility
 * 1 (LOG_USER), consoles NULL ("stderr"): what pk_init() takes a 0 in
 * each field for, written out.  The variables are read with
 * secure_getenv(): a set-user-ID, set-group-ID or file-capability program
 * ignores them all.  The strings @cfg then points to (buffer_path,
 * consoles) belong to the environment.
 *
 * Reads PK_MODE (handoff|legacy|thread), PK_LOGLEVEL (a console loglevel,
 * 0-8 or a level name, libprintk(7) "LEVELS"; 0 gives PK_CFG_ZERO), PK_CONSOLE,
 * PK_BUFFER (path), PK_BUFFER_SIZE, PK_BUFFER_CLEAR, PK_BUDGET_US,
 * PK_CRASH_HANDLER=1, PK_EAGER=1, PK_SRCLOC=0|1, PK_LANES=N, PK_GATE=counters (PK_BUDGET_US=0 gives
 * PK_PRINT_BUDGET_UNBOUNDED).  A malformed variable is reported once on
 * stderr and the default is kept.  The library reads the others itself,
 * not through @cfg: PK_GATE again at the first pk_init(), PK_MODULES when
 * the first module registers (pk_module_register()), and PK_DYNDBG and
 * PK_DYNDBG_LIST when the first object registers its dynamic debug sites,
 * both usually before main().  libprintk(7) lists them all.
 *
 * PK_BUFFER_SIZE is the size of the store's data ring (the record text
 * and headers): bytes, or with a k, m or g suffix (powers of 1024),
 * rounded up to a power of two, from 16k to 512m; anything else
 * (overflow included) is refused.  buffer_size is then set to the whole
 * store's size, which is the data ring plus a quarter for descriptors
 * plus a 512-byte header: PK_BUFFER_SIZE=1m gives a 1 MiB data ring in a
 * store of 1311232 bytes (1280.5 KiB), 100k a 128 KiB ring.
 *
 * PK_CONSOLE (and pk_config.consoles, pk_console_register_spec()):
 *
 *   list   = item *("," item)
 *   item   = entry ["@" LEVEL] ["%" RATE]   a console
 *          | KEY "=" VALUE                  an option of the console before
 *   entry  = "stderr" | "stdout" | "fd:" N | "file:" PATH | "syslog"
 *          | "syslog:" SOCKET | "journal" | "journal:" SOCKET
 *          | "net:" HOST ":" PORT | "net:[" IPV6 "]:" PORT
 *          | "syslog+udp://" HOST [":" PORT] | "syslog+tcp://" HOST [":" PORT]
 *          | "syslog+relp://" HOST [":" PORT] | "syslog+unix://" PATH
 *                                       RFC 5424 (HOST may be "[" IPV6 "]")
 *          | "netconsole://" HOST [":" PORT]      as "net:", PORT 6666 if left out
 *          | "netconsole+ext://" HOST [":" PORT]  Linux's extended netconsole
 *                                       (pk_console_netext_make())
 *
 * An item is an option when it begins with lower-case letters followed
 * by '='; entries never do.  LEVEL: a digit 0-8 (a console loglevel:
 * records below it print) or a level name, meaning that level and worse
 * (libprintk(7), "LEVELS").  RATE: digits, bytes per
 * second (a throttle); a '%' not followed by digits alone is part of the
 * entry.  Options:
 *   fmt=human|kmsg|syslog|json|raw   the output format (PK_FMT_*)
 *   tid=on|off        human: "[T1234] " after the time
 *   level=on|off      human, syslog: the facility and the level before the
 *                     time, as dmesg -x ("user  :err   : ")
 *   time=uptime|ctime|rfc3339   human, syslog: the time shown (ctime as
 *                     dmesg -T; rfc3339 2006-01-02T15:04:05.123456+01:00)
 *   loglevel=LEVEL    as @LEVEL;  rate=RATE  as %RATE
 *   name=NAME         the name pk_console_find() knows it by (default:
 *                     the entry as written, unquoted, e.g. "file:/x.log")
 *   mode=OCTAL        file: permissions of a new file (e.g. 0640)
 *   rotate=SIZE:COUNT file: rotate at SIZE bytes (k/m/g), keep COUNT
 *   facility=NAME     syslog+*: user, daemon, local0-7 ... or 0-23 (kern
 *                     or 0: each record's own facility)
 *   app=NAME          syslog+*: the APP-NAME; journal: SYSLOG_IDENTIFIER
 *                     (default: the program's name).  journal takes no fmt=
 * (on/off may also be 1/0 or yes/no.)  Quoting: in an entry or a value,
 * "..." is taken as it is, and a backslash outside quotes takes the next
 * character as it is; so a path may hold any byte but NUL:
 *   file:"/var/log/a,b@c%d.log"@info,fmt=json
 *   file:/var/log/a\,b\@c\%d.log
 * Inside quotes, \" and \\ stand for " and \.  A bad entry or option is
 * named on stderr and that console skipped; the others are kept.  At
 * init, a list none of whose entries can be used falls back to stderr
 * (said once on stderr); a set but empty PK_CONSOLE registers no console.
 * Numbers: fd:N up to 2^20, a port 1-65535, a rate 1-10^9 bytes/s.
 *
 * Context: any thread, not async-signal-safe (reads the environment).
 * Return: nothing.
 */
void pk_config_init(struct pk_config *cfg);

/**
 * pk_init() - set libprintk up with @cfg, or apply @cfg to the running library.
 * @cfg: the configuration (NULL: pk_config_init()'s defaults); its strings
 *       need to live only for the call.
 *
 * Optional: the first pk_printk() outside a signal handler initialises
 * with the defaults.  Records stored before (from signal handlers, or
 * while another thread initialises) wait in a static early store and are
 * moved into the configured store here, ahead of everything else.
 *
 * Called again, or after the library initialised itself (a pk_printk()
 * from a constructor, say), pk_init() applies @cfg to the running
 * library: the mode, the print budget, the global loglevel, the default
 * level and facility, and the consoles: those registered from the
 * previous configuration (pk_config.consoles or PK_CONSOLE) are flushed
 * (at most 1 s) and replaced by @cfg's, a new one with the same name
 * going on where the old one stopped (no line printed twice); consoles the
 * program registered itself stay.  A different store (another
 * buffer_path, or another size of anonymous store) is adopted: the
 * records this process stored so far are copied into it, in order, and
 * the old one is released; callers meanwhile store into the early store
 * and are moved after.  Readers of this process's store (pk_reader_open())
 * must be closed before a pk_init() that changes the store.  If the new
 * store cannot be opened, the current one is kept and its error returned:
 * a later pk_init() with another path tries again, but the path that
 * failed last gets the same error again, without another warning and
 * without another try.
 *
 * What cannot change: PK_CFG_CRASH_HANDLER installs the handler but never
 * removes it, PK_CFG_NO_ATEXIT cannot take back the exit flush once it is
 * registered, and PK_CFG_BUFFER_CLEAR only acts on a store being opened.
 *
 * A store file (buffer_path) that cannot be used is never fatal: one line
 * on stderr names the path and the reason, and at first initialisation
 * the records are then kept in anonymous memory, with the consoles
 * printing as usual.  An existing file is used only if it is a regular
 * file, not a symlink, owned by the effective uid, not writable by group
 * or others, and has one link (one name); an empty one is formatted.  A
 * new store file is created mode 0600 (the umask may only narrow it).
 *
 * Context: any thread, not from a signal handler, not from a console's
 * write(); calls are serialised with each other.  pk_printk() may run
 * concurrently with it; pk_shutdown() may not.
 * Return: 0, or a negative errno:
 *   -EINVAL     a bad @cfg (buffer_size outside PK_BUFFER_SIZE_MIN..MAX,
 *               an unknown mode, console_loglevel outside 0-8 and
 *               PK_CFG_ZERO, default_level outside PK_EMERG..PK_DEBUG
 *               and PK_CFG_ZERO, facility outside 0-23 and PK_CFG_ZERO);
 *               nothing changed.
 *   -EDEADLK    called from inside a console's write(); nothing changed.
 *   -EALREADY   called while this same thread is initialising the library
 *               (a signal handler that interrupted pk_init()).
 *   -EBUSY      the store was to change, but a pk_printk() call stayed
 *               inside the old one for 2 s: the store was not changed
 *               (the rest of @cfg was applied).
 *   -EAGAIN     a thread the mode needs (the rescue thread, or a
 *               console's printer thread) could not be started; the rest
 *               of @cfg, the mode included, is applied all the same (in
 *               handoff mode the print budget is then unbounded; in thread
 *               mode a console without its printer thread is printed only
 *               from emergency sections, pk_panic() and the crash
 *               handler).  Also when another thread's initialisation did
 *               not finish within 10 s, and at first initialisation when
 *               the rescue thread could not be started (the library is
 *               then not set up).
 *   -ENOMEM     no memory for the store or for copying into a new one.
 *   store errors from opening cfg->buffer_path: -EPERM (another owner,
 *               writable by group or others, more than one link), -ELOOP
 *               (a symlink), -EISDIR, -EINVAL (not a regular file, not a
 *               store, a store of another size), -EPROTO (another store
 *               format version), -EACCES, -ENOENT, ... from open(2) or
 *               mmap(2).  At first initialisation the library is set up
 *               all the same, with records in memory; on a running
 *               library the store in use is kept.  A store named by
 *               PK_BUFFER (the user's, not the program's choice:
 *               pk_init(NULL), the first pk_printk(), or a buffer_path
 *               equal to PK_BUFFER) gives 0 after the warning.
 */
int pk_init(const struct pk_config *cfg);

/**
 * pk_set_loglevel() - set the global console loglevel.
 * @loglevel: 0 (print nothing) to 8 (print everything), a console
 *            loglevel (libprintk(7), "LEVELS"): PK_WARNING prints
 *            PK_EMERG..PK_ERR, PK_WARNING + 1 warnings too.
 *
 * Consoles that follow
 * it (registered with loglevel < 0, and PK_CONSOLE entries without one)
 * print records with a level below @loglevel.  May be called before
 * the library is set up: the initialisation the first pk_printk() makes
 * keeps it, and so does a pk_init() whose console_loglevel is 0 (the
 * default) or that is pk_init(NULL); a pk_init() whose console_loglevel
 * names one (pk_config_init() fills in 7, or PK_LOGLEVEL's) sets that:
 * a configuration wins for the fields it sets.
 * Context: any thread, not from a signal handler.
 * Return: 0, or -EINVAL for @loglevel outside 0-8.
 */
int pk_set_loglevel(int loglevel);

/**
 * pk_get_loglevel() - the global console loglevel.
 * Context: any thread, async-signal-safe.
 * Return: 0-8.
 */
int pk_get_loglevel(void);

/**
 * pk_printk() - store one message and have it printed according to the mode.
 * @level: PK_EMERG..PK_DEBUG, PK_LEVEL_DEFAULT or PK_LEVEL_CONT.  Any other
 *         value is treated as PK_LEVEL_DEFAULT.
 * @fmt:   printf-style format; %n is refused.
 *
 * Formatting uses no malloc and no lock; storing is lock-free.  Before the
 * library is set up, a call from a signal handler stores into the static
 * early store instead of initialising (see pk_init()).  A call from inside
 * a console's write() stores only: the record is printed later, by
 * another call chain.  Printing disables thread cancellation.
 * Progress: handoff mode prints at most print_budget_us plus one record
 * without a waiter and waits at most 1 s for a handoff; thread mode only
 * stores; legacy mode may print for as long as others log (the baseline).
 * Context: any thread, async-signal-safe, emergency-safe.
 * A line (a format ending in a newline) is stored as its format and
 * arguments and formatted when it is printed or read (deferred
 * formatting, see pk_printk(3)); PK_CFG_EAGER formats at the call.
 *
 * Return: bytes stored (>= 0: the text formatted at the call, or the
 * package of a deferred line), or a negative errno: -EINVAL for a
 * NULL @fmt or a %n conversion, -ENOBUFS if the record was lost because the
 * store was overrun while it was being written, -EBUSY if another thread
 * is panicking (its report must not be pushed out of the store), -ENOMEM/-EAGAIN if
 * libprintk could not be initialised.
 */
int pk_printk(int level, const char *fmt, ...) PK__PRINTF(2, 3);

/**
 * pk_vprintk() - pk_printk() with the arguments in a va_list.
 * @level: as for pk_printk().
 * @fmt:   as for pk_printk().
 * @ap:    the arguments; used up by the call (va_end() stays the caller's).
 * Context: as pk_printk(): any thread, async-signal-safe, emergency-safe.
 * Return: as pk_printk().
 */
int pk_vprintk(int level, const char *fmt, va_list ap) PK__PRINTF(2, 0);

/*
 * STRUCTURED FIELDS
 *
 * KEY=VALUE pairs carried by one record, as journald's sd_journal_send()
 * and the kernel's dev_printk() dictionaries (SUBSYSTEM=, DEVICE=).  A key
 * is 1 to PK_FIELD_KEY_MAX characters of [A-Z0-9_] starting with a letter
 * (journald's rule); a value is a C string.  A record carries at most
 * PK_FIELDS_MAX fields of at most PK_FIELDS_BYTES bytes together (each
 * field counts its key, its value and 2); they are stored in the record
 * itself, in the same reservation as its text (pk_printk_fields(3)).
 */
#define PK_FIELDS_MAX		8
#define PK_FIELD_KEY_MAX	64
#define PK_FIELDS_BYTES		896

#ifndef PK__FIELD_DEFINED
#define PK__FIELD_DEFINED
/** One field: also what a reader returns (struct pk_record.fields). */
struct pk_field {
	const char *key;
	const char *value;
};
#endif

/**
 * pk_printk_fields() - pk_printk() with structured fields.
 * @level:  as for pk_printk() (a continuation is stored as a record of
 *          its own: a record with fields is never extended).
 * @fields: @n fields (NULL if @n is 0).
 * @n:      how many.
 * @fmt:    as for pk_printk().
 *
 * A field whose key is not valid, whose key or value is NULL, or that
 * does not fit the budget (PK_FIELDS_MAX, PK_FIELDS_BYTES) is left out;
 * the record is stored all the same with the fields that are good, in
 * their order, and flagged PK_REC_FIELDS_DROPPED, which every rendering
 * that shows fields shows.  The text is never lost for a field's sake.
 * Context: as pk_printk(): any thread, async-signal-safe, emergency-safe;
 * no allocation, no lock.
 * Return: as pk_printk() when every field was kept.  When one was left
 * out, the record was stored (unless pk_printk() would have failed) and
 * the call returns -EINVAL (a bad key, a NULL key or value, or @fields
 * NULL with @n > 0) or -EMSGSIZE (over the budget).
 */
int pk_printk_fields(int level, const struct pk_field *fields, size_t n, const char *fmt, ...)
	PK__PRINTF(4, 5);

/**
 * pk_vprintk_fields() - pk_printk_fields() with a va_list.
 * Context: as pk_printk_fields().
 * Return: as pk_printk_fields().
 */
int pk_vprintk_fields(int level, const struct pk_field *fields, size_t n, const char *fmt,
		      va_list ap) PK__PRINTF(4, 0);

struct pk_srcloc;
/**
 * pk_printk_fields_loc() - pk_printk_fields() that stores call site @loc
 * with the record (printk.h, SOURCE LOCATIONS); what pk_info_f() and the
 * other _f macros call.
 * @loc:    the call site, or NULL (then this is pk_printk_fields()).
 * @level:  as for pk_printk_fields().
 * @fields: as for pk_printk_fields().
 * @n:      as for pk_printk_fields().
 * @fmt:    as for pk_printk_fields().
 * Context: as pk_printk_fields().
 * Return: as pk_printk_fields().
 */
int pk_printk_fields_loc(const struct pk_srcloc *loc, int level, const struct pk_field *fields,
			 size_t n, const char *fmt, ...) PK__PRINTF(5, 6);

/*
 * PK_FIELDS({"KEY", value}, ...): an array of fields and its length, for
 * pk_printk_fields() and the _f macros:
 *	pk_info_f(PK_FIELDS({ "REQUEST_ID", id }, { "USER", name }),
 *		  "request done in %d ms\n", ms);
 */
#define PK_FIELDS(...)							\
	((const struct pk_field[]){ __VA_ARGS__ }),			\
	(sizeof((const struct pk_field[]){ __VA_ARGS__ }) / sizeof(struct pk_field))
#define pk_emerg_f(...)	pk_printk_fields_loc(PK_SRCLOC, PK_EMERG, __VA_ARGS__)
#define pk_alert_f(...)	pk_printk_fields_loc(PK_SRCLOC, PK_ALERT, __VA_ARGS__)
#define pk_crit_f(...)	pk_printk_fields_loc(PK_SRCLOC, PK_CRIT, __VA_ARGS__)
#define pk_err_f(...)	pk_printk_fields_loc(PK_SRCLOC, PK_ERR, __VA_ARGS__)
#define pk_warn_f(...)	pk_printk_fields_loc(PK_SRCLOC, PK_WARNING, __VA_ARGS__)
#define pk_notice_f(...)	pk_printk_fields_loc(PK_SRCLOC, PK_NOTICE, __VA_ARGS__)
#define pk_info_f(...)	pk_printk_fields_loc(PK_SRCLOC, PK_INFO, __VA_ARGS__)
#define pk_debug_f(...)	pk_printk_fields_loc(PK_SRCLOC, PK_DEBUG, __VA_ARGS__)

/*
 * Compile-time stripping, as Zephyr's CONFIG_LOG_MAX_LEVEL: a program (or
 * one translation unit) that defines PK_MAX_LEVEL to a number 0-7 (the
 * value of PK_EMERG..PK_DEBUG) before the first libprintk header loses
 * every call whose level is fixed at compile time and above it: pk_alert()
 * ... pk_debug() here, pk_dyndbg() of dyndbg.h, and the pr_* family of
 * kernel.h (_once and _ratelimited included).  A stripped call still has
 * its format and arguments checked by the compiler, evaluates nothing,
 * stores no string and is still an int expression (0).  Calls whose level
 * is not in their name (pk_printk(), pk_vprintk(), printk(KERN_x ...)) and
 * continuations (pk_cont(), pr_cont()) are never stripped; neither are
 * WARN(), BUG(), dump_stack() or panic().  Undefined: nothing is stripped.
 * The library's own sources ignore it: its messages are part of its API.
 *
 * It must be a plain number: in #if an enumerator such as PK_WARNING
 * reads as 0, which would silently strip all but PK_EMERG.
 */
#if defined(PK_MAX_LEVEL) && !defined(PK_BUILDING_LIB)
#define PK__CAT(a, b)	PK__CAT_(a, b)
#define PK__CAT_(a, b)	a##b
#define PK__IS_0_0	1
#if PK_MAX_LEVEL == 0
#if !PK__CAT(PK__IS_0_, PK_MAX_LEVEL)
#error "PK_MAX_LEVEL must be a number 0-7 (an enumerator such as PK_WARNING reads as 0 in #if)"
#endif
#endif
#if PK_MAX_LEVEL < 0 || PK_MAX_LEVEL > 7
#error "PK_MAX_LEVEL must be a number 0-7"
#endif
#define PK__MAX_LEVEL	(PK_MAX_LEVEL)
#else
#define PK__MAX_LEVEL	7
#endif

/*
 * PK__STRIPPED(level, fmt, ...): a stripped call.  The dead branch keeps
 * the format check, and the compiler drops a constant false condition even
 * at -O0, strings and all.  GNU C's statement expression, as the kernel's
 * no_printk(), is an int that may be discarded without -Wunused-value;
 * other compilers get a conditional expression.
 */
#if defined(__GNUC__)
#define PK__STRIPPED(level, ...)					\
	__extension__ ({						\
		if (0)							\
			pk_printk(level, __VA_ARGS__);			\
		0;							\
	})
#else
#define PK__STRIPPED(level, ...)	(0 ? pk_printk(level, __VA_ARGS__) : 0)
#endif

/*
 * PK__PICK(n, on, off)(args): the macro or function @on applied to @args
 * if level @n (a digit) is compiled in, else @off.  Only the two names
 * pass through the selection, so arguments with braces or commas of any
 * kind reach @on untouched.  PK__ON_<n> is 1 or 0 by PK__MAX_LEVEL.
 */
#define PK__PICK(n, on, off)	PK__PICK_(PK__ON_##n, on, off)
#define PK__PICK_(c, on, off)	PK__PICK__(c, on, off)
#define PK__PICK__(c, on, off)	PK__PICK_##c(on, off)
#define PK__PICK_1(on, off)	on
#define PK__PICK_0(on, off)	off
#define PK__ON_0	1
#if PK__MAX_LEVEL >= 1
#define PK__ON_1	1
#else
#define PK__ON_1	0
#endif
#if PK__MAX_LEVEL >= 2
#define PK__ON_2	1
#else
#define PK__ON_2	0
#endif
#if PK__MAX_LEVEL >= 3
#define PK__ON_3	1
#else
#define PK__ON_3	0
#endif
#if PK__MAX_LEVEL >= 4
#define PK__ON_4	1
#else
#define PK__ON_4	0
#endif
#if PK__MAX_LEVEL >= 5
#define PK__ON_5	1
#else
#define PK__ON_5	0
#endif
#if PK__MAX_LEVEL >= 6
#define PK__ON_6	1
#else
#define PK__ON_6	0
#endif
#if PK__MAX_LEVEL >= 7
#define PK__ON_7	1
#else
#define PK__ON_7	0
#endif

/*
 * MODULES
 *
 * A translation unit may belong to a module, as Zephyr's
 * LOG_MODULE_REGISTER() does it: the level macros (pk_emerg() ..
 * pk_debug(), pk_cont()) and kernel.h's printk() in it then store only
 * what the module's level lets through, and their records carry the
 * module's name, which consoles show ("netio: text") and can filter on,
 * as pkmsg can (pkmsg --module).
 *
 *	#include <printk/printk.h>
 *	PK_MODULE_REGISTER(netio, PK_INFO);	(one file of the module)
 *	PK_MODULE_DECLARE(netio);		(its other files)
 *
 *	pk_debug("not stored while netio's level is PK_INFO\n");
 *	pk_module_set_level("net*", PK_DEBUG);	(or PK_MODULES='net*=7')
 *
 * The level is the most verbose one stored: PK_INFO keeps PK_EMERG to
 * PK_INFO and drops PK_DEBUG; PK_MODULE_OFF keeps nothing.  (A console's
 * loglevel counts as the kernel's does, one above: 7 prints up to
 * PK_INFO.)  A record the module's level drops is not stored, not
 * formatted, and its arguments are not evaluated by the level macros: the
 * test is one load and a branch.  Compile-time stripping (PK_MAX_LEVEL)
 * comes first.
 *
 * Names: 1 to PK_MODULE_NAME_MAX characters, letters, digits and "_"
 * (a C identifier: the macros stringify it).  The module object is hidden
 * in its executable or shared object: a module registered by two objects
 * is two modules of one name, and pk_module_set_level() sets both.
 * Constructors emitted by PK_MODULE_REGISTER() register it at load time
 * and take it back at exit or dlclose().
 *
 * Code outside any module (PK_MODULE_DECLARE() not seen) logs as before:
 * no module, no level but the consoles'.  pk_printk() itself takes no
 * module; pk_printk_mod() does.
 *
 * C++: a level macro in an inline function or template defined in a
 * header logs under the module of whichever file's copy the linker keeps;
 * give such code pk_printk_mod() with the module it means.  C compilers
 * warn about the header's tentative definition under -Wc++-compat: define
 * PK_NO_MODULES before the include in such files (they then have no
 * module).
 */
#define PK_MODULE_NAME_MAX	31
#define PK_MODULE_OFF		(-1)	/* a module level: store nothing */

/*
 * A module.  Defined by PK_MODULE_REGISTER(); level is read and written
 * with atomic int accesses (__atomic builtins: this header is also C++).
 */
struct pk_module {
	const char *name;
	int level;			/* PK_MODULE_OFF..PK_DEBUG */
	int default_level;		/* as registered */
	struct pk_module *next;		/* the library's: registered modules */
	unsigned long namelen;		/* the library's: set at registration (atomic) */
	unsigned long reserved;
};

/**
 * pk_module_register() - make @mod known to pk_module_set_level() and
 * pk_module_list_cb(), and apply to it the PK_MODULES rules and the
 * patterns pk_module_set_level() was given before.
 * @mod: a module whose name and levels are set (PK_MODULE_REGISTER()
 *       calls this from a constructor).
 * Context: any thread, not a signal handler; does not initialise the
 *          library.
 * Return: 0; -EINVAL for a NULL @mod, a name that is not 1 to
 * PK_MODULE_NAME_MAX letters, digits or '_', or a level outside
 * PK_MODULE_OFF..PK_DEBUG; -EEXIST if @mod is registered already.
 */
int pk_module_register(struct pk_module *mod);

/**
 * pk_module_unregister() - forget @mod (PK_MODULE_REGISTER()'s destructor
 * calls this at exit or dlclose()).  Records it stored keep its name.
 * @mod: a registered module; anything else is ignored.
 * Context: any thread, not a signal handler.
 * Return: nothing.
 */
void pk_module_unregister(struct pk_module *mod);

/**
 * pk_module_set_level() - set the level of every registered module whose
 * name matches @pattern, and of those registered later.
 * @pattern: a name, or a pattern with '*' (any run) and '?' (any one
 *           character), at most PK_MODULE_NAME_MAX bytes.
 * @level:   PK_MODULE_OFF..PK_DEBUG.
 * The pattern is kept (at most 32 patterns; the same pattern again
 * replaces its level) for modules registered later, e.g. by dlopen().
 * Context: any thread, not a signal handler.
 * Return: the number of registered modules set (0 is not an error);
 * -EINVAL for a NULL, empty or too long @pattern or a bad @level;
 * -ENOSPC if the pattern is new and 32 are kept already (the modules
 * registered now are set all the same).
 */
int pk_module_set_level(const char *pattern, int level);

/**
 * pk_module_get_level() - the level of the first registered module called
 * @name.
 * @name: a module name.
 * Context: any thread, not a signal handler.
 * Return: PK_MODULE_OFF..PK_DEBUG, or -ENOENT (none registered),
 * -EINVAL (NULL @name).
 */
int pk_module_get_level(const char *name);

/**
 * pk_module_list_cb() - call @cb for each registered module, in
 * registration order, with its name and level, until @cb returns non-zero.
 * @cb:  the callback; it runs with the registry locked and must not call
 *       any pk_module_ function.
 * @arg: passed to @cb.
 * Context: any thread, not a signal handler.
 * Return: the number of modules visited, or what @cb returned when it
 * stopped the walk; -EINVAL for a NULL @cb.
 */
int pk_module_list_cb(int (*cb)(const char *name, int level, void *arg), void *arg);

/**
 * pk_printk_mod() - pk_printk() for module @mod: the record is stored only
 * if its level is at most @mod's level, and it carries @mod's name.
 * @mod:   a module, or NULL (then this is pk_printk()).
 * @level: as for pk_printk(), including the prefixes in @fmt.
 * @fmt:   as for pk_printk().
 * A continuation (PK_LEVEL_CONT) of a line the module's level dropped is
 * dropped with it.
 * Context: as pk_printk(): any thread, async-signal-safe.
 * Return: as pk_printk(); 0 for a record the module's level dropped.
 */
int pk_printk_mod(const struct pk_module *mod, int level, const char *fmt, ...)
	PK__PRINTF(3, 4);

/**
 * pk_vprintk_mod() - pk_printk_mod() with a va_list.
 * @mod:   a module, or NULL.
 * @level: as for pk_printk().
 * @fmt:   as for pk_printk().
 * @ap:    the arguments.
 * Context: any thread, async-signal-safe.
 * Return: as pk_printk_mod().
 */
int pk_vprintk_mod(const struct pk_module *mod, int level, const char *fmt, va_list ap)
	PK__PRINTF(3, 0);

/*
 * SOURCE LOCATIONS
 *
 * The level macros (pk_emerg() .. pk_debug(), the pk_*_f() field
 * variants, and printk(), pr_*(), dev_*() and netdev_*() of kernel.h)
 * hand the library their call site: its file as __FILE__ spells it, its
 * function (__func__) and its line, in one static const struct
 * pk_srcloc per call site, so that a call passes one pointer.  The
 * record keeps them (a store file too, for pkmsg after the fact), and
 * struct pk_record returns them (reader.h).  A file name is kept to its
 * last PK_SRCLOC_FILE_MAX bytes, a function name to its first
 * PK_SRCLOC_FUNC_MAX.  pk_printk() called directly, continuations, and
 * C++ compilers other than GCC and Clang pass none.  A program that
 * wants no locations stored (a smaller record) sets PK_CFG_NO_SRCLOC or
 * PK_SRCLOC=0 (pk_config_init(3)).
 */
#define PK_SRCLOC_FILE_MAX	255
#define PK_SRCLOC_FUNC_MAX	127

/**
 * A call site: constant, usually built by PK_SRCLOC.  The lengths save
 * the call a strlen(); 0 means "count it" (a struct built by hand).
 */
struct pk_srcloc {
	const char *file;	/* __FILE__; NULL: none */
	const char *func;	/* __func__; NULL: none */
	unsigned line;		/* __LINE__ */
	unsigned short file_len;	/* strlen(file), or 0 */
	unsigned short func_len;	/* strlen(func), or 0 */
};
#define PK__SRCLOC_INIT							\
	{ __FILE__, __func__, __LINE__,					\
	  sizeof(__FILE__) - 1 < 0xffff ? (unsigned short)(sizeof(__FILE__) - 1) : 0,	\
	  sizeof(__func__) - 1 < 0xffff ? (unsigned short)(sizeof(__func__) - 1) : 0 }

/*
 * PK_SRCLOC: a pointer to this call site's struct pk_srcloc.  GNU C and
 * C++: a static const struct per site, built at compile time.  Other C
 * compilers: a compound literal of the enclosing block.  Other C++: NULL.
 */
#if defined(__GNUC__)
#define PK_SRCLOC							\
	(__extension__ ({						\
		static const struct pk_srcloc pk__srcloc_site =		\
			PK__SRCLOC_INIT;				\
		&pk__srcloc_site;					\
	}))
#elif !defined(__cplusplus)
#define PK_SRCLOC	(&(const struct pk_srcloc)PK__SRCLOC_INIT)
#else
#define PK_SRCLOC	((const struct pk_srcloc *)0)
#endif

/**
 * pk_printk_loc() - pk_printk_mod() that stores call site @loc with the
 * record (see SOURCE LOCATIONS); what the level macros call.
 * @mod:   a module, or NULL.
 * @loc:   the call site, or NULL (then this is pk_printk_mod()).
 * @level: as for pk_printk().
 * @fmt:   as for pk_printk().
 * A continuation (PK_LEVEL_CONT, or a KERN_CONT prefix) stores no
 * location: it belongs to the line it continues.
 * Context: as pk_printk(): any thread, async-signal-safe.
 * Return: as pk_printk_mod().
 */
int pk_printk_loc(const struct pk_module *mod, const struct pk_srcloc *loc, int level,
		  const char *fmt, ...) PK__PRINTF(4, 5);

/**
 * pk_vprintk_loc() - pk_printk_loc() with a va_list.
 * @mod:   a module, or NULL.
 * @loc:   the call site, or NULL.
 * @level: as for pk_printk().
 * @fmt:   as for pk_printk().
 * @ap:    the arguments.
 * Context: any thread, async-signal-safe.
 * Return: as pk_printk_mod().
 */
int pk_vprintk_loc(const struct pk_module *mod, const struct pk_srcloc *loc, int level,
		   const char *fmt, va_list ap) PK__PRINTF(4, 0);

/* Does @m's level let a record of @level (PK_EMERG..PK_DEBUG) through? */
static inline int pk__mod_pass(const struct pk_module *m, int level)
{
	return !m || level <= __atomic_load_n(&m->level, __ATOMIC_RELAXED);
}

/**
 * pk_module_dropped() - note that a level macro's record was dropped by
 * its module's level: if its format leaves the line open (no final
 * newline), a pk_cont() after it is dropped too.  The level macros call
 * it; nothing else needs to.
 * @fmt: the dropped record's format (NULL counts as an open line).
 * Context: any thread, async-signal-safe.
 * Return: 0, what the macro returns for the dropped record.
 */
int pk_module_dropped(const char *fmt);

#if defined(__GNUC__)
#define PK__MOD_HIDDEN	__attribute__((visibility("hidden")))
#define PK__MOD_CTOR	__attribute__((constructor, used))
#define PK__MOD_DTOR	__attribute__((destructor, used))
#else
#define PK__MOD_HIDDEN
#define PK__MOD_CTOR
#define PK__MOD_DTOR
#endif

/*
 * PK__THIS_MODULE: the module of this translation unit, or a null pointer.
 * C: a tentative definition that PK_MODULE_DECLARE() completes with the
 * module's address (so the compiler folds the test away where there is
 * none).  C++, which has no tentative definitions: an overload that
 * PK_MODULE_DECLARE() adds a better match to.
 */
#if defined(PK_NO_MODULES)
/* Modules off in this file (e.g. for -Wc++-compat): no module, ever. */
#define PK__THIS_MODULE		((const struct pk_module *)0)
#define PK__MODULE_SELF(name)	typedef int pk__module_self_##name
#elif defined(__cplusplus)
static inline const struct pk_module *pk__this_module(...) { return 0; }
#define PK__THIS_MODULE		pk__this_module(0)
#define PK__MODULE_SELF(name)						\
	static inline const struct pk_module *pk__this_module(int)	\
	{ return &pk__module_##name; }					\
	typedef int pk__module_self_##name
#else
static const struct pk_module *const pk__this_module __attribute__((unused));
#define PK__THIS_MODULE		pk__this_module
#define PK__MODULE_SELF(name)						\
	static const struct pk_module *const pk__this_module = &pk__module_##name
#endif

/* The other files of module @name. */
#define PK_MODULE_DECLARE(name)						\
	extern struct pk_module pk__module_##name PK__MOD_HIDDEN;	\
	PK__MODULE_SELF(name)

/*
 * Define module @name with level @level, in one file of the module.  A
 * name longer than PK_MODULE_NAME_MAX or a level outside PK_MODULE_OFF to
 * PK_DEBUG does not compile (a negative array size).
 */
#define PK_MODULE_REGISTER(name, level)					\
	typedef char pk__module_name_fits_##name[				\
		sizeof(#name) <= PK_MODULE_NAME_MAX + 1 ? 1 : -1];		\
	typedef char pk__module_level_valid_##name[				\
		(level) >= PK_MODULE_OFF && (level) <= PK_DEBUG ? 1 : -1];	\
	extern struct pk_module pk__module_##name PK__MOD_HIDDEN;	\
	struct pk_module pk__module_##name =				\
		{ #name, (level), (level), 0, 0, 0 };			\
	static PK__MOD_CTOR void pk__modreg_##name(void)		\
	{ (void)pk_module_register(&pk__module_##name); }		\
	static PK__MOD_DTOR void pk__modunreg_##name(void)		\
	{ pk_module_unregister(&pk__module_##name); }			\
	PK__MODULE_SELF(name)

/*
 * STATIC PACKAGING
 *
 * With deferred formatting (the default, see pk_printk()) a line is
 * stored as its format and arguments.  pk_printk() finds the arguments'
 * types by reading the format on each call.  The level macros below
 * (pk_emerg() .. pk_debug()), compiled as C by GCC or Clang, do better:
 * each call site classifies its arguments at compile time (size, integer,
 * pointer or floating point, signedness, with _Generic and
 * __builtin_classify_type), and hands them to pk_printk_site() in an
 * array.  The site's format is read once, on its first call, and what it
 * found is kept in the site's static struct pk_site, so that later calls
 * do no format parsing at all.  A site whose format is not a string
 * literal, takes more than PK_SITE_ARGS arguments, or whose arguments do
 * not match its conversions exactly (what -Wformat warns about), calls
 * pk_printk() instead, as C++ and other compilers always do.  Define
 * PK_NO_STATIC_PACK before including this header to turn it off.
 */
#define PK_SITE_ARGS	12

/* A call site's state: zero-initialised static storage, owned by libprintk. */
struct pk_site {
	uint64_t opaque[8];
};

/* One argument of a call site, its bytes as the caller's type holds them. */
union pk_arg {
	unsigned char b[16];
	long double ld;
	uint64_t u;
};

/* An argument's signature byte: size in bytes (PK_SIG_SIZE: wider than 16), and what it is. */
#define PK_SIG_SIZE	0x1fu
#define PK_SIG_PTR	0x20u	/* a pointer */
#define PK_SIG_REAL	0x40u	/* floating point */
#define PK_SIG_SIGNED	0x80u	/* a signed integer */

/* What pk_printk_site() returns when the caller must call pk_printk(). */
#define PK_SITE_VARIADIC	(-1000)

/**
 * pk_printk_site() - pk_printk() for a call site whose arguments were
 * classified at compile time (the level macros; see STATIC PACKAGING).
 * @site:  the site's static state, zero-initialised.
 * @level: as for pk_printk().
 * @fmt:   a string literal, the same on every call of the site.
 * @sig:   @n signature bytes (PK_SIG_*), one per argument.
 * @n:     the number of arguments (at most PK_SITE_ARGS).
 * @args:  the arguments.
 * Context: as pk_printk(): any thread, async-signal-safe, lock-free.
 * Return: as pk_printk() for a line it stored (the package's bytes), or
 * PK_SITE_VARIADIC: nothing was done, call pk_printk() with the same
 * arguments (the site cannot be packed this way, deferred formatting is
 * off, the library is not set up yet, or another thread is classifying
 * the site right now).
 */
int pk_printk_site(struct pk_site *site, int level, const char *fmt, const unsigned char *sig,
		   unsigned n, const union pk_arg *args);

/**
 * pk_printk_site_mod() - pk_printk_site() for module @mod (see MODULES):
 * as pk_printk_mod() is to pk_printk().
 * @mod:   a module, or NULL.
 * @site:  as for pk_printk_site().
 * @level: as for pk_printk_site().
 * @fmt:   as for pk_printk_site().
 * @sig:   as for pk_printk_site().
 * @n:     as for pk_printk_site().
 * @args:  as for pk_printk_site().
 * Context: any thread, async-signal-safe, lock-free.
 * Return: as pk_printk_site(); PK_SITE_VARIADIC means: call
 * pk_printk_mod() with the same arguments.
 */
int pk_printk_site_mod(const struct pk_module *mod, struct pk_site *site, int level,
		       const char *fmt, const unsigned char *sig, unsigned n,
		       const union pk_arg *args);

/**
 * pk_printk_site_loc() - pk_printk_site_mod() that stores call site @loc
 * with the record (see SOURCE LOCATIONS): what the level macros call.
 * @mod:   a module, or NULL.
 * @loc:   the call site, or NULL (then this is pk_printk_site_mod()).
 * @site:  as for pk_printk_site().
 * @level: as for pk_printk_site().
 * @fmt:   as for pk_printk_site().
 * @sig:   as for pk_printk_site().
 * @n:     as for pk_printk_site().
 * @args:  as for pk_printk_site().
 * Context: any thread, async-signal-safe, lock-free.
 * Return: as pk_printk_site(); PK_SITE_VARIADIC means: call
 * pk_printk_loc() with the same arguments.
 */
int pk_printk_site_loc(const struct pk_module *mod, const struct pk_srcloc *loc,
		       struct pk_site *site, int level, const char *fmt, const unsigned char *sig,
		       unsigned n, const union pk_arg *args);

#if !defined(__cplusplus) && defined(__GNUC__) && defined(__STDC_VERSION__) && \
	__STDC_VERSION__ >= 201112L && !defined(PK_NO_STATIC_PACK) && !defined(PK_BUILDING_LIB)
#define PK__STATIC_PACK 1
#endif

#ifdef PK__STATIC_PACK
/*
 * The macros take the format and the arguments as one list, so that no
 * call needs GNU's ", ##__VA_ARGS__" (pedantic builds warn about it).
 * PK__NARGS: the length of the list, 1 to 126 (C guarantees 127 macro
 * arguments; a call with more is not C anyway).
 */
#define PK__NARGS(...) PK__NARGS_(__VA_ARGS__, 126, 125, 124, 123, 122, 121, 120, 119, \
	118, 117, 116, 115, 114, 113, 112, 111, 110, 109, 108, 107, 106, 105, 104, 103, 102, \
	101, 100, 99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 88, 87, 86, 85, 84, 83, 82, 81, \
	80, 79, 78, 77, 76, 75, 74, 73, 72, 71, 70, 69, 68, 67, 66, 65, 64, 63, 62, 61, 60, \
	59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, \
	38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, \
	17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define PK__NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, \
	_16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, \
	_33, _34, _35, _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, _49, \
	_50, _51, _52, _53, _54, _55, _56, _57, _58, _59, _60, _61, _62, _63, _64, _65, _66, \
	_67, _68, _69, _70, _71, _72, _73, _74, _75, _76, _77, _78, _79, _80, _81, _82, _83, \
	_84, _85, _86, _87, _88, _89, _90, _91, _92, _93, _94, _95, _96, _97, _98, _99, _100, \
	_101, _102, _103, _104, _105, _106, _107, _108, _109, _110, _111, _112, _113, _114, \
	_115, _116, _117, _118, _119, _120, _121, _122, _123, _124, _125, _126, n, ...) n
#define PK__FIRST(...)		PK__FIRST_(__VA_ARGS__, 0)
#define PK__FIRST_(f, ...)	f
#define PK__CAT2(a, b)		PK__CAT2_(a, b)
#define PK__CAT2_(a, b)		a##b
/* The argument as va_arg would see it before promotion: arrays decayed, no qualifiers. */
#define PK__DECAY(a)	((void)0, (a))
#define PK__TYPE(a)	__typeof__(PK__DECAY(a))
/*
 * The signature of argument @i, from its temporary pk__t<i> (unevaluated):
 * its size, and __builtin_classify_type's 5 (a pointer) or 8 (floating
 * point); the signedness of an integer narrower than int, which va_arg
 * would have sign- or zero-extended.
 */
#define PK__SIGNED(t)							\
	_Generic(t, char: (char)-1 < 0, signed char: 1, short: 1, int: 1, long: 1,	\
		 long long: 1, default: 0)
#define PK__T(u, i)	PK__CAT2(PK__CAT2(pk__t, u), PK__CAT2(_, i))
#define PK__V(name, u)	PK__CAT2(name, u)
#define PK__REAL(t)	_Generic(t, float: 1, double: 1, long double: 1, default: 0)
#define PK__SIG(u, i, a)							\
	(unsigned char)((sizeof(PK__T(u, i)) > sizeof(union pk_arg) ? PK_SIG_SIZE	\
							     : sizeof(PK__T(u, i))) |	\
			(__builtin_classify_type(_Generic(PK__T(u, i), float: 0.0,	\
							  default: PK__T(u, i))) == 5	\
				 ? PK_SIG_PTR : 0) |					\
			(PK__REAL(PK__T(u, i)) ? PK_SIG_REAL : 0) |			\
			(PK__SIGNED(PK__T(u, i)) ? PK_SIG_SIGNED : 0)),
#define PK__TMP(u, i, a)	PK__TYPE(a) PK__T(u, i) = (a);
/* An argument wider than union pk_arg is not copied; its signature never matches. */
#define PK__PUT(u, i, a)							\
	__builtin_memcpy(PK__V(pk__a, u)[i - 1].b, &PK__T(u, i),			\
			 sizeof(PK__T(u, i)) > sizeof(union pk_arg) ? 0 : sizeof(PK__T(u, i)));
#define PK__USE(u, i, a)	, PK__T(u, i)
/* PK__EACH(m, u, fmt, a, b, ...): m(u, 1, a) m(u, 2, b) ..., up to PK_SITE_ARGS arguments. */
#define PK__EACH(m, u, ...)	PK__CAT2(PK__EACH_, PK__NARGS(__VA_ARGS__))(m, u, __VA_ARGS__)
#define PK__EACH_1(m, u, f)
#define PK__EACH_2(m, u, f, a)	m(u, 1, a)
#define PK__EACH_3(m, u, f, a, b)	m(u, 1, a) m(u, 2, b)
#define PK__EACH_4(m, u, f, a, b, c)	m(u, 1, a) m(u, 2, b) m(u, 3, c)
#define PK__EACH_5(m, u, f, a, b, c, d)	PK__EACH_4(m, u, f, a, b, c) m(u, 4, d)
#define PK__EACH_6(m, u, f, a, b, c, d, e)	PK__EACH_5(m, u, f, a, b, c, d) m(u, 5, e)
#define PK__EACH_7(m, u, f, a, b, c, d, e, g)	PK__EACH_6(m, u, f, a, b, c, d, e) m(u, 6, g)
#define PK__EACH_8(m, u, f, a, b, c, d, e, g, h)	PK__EACH_7(m, u, f, a, b, c, d, e, g) m(u, 7, h)
#define PK__EACH_9(m, u, f, a, b, c, d, e, g, h, i)	\
	PK__EACH_8(m, u, f, a, b, c, d, e, g, h) m(u, 8, i)
#define PK__EACH_10(m, u, f, a, b, c, d, e, g, h, i, j)	\
	PK__EACH_9(m, u, f, a, b, c, d, e, g, h, i) m(u, 9, j)
#define PK__EACH_11(m, u, f, a, b, c, d, e, g, h, i, j, k)	\
	PK__EACH_10(m, u, f, a, b, c, d, e, g, h, i, j) m(u, 10, k)
#define PK__EACH_12(m, u, f, a, b, c, d, e, g, h, i, j, k, l)	\
	PK__EACH_11(m, u, f, a, b, c, d, e, g, h, i, j, k) m(u, 11, l)
#define PK__EACH_13(m, u, f, a, b, c, d, e, g, h, i, j, k, l, o)	\
	PK__EACH_12(m, u, f, a, b, c, d, e, g, h, i, j, k, l) m(u, 12, o)

/*
 * PK__LEVEL_CALL(level, fmt, args...): PK__SITE for up to PK_SITE_ARGS
 * arguments, pk_printk() for more (up to 125: PK__NARGS counts no further).
 */
#define PK__LEVEL_CALL(level, ...)	\
	PK__CAT2(PK__SEL_, PK__NARGS(__VA_ARGS__))(level, __VA_ARGS__)
#define PK__PLAIN(level, ...)	pk_printk_loc(PK__THIS_MODULE, PK_SRCLOC, level, __VA_ARGS__)
#define PK__SEL_1	PK__SITE
#define PK__SEL_2	PK__SITE
#define PK__SEL_3	PK__SITE
#define PK__SEL_4	PK__SITE
#define PK__SEL_5	PK__SITE
#define PK__SEL_6	PK__SITE
#define PK__SEL_7	PK__SITE
#define PK__SEL_8	PK__SITE
#define PK__SEL_9	PK__SITE
#define PK__SEL_10	PK__SITE
#define PK__SEL_11	PK__SITE
#define PK__SEL_12	PK__SITE
#define PK__SEL_13	PK__SITE
#define PK__SEL_14	PK__PLAIN
#define PK__SEL_15	PK__PLAIN
#define PK__SEL_16	PK__PLAIN
#define PK__SEL_17	PK__PLAIN
#define PK__SEL_18	PK__PLAIN
#define PK__SEL_19	PK__PLAIN
#define PK__SEL_20	PK__PLAIN
#define PK__SEL_21	PK__PLAIN
#define PK__SEL_22	PK__PLAIN
#define PK__SEL_23	PK__PLAIN
#define PK__SEL_24	PK__PLAIN
#define PK__SEL_25	PK__PLAIN
#define PK__SEL_26	PK__PLAIN
#define PK__SEL_27	PK__PLAIN
#define PK__SEL_28	PK__PLAIN
#define PK__SEL_29	PK__PLAIN
#define PK__SEL_30	PK__PLAIN
#define PK__SEL_31	PK__PLAIN
#define PK__SEL_32	PK__PLAIN
#define PK__SEL_33	PK__PLAIN
#define PK__SEL_34	PK__PLAIN
#define PK__SEL_35	PK__PLAIN
#define PK__SEL_36	PK__PLAIN
#define PK__SEL_37	PK__PLAIN
#define PK__SEL_38	PK__PLAIN
#define PK__SEL_39	PK__PLAIN
#define PK__SEL_40	PK__PLAIN
#define PK__SEL_41	PK__PLAIN
#define PK__SEL_42	PK__PLAIN
#define PK__SEL_43	PK__PLAIN
#define PK__SEL_44	PK__PLAIN
#define PK__SEL_45	PK__PLAIN
#define PK__SEL_46	PK__PLAIN
#define PK__SEL_47	PK__PLAIN
#define PK__SEL_48	PK__PLAIN
#define PK__SEL_49	PK__PLAIN
#define PK__SEL_50	PK__PLAIN
#define PK__SEL_51	PK__PLAIN
#define PK__SEL_52	PK__PLAIN
#define PK__SEL_53	PK__PLAIN
#define PK__SEL_54	PK__PLAIN
#define PK__SEL_55	PK__PLAIN
#define PK__SEL_56	PK__PLAIN
#define PK__SEL_57	PK__PLAIN
#define PK__SEL_58	PK__PLAIN
#define PK__SEL_59	PK__PLAIN
#define PK__SEL_60	PK__PLAIN
#define PK__SEL_61	PK__PLAIN
#define PK__SEL_62	PK__PLAIN
#define PK__SEL_63	PK__PLAIN
#define PK__SEL_64	PK__PLAIN
#define PK__SEL_65	PK__PLAIN
#define PK__SEL_66	PK__PLAIN
#define PK__SEL_67	PK__PLAIN
#define PK__SEL_68	PK__PLAIN
#define PK__SEL_69	PK__PLAIN
#define PK__SEL_70	PK__PLAIN
#define PK__SEL_71	PK__PLAIN
#define PK__SEL_72	PK__PLAIN
#define PK__SEL_73	PK__PLAIN
#define PK__SEL_74	PK__PLAIN
#define PK__SEL_75	PK__PLAIN
#define PK__SEL_76	PK__PLAIN
#define PK__SEL_77	PK__PLAIN
#define PK__SEL_78	PK__PLAIN
#define PK__SEL_79	PK__PLAIN
#define PK__SEL_80	PK__PLAIN
#define PK__SEL_81	PK__PLAIN
#define PK__SEL_82	PK__PLAIN
#define PK__SEL_83	PK__PLAIN
#define PK__SEL_84	PK__PLAIN
#define PK__SEL_85	PK__PLAIN
#define PK__SEL_86	PK__PLAIN
#define PK__SEL_87	PK__PLAIN
#define PK__SEL_88	PK__PLAIN
#define PK__SEL_89	PK__PLAIN
#define PK__SEL_90	PK__PLAIN
#define PK__SEL_91	PK__PLAIN
#define PK__SEL_92	PK__PLAIN
#define PK__SEL_93	PK__PLAIN
#define PK__SEL_94	PK__PLAIN
#define PK__SEL_95	PK__PLAIN
#define PK__SEL_96	PK__PLAIN
#define PK__SEL_97	PK__PLAIN
#define PK__SEL_98	PK__PLAIN
#define PK__SEL_99	PK__PLAIN
#define PK__SEL_100	PK__PLAIN
#define PK__SEL_101	PK__PLAIN
#define PK__SEL_102	PK__PLAIN
#define PK__SEL_103	PK__PLAIN
#define PK__SEL_104	PK__PLAIN
#define PK__SEL_105	PK__PLAIN
#define PK__SEL_106	PK__PLAIN
#define PK__SEL_107	PK__PLAIN
#define PK__SEL_108	PK__PLAIN
#define PK__SEL_109	PK__PLAIN
#define PK__SEL_110	PK__PLAIN
#define PK__SEL_111	PK__PLAIN
#define PK__SEL_112	PK__PLAIN
#define PK__SEL_113	PK__PLAIN
#define PK__SEL_114	PK__PLAIN
#define PK__SEL_115	PK__PLAIN
#define PK__SEL_116	PK__PLAIN
#define PK__SEL_117	PK__PLAIN
#define PK__SEL_118	PK__PLAIN
#define PK__SEL_119	PK__PLAIN
#define PK__SEL_120	PK__PLAIN
#define PK__SEL_121	PK__PLAIN
#define PK__SEL_122	PK__PLAIN
#define PK__SEL_123	PK__PLAIN
#define PK__SEL_124	PK__PLAIN
#define PK__SEL_125	PK__PLAIN
#define PK__SEL_126	PK__PLAIN

/*
 * PK__SITE(level, fmt, args...): evaluate each argument once into a
 * temporary, then either the packed call or pk_printk() with the
 * temporaries (which -Wformat checks as it would the arguments).  The
 * names carry __COUNTER__, so that a call inside another's argument
 * shadows nothing (-Wshadow).
 */
#define PK__SITE(level, ...)	PK__SITE_(__COUNTER__, level, __VA_ARGS__)
#define PK__SITE_(u, level, ...)							\
	__extension__ ({								\
		int PK__V(pk__r, u);							\
		const struct pk_srcloc *PK__V(pk__l, u) = PK_SRCLOC;			\
		PK__EACH(PK__TMP, u, __VA_ARGS__)					\
		if (__builtin_constant_p(PK__FIRST(__VA_ARGS__))) {			\
			static struct pk_site PK__V(pk__s, u);				\
			static const unsigned char PK__V(pk__sig, u)[] = {		\
				PK__EACH(PK__SIG, u, __VA_ARGS__) 0 };			\
			union pk_arg PK__V(pk__a, u)[PK__NARGS(__VA_ARGS__)] = { { { 0 } } };	\
			PK__EACH(PK__PUT, u, __VA_ARGS__)				\
			PK__V(pk__r, u) = pk_printk_site_loc(PK__THIS_MODULE,		\
						PK__V(pk__l, u), &PK__V(pk__s, u), (level),	\
						PK__FIRST(__VA_ARGS__), PK__V(pk__sig, u),	\
						PK__NARGS(__VA_ARGS__) - 1, PK__V(pk__a, u));	\
		} else {								\
			PK__V(pk__r, u) = PK_SITE_VARIADIC;				\
		}									\
		if (PK__V(pk__r, u) == PK_SITE_VARIADIC)				\
			PK__V(pk__r, u) = pk_printk_loc(PK__THIS_MODULE, PK__V(pk__l, u),	\
					   (level), PK__FIRST(__VA_ARGS__)			\
					   PK__EACH(PK__USE, u, __VA_ARGS__));		\
		PK__V(pk__r, u);							\
	})
#else
#define PK__LEVEL_CALL(level, ...)	pk_printk_loc(PK__THIS_MODULE, PK_SRCLOC, level, __VA_ARGS__)
#endif

/*
 * PK__MOD_CALL(level, fmt, args...): the call, if this file's module (if
 * any) lets @level through; else nothing is evaluated.
 */
#define PK__MOD_CALL(level, ...)						\
	(pk__mod_pass(PK__THIS_MODULE, (level)) ? PK__LEVEL_CALL(level, __VA_ARGS__)	\
		: pk_module_dropped(PK__MOD_FMT(__VA_ARGS__, "")))
#define PK__MOD_FMT(fmt, ...)	(fmt)

#define pk_emerg(...)	PK__MOD_CALL(PK_EMERG, __VA_ARGS__)
#define pk_alert(...)	PK__PICK(1, PK__MOD_CALL, PK__STRIPPED)(PK_ALERT, __VA_ARGS__)
#define pk_crit(...)	PK__PICK(2, PK__MOD_CALL, PK__STRIPPED)(PK_CRIT, __VA_ARGS__)
#define pk_err(...)	PK__PICK(3, PK__MOD_CALL, PK__STRIPPED)(PK_ERR, __VA_ARGS__)
#define pk_warn(...)	PK__PICK(4, PK__MOD_CALL, PK__STRIPPED)(PK_WARNING, __VA_ARGS__)
#define pk_notice(...)	PK__PICK(5, PK__MOD_CALL, PK__STRIPPED)(PK_NOTICE, __VA_ARGS__)
#define pk_info(...)	PK__PICK(6, PK__MOD_CALL, PK__STRIPPED)(PK_INFO, __VA_ARGS__)
#define pk_debug(...)	PK__PICK(7, PK__MOD_CALL, PK__STRIPPED)(PK_DEBUG, __VA_ARGS__)
/*
 * pk_cont() - append to this thread's open record (one stored without a
 * trailing newline), or start a record flagged PK_REC_CONT if it can no
 * longer be extended.
 */
#define pk_cont(...)	pk_printk_mod(PK__THIS_MODULE, PK_LEVEL_CONT, __VA_ARGS__)

/**
 * pk_flush() - wait until every console has printed every record stored
 * before the call, printing like any caller (handing over to a waiter) and
 * passing what remains to the library's rescue thread at the deadline.
 * @timeout_ms: < 0 waits for ever; otherwise the call returns by then
 *              (plus at most one record's write).
 * Before initialisation (or after pk_shutdown()) it initialises the
 * library, as pk_printk() does.
 * Context: any thread, not from a signal handler.
 * Return: 0 when every console has caught up; -ETIMEDOUT if one had not
 * by the deadline; -EDEADLK from inside a console's write() (it would
 * wait for itself); -ENOMEM, -EAGAIN or a store error if the library
 * could not be initialised.
 */
int pk_flush(int timeout_ms);

/**
 * pk_shutdown() - flush (at most 10 s in all, or 5 s without progress),
 * stop the library's threads, unregister every console (calling its
 * release()) and release the store.  pk_printk() after it initialises
 * afresh.  It does nothing before initialisation, or from inside a
 * console's write().  Readers of this process's store (pk_reader_open())
 * must be closed before it.
 * Context: one thread, not from a signal handler, with no concurrent
 * pk_printk() or pk_init().
 * Return: nothing.
 */
void pk_shutdown(void);

/**
 * pk_emergency_enter() / pk_emergency_exit() - records this thread stores
 * in between are printed by the caller at once, in every mode (taking
 * each console over at a record boundary, by force if its owner does not
 * yield in time), and are flagged PK_REC_EMERG.  Nests: a per-thread
 * count; an exit without an enter is ignored.
 * Context: any thread, async-signal-safe, lock-free (a thread-local count).
 * Return: nothing.
 */
void pk_emergency_enter(void);
void pk_emergency_exit(void);

/**
 * pk_panic() - store "Kernel panic - not syncing: <message>" and a
 * backtrace, stop normal printing, take every console (by hostile
 * takeover if its owner is stuck), print everything pending and abort()
 * (SIGABRT with its default action: the crash handler does not run
 * again).  Before initialisation everything goes to stderr.  If another
 * thread is panicking already, the message is stored, and the caller
 * waits 10 s for that thread to finish and then aborts.
 * @fmt: printf-style format of the message (NULL prints "(null)").
 * Context: any thread or signal handler, emergency-safe.
 * Return: does not return.
 */
PK__NORETURN void pk_panic(const char *fmt, ...) PK__PRINTF(1, 2);

/**
 * pk_crash_handler_install() - on SIGSEGV, SIGBUS, SIGILL, SIGFPE and
 * SIGABRT print the signal, fault address, thread and a backtrace, flush
 * everything pending, then re-raise the signal with its default action
 * (so core dumps still work).  The handlers replace the program's own for
 * those signals (they do not chain to them) and run on an alternate
 * signal stack (64 KiB, set for the first thread that calls this), so
 * that thread's stack overflow is reported too.  Calling it again
 * installs the handlers again.  PK_CFG_CRASH_HANDLER and PK_CRASH_HANDLER=1
 * call it at init.
 * Context: any thread, not from a signal handler (it may load libgcc for
 * backtrace() first, so that the handler does not have to).
 * Return: 0, or a negative errno from sigaction() (-EINVAL).
 */
int pk_crash_handler_install(void);

/** Counters of the record store. */
struct pk_stats {
	uint64_t first_seq;	/* seq of the first record this store held */
	uint64_t next_seq;	/* seq the next record will get */
	uint64_t oldest_seq;	/* oldest record still in the store */
	uint64_t stored;	/* seqs handed out (next_seq - first_seq) */
	uint64_t overwritten;	/* records whose space newer records took */
	uint64_t truncated;	/* records cut at PK_RECORD_MAX */
	uint64_t lost;		/* reserved but overrun before commit */
	uint64_t reserve_failed;/* reservations that found no slot */
	uint64_t refused;	/* calls refused (bad format) */
	uint64_t suppressed;	/* calls not stored while another thread panicked */
	uint64_t data_size;	/* data ring bytes */
	uint64_t desc_count;	/* descriptor ring entries */
	uint64_t eager;		/* records formatted at the call, not deferred */
	/*
	 * Entries of the configured console list (PK_CONSOLE or
	 * pk_config.consoles) that the last pk_init(), or the first
	 * pk_printk(), could not set up: a bad entry, or a file: that could
	 * not be opened.  Each was named on stderr; not 0 means a console the
	 * user or the program asked for is missing.
	 */
	uint64_t consoles_failed;
	uint64_t reserved[6];	/* zero: later counters */
};

/**
 * pk_stats_get() - read the record store's counters.
 * @st: filled, reserved zeroed; each counter read on its own (relaxed),
 *      not a snapshot of all at one instant.
 * Context: any thread, async-signal-safe, lock-free.
 * Return: 0; -EINVAL for a NULL @st; -ENODEV before initialisation,
 * after pk_shutdown(), or while pk_init() is changing the store.
 */
int pk_stats_get(struct pk_stats *st);

/** Counters of the flush machinery (all modes), since init or reset. */
struct pk_flush_stats {
	uint64_t handoffs;		/* handoff: owner passed a console to a waiter */
	uint64_t waits;			/* callers that became the waiter */
	uint64_t wait_timeouts;		/* waiters that gave up; record left stored */
	uint64_t takeovers;		/* hostile takeovers (panic, crash) */
	uint64_t budget_deferrals;	/* handoff budget passed the rest to a thread */
	uint64_t direct_records;	/* records printed by pk_printk callers */
	uint64_t thread_records;	/* records printed by printer threads */
	uint64_t max_print_ns;		/* longest time one call spent printing */
	uint64_t max_call_records;	/* most records one call printed (callers only) */
	uint64_t stuck_skips;		/* callers that returned: owner stuck in write */
	uint64_t dead_owners;		/* console lock or consoles taken from a thread that was gone */
	uint64_t reserved[7];		/* zero: later counters */
};

/**
 * pk_flush_stats_get() - read the flush machinery's counters.
 * @st: filled, reserved zeroed; each counter read on its own (relaxed),
 *      not a snapshot.  They count since the library was last initialised
 *      from scratch (the first pk_init(), or the first after
 *      pk_shutdown()) or pk_flush_stats_reset(); a pk_init() that
 *      reconfigures a running library keeps them.  All zero before
 *      initialisation.
 * Context: any thread, async-signal-safe, lock-free.
 * Return: 0, or -EINVAL for a NULL @st.
 */
int pk_flush_stats_get(struct pk_flush_stats *st);

/**
 * pk_flush_stats_reset() - set the flush counters and the printer shares
 * (pk_printer_shares()) to zero.  Counters that other threads update
 * meanwhile may keep an increment made during the call.
 * Context: any thread, async-signal-safe, lock-free.
 * Return: nothing.
 */
void pk_flush_stats_reset(void);

/** Console bytes written by one thread (printer share). */
struct pk_printer_share {
	uint32_t tid;
	unsigned printer_thread;	/* 1 for a libprintk printer thread */
	uint64_t bytes;
	uint64_t records;
	uint64_t reserved[2];		/* zero: later fields */
};
/**
 * pk_printer_shares() - bytes and records each thread wrote to consoles.
 * @out: up to @max entries to fill (reserved zeroed), in no particular
 *       order; NULL only counts.
 * @max: how many entries @out holds.
 *
 * Counts since the process started or the last pk_flush_stats_reset()
 * (pk_shutdown() and pk_init() keep them).  Only threads that wrote at
 * least one byte are listed; up to 512 threads are told apart, later ones
 * are not counted per thread.  Each entry is read without a lock while
 * printing goes on.
 * Context: any thread, async-signal-safe, lock-free.
 * Return: the number of threads that wrote something (may exceed @max:
 * call again with a larger array to see them all).
 */
int pk_printer_shares(struct pk_printer_share *out, int max);

/**
 * pk_strerror() - a message for a negative errno returned by libprintk.
 * @err: the errno, negative or positive.
 *
 * ENOBUFS, EAGAIN, EALREADY, ENODEV, EPROTO, EBUSY, EPIPE and ETIMEDOUT,
 * which libprintk's calls return with meanings of their own, get the C
 * library's words followed by those meanings, naming the calls where
 * they differ ("Device or resource busy (pk_printk(): another thread is
 * panicking; pk_init(), ...)"), so that the text is true for every call
 * that returns the code.  Every other errno gets the C library's
 * description (strerrordesc_np(), untranslated), and a number it does
 * not know "unknown error".
 *
 * Context: any thread, async-signal-safe (static strings; no locale).
 * Return: a static string, never NULL.
 */
const char *pk_strerror(int err);

#if defined(PK_BUILDING_LIB) && defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* PRINTK_PRINTK_H */
