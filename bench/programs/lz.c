/* lz: an LZ77 block compressor and decompressor (LZ4-like format, zlib-like
 * hash-chain match finder) over generated English-like text.
 *
 * Why it is realistic: the compressor is the classic design of LZ4-HC,
 * zlib and friends: the input is cut into 64 KiB blocks, each compressed
 * independently; a hash of the next 4 bytes indexes a head table whose
 * entry starts a chain through prev[] of earlier positions with the same
 * hash; the longest match within MAX_CHAIN candidates is emitted as a
 * token (literal count, match length) followed by the literals and a 2-byte
 * offset.  The decompressor decodes every block again and a verify pass
 * compares it with the input, as compressors' self-tests do.  The input is
 * text: words from a 256-word vocabulary with a skewed choice, capitalised
 * sentences, commas and line breaks, so it compresses to about 30-40%.
 *
 * Each round generates a new text (fixed seed per round), compresses,
 * decompresses and verifies it; SCALE multiplies the number of rounds.
 *
 * Wasted operations by design (rough shares; the oracle measures them):
 *  - dead stores:
 *    * reset_matcher's memset of the 128 KiB head table, once per block:
 *      the text has far fewer distinct 4-byte sequences than the table
 *      has entries, so most entries are cleared again at the next block
 *      without having been read (and the entries that are used are read
 *      first, so those are not dead).
 *    * compress_block's clearing of the output area (the worst-case bound)
 *      before writing: the bytes the block then writes overwrite zeros,
 *      and the unused tail is cleared again by the next block's clear.
 *    * decompress_block's clearing of its destination, overwritten by
 *      the decoded bytes.
 *    * insert_position's prev[] stores: for frequent 4-grams the chains are
 *      far longer than MAX_CHAIN, so the deep links are never followed
 *      before the next block overwrites them.  Probably the largest share.
 *    * find_longest_match's `*match_pos = cand`: a longer candidate found
 *      later in the chain overwrites it before compress_block reads it;
 *      and compress_block's `match_pos = 0` for every position, which a
 *      match found then overwrites unread.
 *  - silent stores: the same head-table memset (-1 over -1 in entries the
 *    last block never touched) and the output clearing (0 over 0 in the
 *    tail); `match_pos = 0` where no match was found since.  Tokens and
 *    literals are rarely silent.
 *  - redundant loads: the input never changes while a block is compressed,
 *    so find_longest_match's loads of candidate and current bytes that
 *    were loaded before (by an earlier search) read the same value; also
 *    prev[] links walked again by later searches of the same hash, and the
 *    vocabulary read by generate_text.  Expect this client to be the
 *    highest of the three here.
 *
 * Usage: lz [SCALE]     (SCALE >= 1, default 1: about 0.5 s natively)
 *
 * Kernels are noinline, for stable calling contexts, and noclone: without
 * it GCC specialises some into name.constprop.0 clones, and reports would
 * not show the names used here.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define INPUT_SIZE (2u << 20)   /* bytes of text per round */
#define BLOCK_SIZE (64u << 10)  /* independent blocks; also the window */
#define HASH_BITS 15
#define HASH_SIZE (1u << HASH_BITS)
#define MIN_MATCH 4
#define MAX_CHAIN 24            /* candidates examined per position */
#define ROUNDS_PER_SCALE 15
#define VOCAB_SIZE 256
#define NO_POS (-1)

/* Worst case of one compressed block: all literals plus length bytes. */
#define BLOCK_BOUND(n) ((n) + (n) / 255 + 16)

struct matcher {
	int32_t head[HASH_SIZE];  /* newest position with this hash, or NO_POS */
	int32_t prev[BLOCK_SIZE]; /* previous position with the same hash */
};

struct vocabulary {
	char words[VOCAB_SIZE][12];
	uint8_t lengths[VOCAB_SIZE];
};

static void build_vocabulary(struct vocabulary *v)
{
	/* Letter frequencies roughly like English: common letters repeated. */
	static const char letters[] = "eeeeettttaaaooiinnsshhrrdlcumwfgypbvk";
	bench_seed(12345);
	for (int w = 0; w < VOCAB_SIZE; w++) {
		int len = 2 + (int)(bench_next() % 9);
		for (int i = 0; i < len; i++)
			v->words[w][i] = letters[bench_next() % (sizeof letters - 1)];
		v->words[w][len] = '\0';
		v->lengths[w] = (uint8_t)len;
	}
}

/* Text of exactly n bytes: sentences of 4-15 words, the first capitalised,
 * commas now and then, a line break every few sentences.  Word choice is
 * skewed (the smaller of two uniform picks) like real word frequencies. */
