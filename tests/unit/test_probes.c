/* test_probes: the machine's measurements handed to child processes
 * (probes.h).
 *
 * 1. Measure (costmodel_init, memlat_init), hand down: WITCH_PROBES holds
 *    them; a process that takes them back has the same numbers, bit for
 *    bit (each double's bits in hex), and sysfs's answer on a CPU PMU
 *    (the line's field, 0 or 1, whatever this machine has).  The
 *    watchpoint probe's answers (set here as a table's rows, whatever this
 *    machine's debug registers do) go down and come back as they were;
 *    '-' where it did not run.
 *    What an armed debug register adds to a fault and to a byte (drcost.h)
 *    goes down as -1 both where nothing priced, and as set where it was:
 *    taken back, the prices are the line's and say they were handed.
 * 2. Which boot a line is of: its boot's epoch within 1 s of this one's
 *    decides, else boot_id.  Rows of values that must be refused, each
 *    leaving the caller to measure: another format, another boot, an
 *    epoch not hex, a PMU field not 0 or 1, a
 *    watchpoint field not '-', 0 or 1, breakpoints that trap at no price,
 *    a number out of the probes' ranges (the clock; a fault's armed price
 *    of 1 s; a byte's of -1 where the fault's is set), not hex, a NaN, a cut line,
 *    trailing junk, an empty variable.
 * 3. A child process started with a valid WITCH_PROBES measures nothing
 *    (costmodel_init says its line at WITCH_VERBOSE=1; the child's runtime
 *    is libwitch.so itself, WITCH_TEST_LIB) and one with a refused value
 *    measures.  With watchpoints asked for, a child handed "they never
 *    trap" says so (where they do trap, it took the line's word for it),
 *    and one handed "they trap" does not (where they never do, it took
 *    the line's word and probed nothing): one of the two fails on every
 *    machine if the answer is not taken.
 * 4. The short form (probes_hand_down_no_traps: "they never trap" alone,
 *    what the process that found it hands its children and its exec):
 *    taken back as -ENODATA with the answer set and marked handed; with
 *    "1" in its traps field, refused.  A child handed it with watchpoints
 *    asked for says nothing at all (said once, where found), and one with
 *    none asked for measures the machine (the form carries no numbers).
 */
#include "check.h"
#include "witch/costmodel.h"
#include "witch/drcost.h"
#include "witch/memlat.h"
#include "witch/pmu_sysfs.h"
#include "witch/probes.h"
#include "witch/watchpoint.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char handed[1024];
/* The line's layout: "p7 ", the boot id, then fields each after a space;
 * from its end: a fault's and a byte's armed prices, then a hit's. */
enum { BOOT_AT = 3, EPOCH_AT = 40, PMU_AT = 57, TRAPS_AT = 59, SIGTRAP_AT = 61, FIRST_AT = 63 };
enum { DR_FAULT_FROM_END = 50, DR_BYTE_FROM_END = 33 };
#define NOT_PRICED "bff0000000000000" /* -1.0 */

static void test_round_trip(void)
{
	double cm[COSTMODEL_PROBES], cm2[COSTMODEL_PROBES], ml[MEMLAT_PROBES], ml2[MEMLAT_PROBES];
	double other[COSTMODEL_PROBES] = {2, 6, 6, 6, 6, 6, 6, 6, 6, 6, 4, 32, 30, 16, 14, 24};
	CHECK(__LINE__, costmodel_init() == 0, "costmodel_init");
	int have_tsc = memlat_init() == 0;
	CHECK(__LINE__, probes_hand_down() == 0, "probes_hand_down");
	const char *v = getenv(PROBES_ENV);
	CHECK(__LINE__, v && strncmp(v, "p7 ", 3) == 0, "WITCH_PROBES: %s", v ? v : "(unset)");
	if (!v)
		return;
	/* Nothing priced in this process: -1 both. */
	size_t vlen = strlen(v);
	CHECK(__LINE__, vlen > FIRST_AT + DR_FAULT_FROM_END &&
			strncmp(v + vlen - DR_FAULT_FROM_END, NOT_PRICED " " NOT_PRICED " ", 34) == 0,
	      "no price, yet the line's armed prices are not -1 -1: %s", v);
	snprintf(handed, sizeof(handed), "%s", v);
	costmodel_probes_get(cm);
	int mrc = memlat_probes_get(ml);
	CHECK(__LINE__, have_tsc ? mrc == 0 : mrc == -ENOTSUP, "memlat_probes_get: %d", mrc);
	/* Other values in between, then the handed ones back. */
	CHECK(__LINE__, costmodel_probes_set(other) == 0, "valid costmodel numbers refused");
	CHECK(__LINE__, probes_take_inherited() == 0, "the handed-down line refused: %s", handed);
	costmodel_probes_get(cm2);
	CHECK(__LINE__, memcmp(cm, cm2, sizeof(cm)) == 0,
	      "costmodel's numbers changed through the environment: %s", handed);
	if (have_tsc)
		CHECK(__LINE__, memlat_probes_get(ml2) == 0 && memcmp(ml, ml2, sizeof(ml)) == 0,
		      "memlat's numbers changed through the environment: %s", handed);
	/* The PMU field: sysfs's answer handed down, and either answer taken
	 * as given (its 0 or 1 at PMU_AT). */
	int has = pmu_sysfs_has_cpu_pmu();
	CHECK(__LINE__, strlen(handed) > PMU_AT && handed[PMU_AT] == '0' + has,
	      "the line's PMU field is not sysfs's %d: %s", has, handed);
	for (int want = 0; want <= 1 && strlen(handed) > PMU_AT; want++) {
		char line[1024];
		snprintf(line, sizeof(line), "%s", handed);
		line[PMU_AT] = (char)('0' + want);
		setenv(PROBES_ENV, line, 1);
		CHECK(__LINE__, probes_take_inherited() == 0 && pmu_sysfs_has_cpu_pmu() == want,
		      "PMU field %d not taken: %s", want, line);
	}
	pmu_sysfs_set_root(NULL); /* sysfs asked again */
	setenv(PROBES_ENV, handed, 1);
}

