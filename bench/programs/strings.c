/* strings: exporting customer records to CSV and importing them again.
 *
 * Why it is realistic: this is the string handling of a reporting or ETL
 * job written in plain C.  Each record is formatted into a fixed line
 * buffer (cleared first, "to be safe"), with memcpy for text fields, a
 * zero-padded invoice number behind a constant prefix, and snprintf for
 * money and dates; the line is appended to the export buffer.  The import
 * splits the buffer into lines and fields with a strsep-like tokenizer on
 * strchr, copies fields into fixed-size struct members (cleared first),
 * parses numbers by hand, upper-cases city names in place with the classic
 * `i < strlen(s)` loop, compares each imported record with the original
 * and totals the amounts per city with a linear lookup by name.  SCALE
 * multiplies the rounds; each round makes new records from its own seed.
 *
 * Wasted operations by design (rough shares; the oracle measures them):
 *  - dead stores:
 *    * format_record's memset of the whole 256-byte line buffer: the
 *      ~80 bytes of the line overwrite it without a read; the rest is
 *      cleared again for the next record without having been read.
 *    * parse_record's memset of each struct member before copying the
 *      field into it.
 *    Together probably the largest share of this program's stores;
 *    snprintf's internals (vfprintf's work buffer) add dead and silent
 *    stores of their own.
 *  - silent stores:
 *    * format_record rewrites the constant "INV-2024-" prefix, and the
 *      leading zeros of the invoice number, into the same bytes of the
 *      line buffer every record; the memset's zeros over the tail are
 *      silent too.
 *    * upcase_in_place stores every character, also those that are
 *      already upper case (the first letter, spaces, hyphens).
 *  - redundant loads:
 *    * strlen computed again and again on the same unchanged string:
 *      upcase_in_place's loop condition, and format_record's append of the
 *      finished line (length taken for the bounds check and for the copy).
 *    * city_totals' linear lookup compares the key with the same few
 *      table names for every record.
 *    * compare_records reloads the original records written long before.
 *
 * Usage: strings [SCALE]     (SCALE >= 1, default 1: about 0.5 s natively)
 *
 * Kernels are noinline, for stable calling contexts, and noclone: without
 * it GCC specialises some into name.constprop.0 clones, and reports would
 * not show the names used here.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> /* strcasecmp */

#include "bench_common.h"

#define NRECORDS 20000
#define ROUNDS_PER_SCALE 48
#define LINE_MAX_LEN 256
#define MAX_CITIES 32
#define INVOICE_PREFIX "INV-2024-"

struct customer {
	uint32_t invoice;
	char name[40];
	char city[24];
	char country[4];
	int64_t amount_cents;
	int year, month, day;
};

struct city_total {
	char city[24];
	int64_t cents;
	uint32_t count;
};

static const char *const first_names[] = {
	"Anna", "Ben", "Clara", "David", "Emma", "Felix", "Greta", "Hugo",
	"Ida", "Jonas", "Karla", "Lukas", "Mia", "Noah", "Olga", "Paul",
};
static const char *const last_names[] = {
	"Schmidt", "Meyer", "Weber", "Fischer", "Wagner", "Becker", "Hoffmann",
	"Schulz", "Koch", "Richter", "Klein", "Wolf", "Neumann", "Braun",
};
static const struct {
	const char *city, *country;
} places[] = {
	{ "Berlin", "DE" },   { "Hamburg", "DE" },     { "Munich", "DE" },
	{ "Cologne", "DE" },  { "Vienna", "AT" },      { "Graz", "AT" },
	{ "Zurich", "CH" },   { "Basel", "CH" },       { "Lyon", "FR" },
	{ "Paris", "FR" },    { "Milan", "IT" },       { "Rome", "IT" },
	{ "Porto", "PT" },    { "Krakow", "PL" },      { "Brno", "CZ" },
	{ "Frankfurt am Main", "DE" }, { "Saint-Etienne", "FR" },
	{ "Den Haag", "NL" },
};
#define NPLACES (sizeof places / sizeof places[0])

