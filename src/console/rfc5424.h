/* SPDX-License-Identifier: MIT */
/*
 * rfc5424.h - RFC 5424 syslog messages from a console's rendering of a
 * record (rfc5424.c), shared by the network syslog console
 * (syslog_net.c) and its tests.  Async-signal-safe: no malloc, no locale,
 * no stdio.
 */
#ifndef PK_CONSOLE_RFC5424_H
#define PK_CONSOLE_RFC5424_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The SD-ID of the record's fields: RFC 5612's documentation enterprise. */
#define PK_RFC5424_SD_ID	"printk@32473"
/* A record's fields (pk_printk_fields()), one SD-PARAM each. */
#define PK_RFC5424_FIELDS_SD_ID	"fields@32473"
/* A record's call site (printk.h, SOURCE LOCATIONS): file, line, func. */
#define PK_RFC5424_CODE_SD_ID	"code@32473"
/* Longest message (header, structured data, text), without TCP framing. */
#define PK_RFC5424_MSG_MAX	8192

/* Who sends: the fixed fields of every message, ready to print. */
struct pk__rfc5424_id {
	int facility;		/* 0-23; < 0: the record's own */
	bool bom;		/* put a UTF-8 BOM before the text */
	char hostname[256];	/* printable ASCII, no space (RFC 5424 HOSTNAME) */
	char app[49];		/* RFC 5424 APP-NAME: at most 48 */
	unsigned pid;		/* PROCID when a line carries no pid */
};

/*
 * Fill @id's name fields: @hostname and @app as given (NULL: "-"), cut
 * to the field's length, with every byte outside printable ASCII (and a
 * space) replaced by '_'.
 */
void pk__rfc5424_id_names(struct pk__rfc5424_id *id, const char *hostname, const char *app);

/*
 * pk__rfc5424_render() - one console line as one RFC 5424 message.
 * @line: the console's PK_FMT_JSON rendering of a record (with the
 *        "time" member of PK_FMT_F_RFC3339, else the TIMESTAMP is "-"), or
 *        its drop notice {"dropped":N}; any other line (a console whose
 *        format was changed) is sent as the text of a notice-level
 *        message without structured data.
 * The text is UTF-8: JSON's escapes are decoded back (the JSON rendering
 * already replaced bytes that are not UTF-8 by U+FFFD); a text too long
 * for @size is cut at a character boundary.
 * Return: the message's length in @out (no NUL, no newline); 0 if @size
 * cannot hold a header.
 */
size_t pk__rfc5424_render(const struct pk__rfc5424_id *id, const char *line, size_t len,
			  char *out, size_t size);

/* "** N printk messages dropped **" as a warning with [printk@32473 dropped="N"]. */
size_t pk__rfc5424_dropped(const struct pk__rfc5424_id *id, uint64_t n, char *out, size_t size);

/*
 * An SD-PARAM value as RFC 5424 section 6.3.3 wants it: '"', '\' and ']'
 * escaped with a backslash.  Return: bytes written to @out (at most @size;
 * never splits an escape).
 */
size_t pk__rfc5424_sd_escape(char *out, size_t size, const char *v, size_t n);

#endif /* PK_CONSOLE_RFC5424_H */