/* The watchpoint probe's answers through the line: traps, sigtrap and a
 * hit's price as set, in the fields at TRAPS_AT and SIGTRAP_AT and the
 * last number. */
static void test_watchpoint_fields(void)
{
	static const struct {
		int line;
		int traps, sigtrap;
		double hit_ns;
		const char *fields; /* at TRAPS_AT..SIGTRAP_AT */
	} rows[] = {
		{__LINE__, 1, 1, 250.0, "1 1"},
		{__LINE__, 1, 0, 3000.5, "1 0"},
		{__LINE__, 1, -1, 17.25, "1 -"},
		{__LINE__, 0, -1, 0, "0 -"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int line = rows[i].line, traps = -2, sigtrap = -2;
		double ns = -1;
		CHECK(line, watchpoint_probe_set(rows[i].traps, rows[i].sigtrap, rows[i].hit_ns) == 0,
		      "valid answers refused");
		CHECK(line, probes_hand_down() == 0, "probes_hand_down");
		const char *v = getenv(PROBES_ENV);
		CHECK(line, v && strlen(v) > FIRST_AT && strncmp(v + TRAPS_AT, rows[i].fields, 3) == 0,
		      "fields '%s' not in %s", rows[i].fields, v ? v : "(unset)");
		char line_copy[1024];
		snprintf(line_copy, sizeof(line_copy), "%s", v ? v : "");
		/* Other answers in between, then the line's back. */
		CHECK(line, watchpoint_probe_set(!rows[i].traps, 1, 99.0) == 0, "valid answers refused");
		setenv(PROBES_ENV, line_copy, 1);
		CHECK(line, probes_take_inherited() == 0 && watchpoint_probe_get(&traps, &sigtrap, &ns) == 0,
		      "the line refused: %s", line_copy);
		CHECK(line, traps == rows[i].traps && sigtrap == rows[i].sigtrap && ns == rows[i].hit_ns,
		      "took %d %d %g, want %d %d %g", traps, sigtrap, ns, rows[i].traps,
		      rows[i].sigtrap, rows[i].hit_ns);
	}
	CHECK(__LINE__, watchpoint_probe_set(1, 0, 0) == -EINVAL, "trapping at no price taken");
	CHECK(__LINE__, watchpoint_probe_set(2, 0, 100) == -EINVAL, "traps 2 taken");
	CHECK(__LINE__, watchpoint_probe_set(1, -2, 100) == -EINVAL, "sigtrap -2 taken");
	setenv(PROBES_ENV, handed, 1);
}

/* The armed prices through the line (drcost_price_set as a parent's
 * measure, then handed down and taken back over other prices), and what
 * the taker says of where its prices came from. */
static void test_drcost_fields(void)
{
	static const struct {
		int line;
		double fault_ns, byte_ns;
		const char *fault_hex, *byte_hex;
	} rows[] = {
		{__LINE__, 777.0, 0.5, "4088480000000000", "3fe0000000000000"},
		{__LINE__, 0.0, 0.0, "0000000000000000", "0000000000000000"}, /* an Intel core's */
		{__LINE__, 1e6, 1e3, "412e848000000000", "408f400000000000"}, /* the range's ends */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int line = rows[i].line;
		double f = -1, b = -1;
		CHECK(line, drcost_price_set(rows[i].fault_ns, rows[i].byte_ns) == 0, "valid prices refused");
		CHECK(line, probes_hand_down() == 0, "probes_hand_down");
		const char *v = getenv(PROBES_ENV);
		size_t len = v ? strlen(v) : 0;
		CHECK(line, len > FIRST_AT + DR_FAULT_FROM_END &&
				strncmp(v + len - DR_FAULT_FROM_END, rows[i].fault_hex, 16) == 0 &&
				strncmp(v + len - DR_BYTE_FROM_END, rows[i].byte_hex, 16) == 0,
		      "prices %s %s not in %s", rows[i].fault_hex, rows[i].byte_hex, v ? v : "(unset)");
		char copy[1024];
		snprintf(copy, sizeof(copy), "%s", v ? v : "");
		CHECK(line, drcost_price_set(5.0, 5.0) == 0, "valid prices refused");
		setenv(PROBES_ENV, copy, 1);
		CHECK(line, probes_take_inherited() == 0 && drcost_price_get(&f, &b) == 0,
		      "the line refused: %s", copy);
		CHECK(line, f == rows[i].fault_ns && b == rows[i].byte_ns &&
				drcost_fault_ns() == f && drcost_byte_ns() == b,
		      "took %g %g, want %g %g", f, b, rows[i].fault_ns, rows[i].byte_ns);
		CHECK(line, drcost_price_source() == DRCOST_HANDED && drcost_priced(),
		      "handed prices said to be from %d", (int)drcost_price_source());
	}
	CHECK(__LINE__, drcost_price_set(-0.5, 1) == -EINVAL, "a negative fault price taken");
	CHECK(__LINE__, drcost_price_set(1, 1000.5) == -EINVAL, "a byte at 1000.5 ns taken");
	CHECK(__LINE__, drcost_price_set(0.0 / 0.0, 1) == -EINVAL, "a NaN fault price taken");
	setenv(PROBES_ENV, handed, 1);
}

/* The handed-down line with the text after its first `skip` bytes
 * replaced by `tail` (NULL: kept), cut to `cut` bytes (0: not). */
static void variant(char *out, size_t size, size_t skip, const char *tail, size_t cut)
{
	snprintf(out, size, "%.*s%s", (int)skip, handed, tail ? tail : handed + skip);
	if (cut && cut < strlen(out))
		out[cut] = '\0';
}

/* The handed-down line with its boot's epoch moved by delta_ns. */
static void epoch_moved(char *out, size_t size, long long delta_ns)
{
	snprintf(out, size, "%s", handed);
	unsigned long long e = strtoull(handed + EPOCH_AT, NULL, 16) + (unsigned long long)delta_ns;
	char hex[17];
	snprintf(hex, sizeof(hex), "%016llx", e);
	memcpy(out + EPOCH_AT, hex, 16);
}

/* Which boot a line is of: its boot's epoch (the wall clock less the boot
 * clock) within 1 s of this one's decides without reading boot_id; past
 * that, boot_id does (the wall clock may have been stepped since). */
static void test_boot(void)
{
	char id_other[1024], clock_stepped[1024], other_boot[1024];
	snprintf(id_other, sizeof(id_other), "%s", handed);
	id_other[BOOT_AT] = id_other[BOOT_AT] == '0' ? '1' : '0';
	epoch_moved(clock_stepped, sizeof(clock_stepped), 10000000000ll);
	epoch_moved(other_boot, sizeof(other_boot), -10000000000ll);
	other_boot[BOOT_AT] = other_boot[BOOT_AT] == '0' ? '1' : '0';
	static const struct {
		int line;
		int which; /* 0 id_other, 1 clock_stepped, 2 other_boot */
		int taken;
	} rows[] = {
		{__LINE__, 0, 1}, /* the epoch this boot's: boot_id not read */
		{__LINE__, 1, 1}, /* 10 s off, boot_id this one's */
		{__LINE__, 2, 0}, /* 10 s off, another boot_id */
	};
	const char *lines[] = {id_other, clock_stepped, other_boot};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		setenv(PROBES_ENV, lines[rows[i].which], 1);
		int rc = probes_take_inherited();
		CHECK(rows[i].line, (rc == 0) == rows[i].taken, "%s: %d", lines[rows[i].which], rc);
	}
	setenv(PROBES_ENV, handed, 1);
}