__attribute__((noinline, noclone)) static void
generate_text(const struct vocabulary *v, uint8_t *out, size_t n)
{
	size_t pos = 0;
	int words_left = 0, sentences = 0;
	while (pos < n) {
		int sentence_start = words_left == 0;
		if (sentence_start)
			words_left = 4 + (int)(bench_next() % 12);
		uint64_t r = bench_next();
		unsigned a = (unsigned)(r & 0xff), b = (unsigned)((r >> 8) & 0xff);
		unsigned w = a < b ? a : b;
		size_t word_start = pos;
		for (unsigned i = 0; i < v->lengths[w] && pos < n; i++)
			out[pos++] = (uint8_t)v->words[w][i];
		if (sentence_start)
			out[word_start] = (uint8_t)(out[word_start] - 'a' + 'A');
		if (--words_left == 0) {
			if (pos < n)
				out[pos++] = '.';
			if (pos < n)
				out[pos++] = (++sentences % 5 == 0) ? '\n' : ' ';
		} else if ((r >> 16) % 11 == 0 && pos + 1 < n) {
			out[pos++] = ',';
			out[pos++] = ' ';
		} else if (pos < n) {
			out[pos++] = ' ';
		}
	}
}

static inline uint32_t read32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static inline uint32_t hash4(const uint8_t *p)
{
	return (read32(p) * 2654435761u) >> (32 - HASH_BITS);
}

/* Blocks are independent: forget every position of the previous block. */
__attribute__((noinline, noclone)) static void
reset_matcher(struct matcher *m)
{
	memset(m->head, 0xff, sizeof m->head); /* NO_POS is all ones */
}

__attribute__((noinline, noclone)) static void
insert_position(struct matcher *m, const uint8_t *src, int32_t pos)
{
	uint32_t h = hash4(src + pos);
	m->prev[pos] = m->head[h];
	m->head[h] = pos;
}

/* Longest earlier match for src[pos..], following the hash chain at most
 * MAX_CHAIN links.  Returns its length (0 if under MIN_MATCH). */
__attribute__((noinline, noclone)) static int
find_longest_match(const struct matcher *m, const uint8_t *src, int32_t pos,
		   int32_t end, int32_t *match_pos)
{
	int best_len = 0;
	int32_t cand = m->head[hash4(src + pos)];
	int max_len = end - pos;
	for (int chain = 0; cand != NO_POS && chain < MAX_CHAIN; chain++) {
		/* Cheap reject: a longer match must agree at best_len. */
		if (src[cand + best_len] == src[pos + best_len] &&
		    read32(src + cand) == read32(src + pos)) {
			int len = MIN_MATCH;
			while (len < max_len && src[cand + len] == src[pos + len])
				len++;
			if (len > best_len) {
				best_len = len;
				*match_pos = cand;
				if (len == max_len)
					break;
			}
		}
		cand = m->prev[cand];
	}
	return best_len >= MIN_MATCH ? best_len : 0;
}

static uint8_t *put_length(uint8_t *op, size_t len)
{
	while (len >= 255) {
		*op++ = 255;
		len -= 255;
	}
	*op++ = (uint8_t)len;
	return op;
}

/* One sequence: token, literals, and unless it is the last, the match. */
static uint8_t *emit_sequence(uint8_t *op, const uint8_t *literals,
			      size_t lit_len, size_t match_len, size_t offset)
{
	uint8_t *token = op++;
	size_t ml = match_len ? match_len - MIN_MATCH : 0;
	*token = (uint8_t)(((lit_len < 15 ? lit_len : 15) << 4) |
			   (ml < 15 ? ml : 15));
	if (lit_len >= 15)
		op = put_length(op, lit_len - 15);
	memcpy(op, literals, lit_len);
	op += lit_len;
	if (match_len) {
		*op++ = (uint8_t)(offset & 0xff);
		*op++ = (uint8_t)(offset >> 8);
		if (ml >= 15)
			op = put_length(op, ml - 15);
	}
	return op;
}

/* Compresses n bytes into dst (room for BLOCK_BOUND(n)); returns the size. */
__attribute__((noinline, noclone)) static size_t
compress_block(struct matcher *m, const uint8_t *src, int32_t n, uint8_t *dst)
{
	/* Defensive clearing, as many codecs do so that a short block leaves
	 * no stale bytes: nearly all of it is overwritten or cleared again. */
	memset(dst, 0, BLOCK_BOUND((size_t)n));
	reset_matcher(m);

	uint8_t *op = dst;
	int32_t pos = 0, anchor = 0;
	/* The last match must end before the last 4 bytes can be hashed. */
	int32_t limit = n - MIN_MATCH;
	while (pos <= limit) {
		int32_t match_pos = 0;
		int len = find_longest_match(m, src, pos, n, &match_pos);
		insert_position(m, src, pos);
		if (len == 0) {
			pos++;
			continue;
		}
		op = emit_sequence(op, src + anchor, (size_t)(pos - anchor),
				   (size_t)len, (size_t)(pos - match_pos));
		int32_t match_end = pos + len;
		for (pos++; pos < match_end && pos <= limit; pos++)
			insert_position(m, src, pos);
		pos = match_end;
		anchor = pos;
	}
	op = emit_sequence(op, src + anchor, (size_t)(n - anchor), 0, 0);
	return (size_t)(op - dst);
}