__attribute__((noinline, noclone)) static void
generate_customers(struct customer *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t x = bench_next();
		c[i].invoice = (uint32_t)(i * 7 + x % 7);
		snprintf(c[i].name, sizeof c[i].name, "%s %s",
			 first_names[x % 16], last_names[(x >> 4) % 14]);
		size_t p = (size_t)((x >> 8) % NPLACES);
		/* a skewed choice: the first cities are the big ones */
		if ((x >> 16) % 3 == 0)
			p %= 4;
		strcpy(c[i].city, places[p].city);
		strcpy(c[i].country, places[p].country);
		c[i].amount_cents = (int64_t)((x >> 20) % 5000000);
		c[i].year = 2024;
		c[i].month = 1 + (int)((x >> 44) % 12);
		c[i].day = 1 + (int)((x >> 50) % 28);
	}
}

/* Zero-padded decimal of exactly width digits; returns width. */
static size_t format_padded(char *out, uint32_t v, size_t width)
{
	for (size_t i = width; i-- > 0;) {
		out[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return width;
}

static size_t append_field(char *line, size_t len, const char *text)
{
	size_t n = strlen(text);
	if (len + n + 1 >= LINE_MAX_LEN)
		n = LINE_MAX_LEN - len - 2;
	memcpy(line + len, text, n);
	line[len + n] = ',';
	return len + n + 1;
}

/* One CSV line, appended to out; returns the new length of out, or 0 when
 * out is full. */
__attribute__((noinline, noclone)) static size_t
format_record(const struct customer *c, char *out, size_t out_len,
	      size_t out_cap)
{
	char line[LINE_MAX_LEN];
	memset(line, 0, sizeof line);
	size_t len = sizeof INVOICE_PREFIX - 1;
	memcpy(line, INVOICE_PREFIX, len);
	len += format_padded(line + len, c->invoice, 8);
	line[len++] = ',';
	len = append_field(line, len, c->name);
	len = append_field(line, len, c->city);
	len = append_field(line, len, c->country);
	len += (size_t)snprintf(line + len, sizeof line - len,
				"%lld.%02lld,%04d-%02d-%02d",
				(long long)(c->amount_cents / 100),
				(long long)(c->amount_cents % 100), c->year,
				c->month, c->day);
	if (out_len + strlen(line) + 1 > out_cap)
		return 0;
	memcpy(out + out_len, line, strlen(line));
	out_len += strlen(line);
	out[out_len++] = '\n';
	return out_len;
}

/* strsep on a set of one character: returns the field, NUL-terminated in
 * place, and advances *cursor past the separator (NULL after the last). */
static char *next_field(char **cursor, char sep)
{
	char *field = *cursor;
	if (!field)
		return NULL;
	char *end = strchr(field, sep);
	if (end) {
		*end = '\0';
		*cursor = end + 1;
	} else {
		*cursor = NULL;
	}
	return field;
}

static void copy_field(char *dst, size_t size, const char *src)
{
	memset(dst, 0, size);
	size_t n = strlen(src);
	memcpy(dst, src, n < size - 1 ? n : size - 1);
}

static int64_t parse_decimal(const char **s)
{
	int64_t v = 0;
	while (**s >= '0' && **s <= '9')
		v = v * 10 + (*(*s)++ - '0');
	return v;
}

/* Parses one line (modified in place).  Returns 0 if it is malformed. */
__attribute__((noinline, noclone)) static int parse_record(char *line,
							   struct customer *c)
{
	char *cursor = line;
	char *invoice = next_field(&cursor, ',');
	char *name = next_field(&cursor, ',');
	char *city = next_field(&cursor, ',');
	char *country = next_field(&cursor, ',');
	char *amount = next_field(&cursor, ',');
	char *date = next_field(&cursor, ',');
	if (!date || strncmp(invoice, INVOICE_PREFIX,
			     sizeof INVOICE_PREFIX - 1) != 0)
		return 0;
	const char *p = invoice + sizeof INVOICE_PREFIX - 1;
	c->invoice = (uint32_t)parse_decimal(&p);
	copy_field(c->name, sizeof c->name, name);
	copy_field(c->city, sizeof c->city, city);
	copy_field(c->country, sizeof c->country, country);
	p = amount;
	c->amount_cents = parse_decimal(&p) * 100;
	if (*p++ != '.')
		return 0;
	c->amount_cents += parse_decimal(&p);
	p = date;
	c->year = (int)parse_decimal(&p);
	p++;
	c->month = (int)parse_decimal(&p);
	p++;
	c->day = (int)parse_decimal(&p);
	return 1;
}

/* Splits the export into lines and parses each; returns the count. */
__attribute__((noinline, noclone)) static size_t
parse_export(char *text, struct customer *out, size_t max)
{
	size_t n = 0;
	char *cursor = text;
	char *line;
	while (n < max && (line = next_field(&cursor, '\n')) && *line) {
		if (!parse_record(line, &out[n]))
			break;
		n++;
	}
	return n;
}

/* The loop condition calls strlen on every iteration: the compiler cannot
 * hoist it, since the loop stores into the string. */
__attribute__((noinline, noclone)) static void upcase_in_place(char *s)
{
	for (size_t i = 0; i < strlen(s); i++)
		s[i] = (char)toupper((unsigned char)s[i]);
}

/* Number of imported records that differ from the originals. */
__attribute__((noinline, noclone)) static size_t
compare_records(const struct customer *orig, const struct customer *imp,
		size_t n)
{
	size_t diffs = 0;
	for (size_t i = 0; i < n; i++) {
		const struct customer *a = &orig[i], *b = &imp[i];
		if (a->invoice != b->invoice || strcmp(a->name, b->name) != 0 ||
		    strcasecmp(a->city, b->city) != 0 ||
		    strcmp(a->country, b->country) != 0 ||
		    a->amount_cents != b->amount_cents || a->year != b->year ||
		    a->month != b->month || a->day != b->day)
			diffs++;
	}
	return diffs;
}

__attribute__((noinline, noclone)) static size_t
city_totals(const struct customer *c, size_t n, struct city_total *totals)
{
	size_t ncities = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k;
		for (k = 0; k < ncities; k++)
			if (strcmp(totals[k].city, c[i].city) == 0)
				break;
		if (k == ncities) {
			if (ncities == MAX_CITIES)
				continue;
			memset(&totals[k], 0, sizeof totals[k]);
			strcpy(totals[k].city, c[i].city);
			ncities++;
		}
		totals[k].cents += c[i].amount_cents;
		totals[k].count++;
	}
	return ncities;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

int main(int argc, char **argv)
{
	long scale = bench_parse_scale("strings", argc, argv);
	long rounds = scale * ROUNDS_PER_SCALE;
	size_t export_cap = (size_t)NRECORDS * LINE_MAX_LEN;
	struct customer *orig = malloc(NRECORDS * sizeof *orig);
	struct customer *imported = malloc(NRECORDS * sizeof *imported);
	char *export = malloc(export_cap + 1);
	if (!orig || !imported || !export) {
		fprintf(stderr, "strings: out of memory\n");
		return 1;
	}

	uint64_t checksum = 0xcbf29ce484222325ULL;
	size_t bytes = 0;
	for (long round = 0; round < rounds; round++) {
		bench_seed(4242 + (uint64_t)round);
		generate_customers(orig, NRECORDS);

		size_t len = 0;
		for (size_t i = 0; i < NRECORDS; i++) {
			len = format_record(&orig[i], export, len, export_cap);
			if (len == 0) {
				fprintf(stderr, "strings: export full\n");
				return 1;
			}
		}
		export[len] = '\0';
		checksum = fnv1a(checksum, export, len);
		bytes += len;

		size_t n = parse_export(export, imported, NRECORDS);
		if (n != NRECORDS) {
			fprintf(stderr, "strings: round %ld: parsed %zu of %d "
				"records\n", round, n, NRECORDS);
			return 1;
		}
		for (size_t i = 0; i < n; i++)
			upcase_in_place(imported[i].city);
		size_t diffs = compare_records(orig, imported, n);
		if (diffs != 0) {
			fprintf(stderr, "strings: round %ld: %zu records "
				"differ after the round trip\n", round, diffs);
			return 1;
		}

		struct city_total totals[MAX_CITIES];
		size_t ncities = city_totals(imported, n, totals);
		for (size_t k = 0; k < ncities; k++) {
			checksum = fnv1a(checksum, totals[k].city,
					 strlen(totals[k].city));
			checksum = fnv1a(checksum, &totals[k].cents,
					 sizeof totals[k].cents);
			checksum = fnv1a(checksum, &totals[k].count,
					 sizeof totals[k].count);
		}
	}
	printf("strings: rounds=%ld records=%d bytes=%zu checksum=%016llx\n",
	       rounds, NRECORDS, bytes, (unsigned long long)checksum);
	free(export);
	free(imported);
	free(orig);
	return 0;
}