static void test_refused(void)
{
	/* "p6 ", the 36-character boot id, " " and the boot's epoch (16 hex
	 * digits), " " and the PMU field, " " and
	 * the traps field, " " and the sigtrap field, then " " and 16 hex
	 * digits a number (the last: a hit's price) */
	char boot_bad[1024], epoch_bad[1024], fmt_bad[1024], pmu_bad[1024], traps_bad[1024],
		sigtrap_bad[1024], no_price[1024], range_bad[1024], not_hex[1024], nan_bits[1024],
		cut[1024], junk[1024], dr_fault_bad[1024], dr_byte_bad[1024];
	size_t len = strlen(handed);
	if (len < FIRST_AT + 16 || handed[FIRST_AT - 1] != ' ') {
		FAIL(__LINE__, "the handed-down line's layout: %s", handed);
		return;
	}
	epoch_moved(boot_bad, sizeof(boot_bad), 5000000000ll); /* another boot */
	boot_bad[BOOT_AT] = boot_bad[BOOT_AT] == '0' ? '1' : '0';
	variant(epoch_bad, sizeof(epoch_bad), 0, NULL, 0);
	epoch_bad[EPOCH_AT + 5] = 'g';
	variant(fmt_bad, sizeof(fmt_bad), 0, NULL, 0);
	fmt_bad[1] = '9'; /* "p9" */
	variant(pmu_bad, sizeof(pmu_bad), 0, NULL, 0);
	pmu_bad[PMU_AT] = '2';
	variant(traps_bad, sizeof(traps_bad), 0, NULL, 0);
	traps_bad[TRAPS_AT] = 'x';
	variant(sigtrap_bad, sizeof(sigtrap_bad), 0, NULL, 0);
	sigtrap_bad[SIGTRAP_AT] = '2';
	/* breakpoints that trap, a hit at 0 ns (the last number) */
	variant(no_price, sizeof(no_price), 0, NULL, 0);
	no_price[TRAPS_AT] = '1';
	memcpy(no_price + len - 16, "0000000000000000", 16);
	/* the clock (the first number) at 100 cycles a ns: past the probe's
	 * range (100.0 is 0x4059000000000000) */
	variant(range_bad, sizeof(range_bad), FIRST_AT, "4059000000000000", 0);
	strncat(range_bad, handed + FIRST_AT + 16, sizeof(range_bad) - strlen(range_bad) - 1);
	/* an armed fault at 1 s (1e9: 0x41cdcd6500000000), past drcost's range */
	variant(dr_fault_bad, sizeof(dr_fault_bad), 0, NULL, 0);
	memcpy(dr_fault_bad + len - DR_FAULT_FROM_END, "41cdcd6500000000", 16);
	/* a fault priced, its byte not (-1) */
	variant(dr_byte_bad, sizeof(dr_byte_bad), 0, NULL, 0);
	memcpy(dr_byte_bad + len - DR_FAULT_FROM_END, "4088480000000000", 16);
	memcpy(dr_byte_bad + len - DR_BYTE_FROM_END, NOT_PRICED, 16);
	variant(not_hex, sizeof(not_hex), 0, NULL, 0);
	not_hex[FIRST_AT + 3] = 'G';
	variant(nan_bits, sizeof(nan_bits), FIRST_AT, "7ff8000000000000", 0);
	strncat(nan_bits, handed + FIRST_AT + 16, sizeof(nan_bits) - strlen(nan_bits) - 1);
	variant(cut, sizeof(cut), 0, NULL, len - 8);
	snprintf(junk, sizeof(junk), "%s x", handed);
	struct {
		int line;
		const char *value;
	} rows[] = {
		{__LINE__, boot_bad},
		{__LINE__, epoch_bad},
		{__LINE__, fmt_bad},
		{__LINE__, pmu_bad},
		{__LINE__, traps_bad},
		{__LINE__, sigtrap_bad},
		{__LINE__, no_price},
		{__LINE__, range_bad},
		{__LINE__, dr_fault_bad},
		{__LINE__, dr_byte_bad},
		{__LINE__, not_hex},
		{__LINE__, nan_bits},
		{__LINE__, cut},
		{__LINE__, junk},
		{__LINE__, ""},
		{__LINE__, "p1"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		setenv(PROBES_ENV, rows[i].value, 1);
		CHECK(rows[i].line, probes_take_inherited() < 0, "taken: '%s'", rows[i].value);
	}
	unsetenv(PROBES_ENV);
	CHECK(__LINE__, probes_take_inherited() == -ENOENT, "taken with no variable");
}

/* Whether /bin/true under lib with WITCH_PROBES=value (NULL: unset) said
 * `what` on stderr (costmodel's line: it measured): 1, 0, or -1 when it
 * could not run.  watchpoints: WITCH_WATCHPOINTS's value. */
static int child_said(const char *lib, const char *value, const char *watchpoints,
		      const char *what)
{
	int fd[2];
	if (pipe(fd) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		setenv("LD_PRELOAD", lib, 1);
		setenv("WITCH_WATCHPOINTS", watchpoints, 1);
		setenv("WITCH_VERBOSE", "1", 1);
		setenv("WITCH_OUTPUT", "/dev/null/none", 1); /* no profile to keep */
		if (value)
			setenv(PROBES_ENV, value, 1);
		else
			unsetenv(PROBES_ENV);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char buf[8192];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof(buf) - 1 && (r = read(fd[0], buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(fd[0]);
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return strstr(buf, what) != NULL;
}

static int child_measured(const char *lib, const char *value)
{
	return child_said(lib, value, "0", "witch: costmodel:");
}

static void test_short_form(void)
{
	int traps = -2, sigtrap = -2;
	double ns = -1;
	CHECK(__LINE__, probes_hand_down_no_traps() == 0, "probes_hand_down_no_traps");
	const char *v = getenv(PROBES_ENV);
	char line[1024];
	snprintf(line, sizeof(line), "%s", v ? v : "");
	/* (the epoch is read again: its last digits may differ) */
	CHECK(__LINE__, strlen(line) == SIGTRAP_AT + 1 && strncmp(line, handed, EPOCH_AT) == 0 &&
				line[PMU_AT] == handed[PMU_AT] && strcmp(line + TRAPS_AT, "0 -") == 0,
	      "the short form: '%s' (this machine's: '%s')", line, handed);
	CHECK(__LINE__, watchpoint_probe_set(1, 1, 100.0) == 0, "valid answers refused");
	CHECK(__LINE__, probes_take_inherited() == -ENODATA, "the short form not taken as such");
	CHECK(__LINE__, watchpoint_probe_get(&traps, &sigtrap, &ns) == 0 && traps == 0 && sigtrap == -1,
	      "took traps %d sigtrap %d, want 0 -1", traps, sigtrap);
	CHECK(__LINE__, watchpoint_probe_handed_no_traps() == 1, "not marked handed");
	line[TRAPS_AT] = '1';
	setenv(PROBES_ENV, line, 1);
	CHECK(__LINE__, probes_take_inherited() == -EINVAL, "a short form that traps taken: %s", line);
	setenv(PROBES_ENV, handed, 1);
}

/* Everything the child wrote on stderr holds no witch: line. */
static int child_silent(const char *lib, const char *value)
{
	return child_said(lib, value, "1", "witch:") == 0;
}

static void test_child(const char *lib)
{
	char short_form[1024];
	snprintf(short_form, sizeof(short_form), "%.*s0 -", TRAPS_AT, handed);
	CHECK(__LINE__, child_silent(lib, short_form), "a child handed the short form said a line");
	CHECK(__LINE__, child_measured(lib, short_form) == 1,
	      "a child handed the short form, watchpoints off, did not measure");
	CHECK(__LINE__, child_measured(lib, handed) == 0, "a child given this machine's line measured");
	CHECK(__LINE__, child_measured(lib, "p1 junk") == 1, "a child given junk did not measure");
	CHECK(__LINE__, child_measured(lib, NULL) == 1, "a child given nothing did not measure");
	static const char never[] = "watchpoints do not trigger";
	for (int traps = 0; traps <= 1; traps++) {
		char line[1024];
		snprintf(line, sizeof(line), "%s", handed);
		line[TRAPS_AT] = (char)('0' + traps);
		if (traps) /* a price for the hit: 100 ns */
			memcpy(line + strlen(line) - 16, "4059000000000000", 16);
		/* (The variable's count: one watchpoint, any of the four.) */
		CHECK(__LINE__, child_said(lib, line, "1", never) == !traps,
		      "a child handed traps=%d %s that they never trigger", traps,
		      traps ? "said" : "did not say");
	}
}

int main(void)
{
	const char *lib = getenv("WITCH_TEST_LIB");
	test_round_trip();
	if (handed[0]) {
		test_boot();
		test_watchpoint_fields();
		test_refused();
		test_drcost_fields();
		test_short_form();
		if (lib && access(lib, R_OK) == 0)
			test_child(lib);
		else
			FAIL(__LINE__, "WITCH_TEST_LIB (libwitch.so) not readable: %s", lib ? lib : "unset");
	}
	return check_failures != 0;
}