static size_t get_length(const uint8_t **ipp, size_t base)
{
	size_t len = base;
	if (base == 15) {
		uint8_t b;
		do {
			b = *(*ipp)++;
			len += b;
		} while (b == 255);
	}
	return len;
}

/* Decodes one block of raw_len bytes; returns 0 on a malformed block. */
__attribute__((noinline, noclone)) static int
decompress_block(const uint8_t *src, size_t src_len, uint8_t *dst,
		 size_t raw_len)
{
	memset(dst, 0, raw_len); /* same defensive clearing as the encoder */
	const uint8_t *ip = src, *iend = src + src_len;
	uint8_t *op = dst, *oend = dst + raw_len;
	while (ip < iend) {
		uint8_t token = *ip++;
		size_t lit_len = get_length(&ip, token >> 4);
		if (lit_len > (size_t)(oend - op) || lit_len > (size_t)(iend - ip))
			return 0;
		memcpy(op, ip, lit_len);
		op += lit_len;
		ip += lit_len;
		if (ip >= iend)
			break; /* the last sequence has no match */
		size_t offset = (size_t)ip[0] | ((size_t)ip[1] << 8);
		ip += 2;
		size_t match_len = get_length(&ip, token & 15) + MIN_MATCH;
		if (offset == 0 || offset > (size_t)(op - dst) ||
		    match_len > (size_t)(oend - op))
			return 0;
		/* Byte by byte: source and destination may overlap. */
		const uint8_t *match = op - offset;
		for (size_t i = 0; i < match_len; i++)
			op[i] = match[i];
		op += match_len;
	}
	return op == oend;
}

__attribute__((noinline, noclone)) static int
verify_block(const uint8_t *expected, const uint8_t *actual, size_t n)
{
	return memcmp(expected, actual, n) == 0;
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof v);
}

int main(int argc, char **argv)
{
	long scale = bench_parse_scale("lz", argc, argv);
	long rounds = scale * ROUNDS_PER_SCALE;
	size_t nblocks = (INPUT_SIZE + BLOCK_SIZE - 1) / BLOCK_SIZE;
	size_t comp_cap = nblocks * (8 + BLOCK_BOUND(BLOCK_SIZE));

	static struct vocabulary vocab;
	struct matcher *m = malloc(sizeof *m);
	uint8_t *text = malloc(INPUT_SIZE);
	uint8_t *comp = malloc(comp_cap);
	uint8_t *plain = malloc(BLOCK_SIZE);
	if (!m || !text || !comp || !plain) {
		fprintf(stderr, "lz: out of memory\n");
		return 1;
	}
	build_vocabulary(&vocab);

	uint64_t checksum = 0xcbf29ce484222325ULL;
	uint64_t total_in = 0, total_out = 0;
	for (long round = 0; round < rounds; round++) {
		bench_seed(1000 + (uint64_t)round);
		generate_text(&vocab, text, INPUT_SIZE);

		/* Compress: per block a header (raw size, compressed size). */
		size_t comp_len = 0;
		for (size_t off = 0; off < INPUT_SIZE; off += BLOCK_SIZE) {
			int32_t n = (int32_t)(INPUT_SIZE - off < BLOCK_SIZE
						      ? INPUT_SIZE - off
						      : BLOCK_SIZE);
			uint8_t *hdr = comp + comp_len;
			size_t c = compress_block(m, text + off, n, hdr + 8);
			put32(hdr, (uint32_t)n);
			put32(hdr + 4, (uint32_t)c);
			comp_len += 8 + c;
		}
		checksum = fnv1a(checksum, comp, comp_len);
		total_in += INPUT_SIZE;
		total_out += comp_len;

		/* Decompress and verify block by block. */
		size_t ip = 0, off = 0;
		while (ip < comp_len) {
			uint32_t raw, c;
			memcpy(&raw, comp + ip, 4);
			memcpy(&c, comp + ip + 4, 4);
			ip += 8;
			if (!decompress_block(comp + ip, c, plain, raw) ||
			    !verify_block(text + off, plain, raw)) {
				fprintf(stderr, "lz: round %ld: block at %zu does "
					"not round-trip\n", round, off);
				return 1;
			}
			ip += c;
			off += raw;
		}
	}
	printf("lz: rounds=%ld in=%llu out=%llu checksum=%016llx\n", rounds,
	       (unsigned long long)total_in, (unsigned long long)total_out,
	       (unsigned long long)checksum);
	free(plain);
	free(comp);
	free(text);
	free(m);
	return 0;
}
