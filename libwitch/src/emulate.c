/* emulate: run simple integer instructions on a register snapshot (see emulate.h). */
#include "witch/emulate.h"
#include "witch/decode_zydis.h"
#include "witch/emulate_vec.h"
#include "witch/memlat.h"
#include "witch/peek.h"
#include "witch/phdrs.h"
#include "emulate_operands.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define CODE_PAGE_MASK (~(uint64_t)4095)

void emulate_begin(struct emulate *e, uint64_t pc, struct emulate_vec *vec)
{
	e->vec = vec;
	e->n_stores = 0;
	e->spill_lo = e->spill_hi = 0;
	e->n_calls = 0;
	e->frames_left = 0;
	e->frame_gen = 0;
	e->late_ns = 0;
	e->code_page[0] = e->code_page[1] = pc & CODE_PAGE_MASK;
	e->vstore_len = 0;
}

int emulate_last_stored(const struct emulate *e, int stores_before, uint64_t addr, uint32_t len,
			uint8_t *buf)
{
	int i = e->n_stores - 1;
	if (len == 0 || len > sizeof(e->vstore))
		return -1;
	if (i >= stores_before && e->store_known[i] &&
	    e->store_addr[i] == addr && e->store_len[i] == len && len <= sizeof(e->store_value[i])) {
		memcpy(buf, &e->store_value[i], len);
		return 0;
	}
	if (e->vstore_len == len && e->vstore_addr == addr) {
		memcpy(buf, e->vstore, len);
		return 0;
	}
	return -1;
}

void emulate_copy(struct emulate *to, const struct emulate *from)
{
	size_t n = from->n_stores > 0 ? (size_t)from->n_stores : 0;
	if (n > EMULATE_MAX_STORES)
		n = EMULATE_MAX_STORES;
	memcpy(to, from, offsetof(struct emulate, store_addr));
	for (size_t i = 0; i < n; i++) { /* a loop: a few stores, four arrays */
		to->store_addr[i] = from->store_addr[i];
		to->store_len[i] = from->store_len[i];
		to->store_value[i] = from->store_value[i];
		to->store_known[i] = from->store_known[i];
	}
	memcpy(to->call_ret, from->call_ret, sizeof(from->call_ret));
	memcpy(to->call_slot, from->call_slot, sizeof(from->call_slot));
	to->vstore_addr = from->vstore_addr;
	to->vstore_len = from->vstore_len;
	memcpy(to->vstore, from->vstore, sizeof(from->vstore));
}

/* A jump's target (or the next page) is decoded in place next: check once
 * per page that it is mapped, as a wrong target must not fault the handler. */
int emulate_code_readable(struct emulate *e, uint64_t pc)
{
	uint64_t page = pc & CODE_PAGE_MASK;
	uint8_t byte;

	if (page == e->code_page[0] || page == e->code_page[1])
		return 1;
	/* A module's code without a read (a system call where no fault would
	 * be rescued: a fifth of cc1's), else asked. */
	if (!phdrs_in_code(pc) && peek_read(pc, &byte, 1) < 0)
		return 0;
	e->code_page[1] = e->code_page[0];
	e->code_page[0] = page;
	return 1;
}

/* A first read of the program's bytes at addr, timed there: the loads
 * after it in the same chunk find their lines as it left them (a stream's
 * next lines prefetched, or brought in by this read), so only the first
 * counts (memlat.h). */
static int read_timed(struct emulate *e, uint64_t base, void *buf, uint32_t len, uint64_t addr)
{
	uint32_t ticks;
	int rc = peek_read_timed(base, buf, len, addr, &ticks);
	if (rc == 0 && ticks)
		e->late_ns += (float)memlat_extra_ns(ticks);
	return rc;
}

/* One read per 512 bytes, not per load: a vector loop reads 64 bytes an
 * instruction, and a read through the kernel (peek.h: where the bytes are
 * watched, or a fault would not be rescued) costs ~1.3 us on a VM.  The
 * copy is the run's snapshot. */
int emulate_read(struct emulate *e, uint64_t addr, void *buf, uint32_t len)
{
	struct emulate_vec *v = e->vec;
	uint8_t *out = buf;

	if (!v)
		return read_timed(e, addr, buf, len, addr);
	while (len > 0) {
		uint64_t base = addr & ~(uint64_t)(EMULATE_CHUNK - 1);
		uint32_t off = (uint32_t)(addr - base), n = EMULATE_CHUNK - off;
		int i;
		if (n > len)
			n = len;
		for (i = 0; i < EMULATE_CHUNKS && v->chunk_base[i] != base; i++)
			;
		if (i == EMULATE_CHUNKS) {
			i = (int)(v->chunk_next++ % EMULATE_CHUNKS);
			v->chunk_base[i] = 1;
			if (read_timed(e, base, v->chunk[i], EMULATE_CHUNK, addr) < 0)
				return -EFAULT; /* a chunk is in one page: all mapped or none */
			v->chunk_base[i] = base;
		}
		memcpy(out, v->chunk[i] + off, n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

void emulate_frame_of(const struct emulate *e, struct emulate_frame *f)
{
	f->frames_left = e->frames_left;
	f->n_calls = e->n_calls;
	memcpy(f->call_ret, e->call_ret, sizeof(f->call_ret[0]) * (size_t)e->n_calls);
}

int emulate_context_frame(const struct emulate_frame *f, uint64_t *pcs, int n, int max)
{
	int keep = n - 1 - f->frames_left; /* callers still on the stack */
	if (keep < 0 || max < 1)
		return -EINVAL;
	/* Too deep: the outermost frames go first, as in any context. */
	int add = f->n_calls < max - 1 ? f->n_calls : max - 1;
	if (1 + add + keep > max)
		keep = max - 1 - add;
	memmove(pcs + 1 + add, pcs + 1 + f->frames_left, sizeof(pcs[0]) * (size_t)keep);
	for (int i = 0; i < add; i++) /* innermost call first */
		pcs[1 + i] = f->call_ret[f->n_calls - 1 - i] - 1;
	return 1 + add + keep;
}

int emulate_context(const struct emulate *e, uint64_t *pcs, uint64_t *sps, int n, int max)
{
	struct emulate_frame f;
	emulate_frame_of(e, &f);
	int m = emulate_context_frame(&f, pcs, n, max);
	if (m <= 0 || !sps)
		return m;
	/* The same moves on the frames' stack pointers; an emulated callee's
	 * frame ends where its return address was pushed (its CFA). */
	int add = f.n_calls < max - 1 ? f.n_calls : max - 1;
	int keep = m - 1 - add;
	uint64_t sp0 = f.n_calls > 0 ? e->call_slot[f.n_calls - 1] : sps[f.frames_left];
	memmove(sps + 1 + add, sps + 1 + f.frames_left, sizeof(sps[0]) * (size_t)keep);
	for (int i = 1; i <= add; i++)
		sps[i] = e->call_slot[f.n_calls - i] + 8;
	sps[0] = sp0;
	return m;
}

int emulate_forwarded(const struct emulate *e, uint64_t addr, uint32_t len, uint64_t *v)
{
	return len <= 8 && mem_forward(e, addr, len, v) == 0 ? 0 : -1;
}

static int stored_overlaps(const struct emulate *e, int i, uint64_t addr, uint32_t len)
{
	return addr < e->store_addr[i] + e->store_len[i] && e->store_addr[i] < addr + len;
}

int emulate_stored(const struct emulate *e, uint64_t addr, uint32_t len)
{
	if (e->spill_hi && addr < e->spill_hi && e->spill_lo < addr + len)
		return 1;
	for (int i = 0; i < e->n_stores; i++)
		if (stored_overlaps(e, i, addr, len))
			return 1;
	return 0;
}

/* Whether every emulated store to [addr, addr + len) has a known value. */
static int stores_known_over(const struct emulate *e, uint64_t addr, uint32_t len)
{
	if (e->spill_hi && addr < e->spill_hi && e->spill_lo < addr + len)
		return -ENOTSUP;
	for (int i = 0; i < e->n_stores; i++)
		if (stored_overlaps(e, i, addr, len) && !e->store_known[i])
			return -ENOTSUP;
	return 0;
}

/* The stores' bytes over buf, once stores_known_over said they are known. */
static void overlay_stores(const struct emulate *e, uint64_t addr, uint8_t *buf, uint32_t len)
{
	for (int i = 0; i < e->n_stores; i++) {
		if (!stored_overlaps(e, i, addr, len))
			continue;
		uint64_t sa = e->store_addr[i], sl = e->store_len[i];
		uint64_t lo = addr > sa ? addr : sa, hi = addr + len < sa + sl ? addr + len : sa + sl;
		for (uint64_t b = lo; b < hi; b++) /* little-endian: byte k of the value at sa + k */
			buf[b - addr] = (uint8_t)(e->store_value[i] >> (8 * (b - sa)));
	}
}

int emulate_read_stored(struct emulate *e, uint64_t addr, uint8_t *buf, uint32_t len)
{
	int rc = stores_known_over(e, addr, len);
	if (rc < 0)
		return rc;
	if (emulate_read(e, addr, buf, len) < 0)
		return -EFAULT;
	overlay_stores(e, addr, buf, len);
	return 0;
}

int emulate_overlay_stored(const struct emulate *e, uint64_t addr, uint8_t *buf, uint32_t len)
{
	int rc = stores_known_over(e, addr, len);
	if (rc < 0)
		return rc;
	overlay_stores(e, addr, buf, len);
	return 0;
}

/* --- instructions ---------------------------------------------------------- */

static int emulate_alu(struct emulate_ctx *c, ZydisMnemonic m)
{
	unsigned bits = c->insn->operand_width;
	uint64_t a, b = 0, r, f, cin = !!(c->regs->rflags & RFLAGS_CF);
	int rc;

	if ((rc = op_read(c, 0, &a)) < 0)
		return rc;
	int binary = m != ZYDIS_MNEMONIC_INC && m != ZYDIS_MNEMONIC_DEC &&
		     m != ZYDIS_MNEMONIC_NEG && m != ZYDIS_MNEMONIC_NOT;
	if (binary && (rc = op_read(c, 1, &b)) < 0)
		return rc;
	uint64_t which = RFLAGS_ARITH;
	switch (m) {
	case ZYDIS_MNEMONIC_ADD: r = add_flags(a, b, 0, bits, 0, &f); break;
	case ZYDIS_MNEMONIC_ADC: r = add_flags(a, b, cin, bits, 0, &f); break;
	case ZYDIS_MNEMONIC_SUB:
	case ZYDIS_MNEMONIC_CMP: r = add_flags(a, b, 0, bits, 1, &f); break;
	case ZYDIS_MNEMONIC_SBB: r = add_flags(a, b, cin, bits, 1, &f); break;
	case ZYDIS_MNEMONIC_NEG:
		r = add_flags(0, a, 0, bits, 1, &f);
		break;
	case ZYDIS_MNEMONIC_INC:
	case ZYDIS_MNEMONIC_DEC:
		r = add_flags(a, 1, 0, bits, m == ZYDIS_MNEMONIC_DEC, &f);
		which &= ~RFLAGS_CF; /* inc/dec keep CF */
		break;
	case ZYDIS_MNEMONIC_AND:
	case ZYDIS_MNEMONIC_TEST: r = a & b; f = flags_of_result(r, bits); break;
	case ZYDIS_MNEMONIC_OR: r = a | b; f = flags_of_result(r, bits); break;
	case ZYDIS_MNEMONIC_XOR: r = a ^ b; f = flags_of_result(r, bits); break;
	case ZYDIS_MNEMONIC_NOT: r = ~a; f = 0; which = 0; break;
	default: return -ENOTSUP;
	}
	if (m != ZYDIS_MNEMONIC_CMP && m != ZYDIS_MNEMONIC_TEST && (rc = op_write(c, 0, r)) < 0)
		return rc;
	set_flags(c->regs, which, f);
	return 0;
}

/* rol/ror by a count already masked and not 0 (sqlite's big-endian reads:
 * rol $8 on a 16-bit register).  Only CF and OF change: CF is the bit that
 * came round, OF (defined for a count of 1, the same rule for all) the
 * top bit against its neighbour. */
static int emulate_rotate(struct emulate_ctx *c, ZydisMnemonic m, uint64_t a, uint64_t n,
			  unsigned bits)
{
	unsigned k = (unsigned)(n % bits);
	uint64_t r = a;
	if (k)
		r = m == ZYDIS_MNEMONIC_ROL ? (a << k) | (a >> (bits - k))
					    : (a >> k) | (a << (bits - k));
	r &= mask_of(bits);
	int top = (r & sign_bit(bits)) != 0;
	int cf = m == ZYDIS_MNEMONIC_ROL ? (int)(r & 1) : top;
	int of = m == ZYDIS_MNEMONIC_ROL ? top != cf : top != ((r & (sign_bit(bits) >> 1)) != 0);
	int rc = op_write(c, 0, r);
	if (rc < 0)
		return rc;
	set_flags(c->regs, RFLAGS_CF | RFLAGS_OF, (cf ? RFLAGS_CF : 0) | (of ? RFLAGS_OF : 0));
	return 0;
}

static int emulate_shift(struct emulate_ctx *c, ZydisMnemonic m)
{
	unsigned bits = c->insn->operand_width;
	uint64_t a, n = 1, r, f;
	int rc;

	if ((rc = op_read(c, 0, &a)) < 0)
		return rc;
	if (c->insn->operand_count_visible > 1 && (rc = op_read(c, 1, &n)) < 0)
		return rc;
	n &= bits == 64 ? 63 : 31;
	if (n == 0) /* flags kept; a 32-bit register still loses its upper half */
		return bits == 32 ? op_write(c, 0, a) : 0;
	a &= mask_of(bits);
	if (m == ZYDIS_MNEMONIC_ROL || m == ZYDIS_MNEMONIC_ROR)
		return emulate_rotate(c, m, a, n, bits);
	if (n >= bits)
		return -ENOTSUP; /* 8/16-bit shifts by their width or more: rare, odd flags */
	int cf;
	switch (m) {
	case ZYDIS_MNEMONIC_SHL:
		r = a << n;
		cf = (int)((a >> (bits - n)) & 1);
		break;
	case ZYDIS_MNEMONIC_SHR:
		r = a >> n;
		cf = (int)((a >> (n - 1)) & 1);
		break;
	case ZYDIS_MNEMONIC_SAR:
		r = (uint64_t)((int64_t)sign_extend(a, bits) >> n);
		cf = (int)((sign_extend(a, bits) >> (n - 1)) & 1);
		break;
	default:
		return -ENOTSUP;
	}
	f = flags_of_result(r, bits) | (cf ? RFLAGS_CF : 0);
	/* OF is defined for 1-bit shifts only; the same rule elsewhere. */
	if (m == ZYDIS_MNEMONIC_SHL && (((r & sign_bit(bits)) != 0) != cf))
		f |= RFLAGS_OF;
	if (m == ZYDIS_MNEMONIC_SHR && (a & sign_bit(bits)))
		f |= RFLAGS_OF;
	if ((rc = op_write(c, 0, r)) < 0)
		return rc;
	set_flags(c->regs, RFLAGS_ARITH, f);
	return 0;
}

/* xadd: dest + src into dest, the old dest into src (src first, so that
 * xadd r, r ends with the sum).  cmpxchg (memory destinations: the atomic
 * ones): the accumulator compared with dest as cmp does; equal, src into
 * dest; else dest into the accumulator and no store noted (the CPU writes
 * the old value back, the oracle's Valgrind does not: a failed
 * compare-and-swap is no silent store either side can report alike). */
static int emulate_atomic(struct emulate_ctx *c, ZydisMnemonic m)
{
	unsigned bits = c->insn->operand_width;
	uint64_t a, b, f, r;
	int rc;

	if ((rc = op_read(c, 0, &a)) < 0 || (rc = op_read(c, 1, &b)) < 0)
		return rc;
	if (m == ZYDIS_MNEMONIC_XADD) {
		r = add_flags(a, b, 0, bits, 0, &f);
		if ((rc = op_write(c, 1, a)) < 0 || (rc = op_write(c, 0, r)) < 0)
			return rc;
		set_flags(c->regs, RFLAGS_ARITH, f);
		return 0;
	}
	if (c->ops[0].type != ZYDIS_OPERAND_TYPE_MEMORY)
		return -ENOTSUP; /* a register's upper half on failure: rare, odd */
	uint64_t acc = c->regs->gpr[DECODE_RAX] & mask_of(bits);
	(void)add_flags(acc, a, 0, bits, 1, &f);
	int equal = acc == (a & mask_of(bits));
	if (equal && (rc = op_write(c, 0, b)) < 0)
		return rc;
	if (!equal) { /* as a write of al, ax, eax (zero-extended) or rax */
		uint64_t *rax = &c->regs->gpr[DECODE_RAX];
		uint64_t keep = bits >= 32 ? 0 : *rax & ~mask_of(bits);
		*rax = keep | (a & mask_of(bits));
	}
	set_flags(c->regs, RFLAGS_ARITH, f);
	return 0;
}

/* The pair mul and div write: rax (eax, ax) = lo and rdx (edx, dx) = hi; for
 * bytes al = lo and ah = hi, the rest of rax and rdx kept. */
static void write_ax_dx(struct decode_regs *r, unsigned bits, uint64_t lo, uint64_t hi)
{
	if (bits == 8) {
		r->gpr[DECODE_RAX] = (r->gpr[DECODE_RAX] & ~0xffffull) | (hi << 8) | lo;
		return;
	}
	ZydisRegister ax = bits == 64 ? ZYDIS_REGISTER_RAX : bits == 32 ? ZYDIS_REGISTER_EAX
									 : ZYDIS_REGISTER_AX;
	ZydisRegister dx = bits == 64 ? ZYDIS_REGISTER_RDX : bits == 32 ? ZYDIS_REGISTER_EDX
									 : ZYDIS_REGISTER_DX;
	reg_write(r, ax, lo);
	reg_write(r, dx, hi);
}

/* mul r/m and imul r/m: rdx:rax (edx:eax, dx:ax; ax for bytes) = rax * src;
 * CF = OF = the high half is not the low half's extension. */
static int emulate_widening_mul(struct emulate_ctx *c, int is_signed)
{
	unsigned bits = c->insn->operand_width;
	struct decode_regs *r = c->regs;
	uint64_t src;
	int rc;

	if ((rc = op_read(c, 0, &src)) < 0)
		return rc;
	uint64_t m = mask_of(bits), a = r->gpr[DECODE_RAX] & m, b = src & m, lo, hi;
	int wide;
	if (is_signed) {
		__int128 p = (__int128)(int64_t)sign_extend(a, bits) * (int64_t)sign_extend(b, bits);
		lo = (uint64_t)p & m;
		hi = (uint64_t)(p >> bits) & m;
		wide = (__int128)(int64_t)sign_extend(lo, bits) != p;
	} else {
		unsigned __int128 p = (unsigned __int128)a * b;
		lo = (uint64_t)p & m;
		hi = (uint64_t)(p >> bits) & m;
		wide = hi != 0;
	}
	write_ax_dx(r, bits, lo, hi);
	set_flags(r, RFLAGS_CF | RFLAGS_OF, wide ? RFLAGS_CF | RFLAGS_OF : 0);
	return 0;
}

/* div r/m and idiv r/m: rax (eax, ax) = rdx:rax / src, rdx = the remainder;
 * ax / src into al, ah for bytes.  A zero divisor or a quotient too wide
 * (#DE) is left to the program.  Flags are undefined after it: kept. */
static int emulate_divide(struct emulate_ctx *c, int is_signed)
{
	unsigned bits = c->insn->operand_width;
	struct decode_regs *r = c->regs;
	uint64_t src, m = mask_of(bits), q, rem;
	int rc;

	if ((rc = op_read(c, 0, &src)) < 0)
		return rc;
	src &= m;
	if (src == 0)
		return -ENOTSUP;
	unsigned __int128 hi = bits == 8 ? (r->gpr[DECODE_RAX] >> 8) & 0xff : r->gpr[DECODE_RDX] & m;
	unsigned __int128 n = (hi << bits) | (r->gpr[DECODE_RAX] & m);
	if (is_signed) {
		unsigned nbits = 2 * bits;
		__int128 sn = nbits == 128 ? (__int128)n
					   : (__int128)(n << (128 - nbits)) >> (128 - nbits);
		__int128 sd = (int64_t)sign_extend(src, bits);
		if (sd == -1 && nbits == 128 && n == (unsigned __int128)1 << 127)
			return -ENOTSUP; /* the one quotient __int128 cannot hold */
		__int128 sq = sn / sd, sr = sn % sd;
		__int128 lim = (__int128)1 << (bits - 1);
		if (sq >= lim || sq < -lim)
			return -ENOTSUP;
		q = (uint64_t)sq & m;
		rem = (uint64_t)sr & m;
	} else {
		unsigned __int128 uq = n / src;
		if (uq > m)
			return -ENOTSUP;
		q = (uint64_t)uq;
		rem = (uint64_t)(n % src);
	}
	write_ax_dx(r, bits, q, rem);
	return 0;
}

/* tzcnt, lzcnt, popcnt; bsf, bsr (the destination is kept for a zero source). */
static int emulate_bits(struct emulate_ctx *c, ZydisMnemonic m)
{
	unsigned bits = c->insn->operand_width;
	uint64_t v, r;
	int rc;

	if ((rc = op_read(c, 1, &v)) < 0)
		return rc;
	v &= mask_of(bits);
	switch (m) {
	case ZYDIS_MNEMONIC_TZCNT:
		r = v ? (uint64_t)__builtin_ctzll(v) : bits;
		set_flags(c->regs, RFLAGS_CF | RFLAGS_ZF,
			  (v ? 0 : RFLAGS_CF) | (r ? 0 : RFLAGS_ZF));
		return op_write(c, 0, r);
	case ZYDIS_MNEMONIC_LZCNT:
		r = v ? (uint64_t)(__builtin_clzll(v) - (64 - (int)bits)) : bits;
		set_flags(c->regs, RFLAGS_CF | RFLAGS_ZF,
			  (v ? 0 : RFLAGS_CF) | (r ? 0 : RFLAGS_ZF));
		return op_write(c, 0, r);
	case ZYDIS_MNEMONIC_POPCNT:
		set_flags(c->regs, RFLAGS_ARITH, v ? 0 : RFLAGS_ZF);
		return op_write(c, 0, (uint64_t)__builtin_popcountll(v));
	case ZYDIS_MNEMONIC_BSF:
	case ZYDIS_MNEMONIC_BSR:
		set_flags(c->regs, RFLAGS_ZF, v ? 0 : RFLAGS_ZF);
		if (!v)
			return 0;
		r = m == ZYDIS_MNEMONIC_BSF ? (uint64_t)__builtin_ctzll(v)
					    : (uint64_t)(63 - __builtin_clzll(v));
		return op_write(c, 0, r);
	default:
		return -ENOTSUP;
	}
}

/* BMI1/BMI2 (glibc's string functions use them on masks): shlx, shrx,
 * sarx, bzhi, andn, blsr, blsmsk, blsi.  The x-shifts keep the flags. */
static int emulate_bmi(struct emulate_ctx *c, ZydisMnemonic m)
{
	unsigned bits = c->insn->operand_width;
	uint64_t a, b = 0, r, f = 0, which = RFLAGS_ARITH;
	int rc;

	if ((rc = op_read(c, 1, &a)) < 0 ||
	    (c->insn->operand_count_visible > 2 && (rc = op_read(c, 2, &b)) < 0))
		return rc;
	a &= mask_of(bits);
	unsigned n = (unsigned)(b & (bits - 1));
	switch (m) {
	case ZYDIS_MNEMONIC_SHLX: r = a << n; which = 0; break;
	case ZYDIS_MNEMONIC_SHRX: r = a >> n; which = 0; break;
	case ZYDIS_MNEMONIC_SARX: r = (uint64_t)((int64_t)sign_extend(a, bits) >> n); which = 0; break;
	case ZYDIS_MNEMONIC_BZHI: {
		unsigned i = (unsigned)(b & 0xff);
		r = i < bits ? a & mask_of(i) : a;
		f = flags_of_result(r, bits) & (RFLAGS_ZF | RFLAGS_SF);
		f |= i > bits - 1 ? RFLAGS_CF : 0;
		break;
	}
	case ZYDIS_MNEMONIC_ANDN:
		r = ~a & b & mask_of(bits);
		f = flags_of_result(r, bits) & (RFLAGS_ZF | RFLAGS_SF);
		break;
	case ZYDIS_MNEMONIC_BLSR: case ZYDIS_MNEMONIC_BLSMSK: case ZYDIS_MNEMONIC_BLSI:
		r = m == ZYDIS_MNEMONIC_BLSR ? a & (a - 1) : m == ZYDIS_MNEMONIC_BLSMSK ? a ^ (a - 1)
										 : a & -a;
		r &= mask_of(bits);
		f = flags_of_result(r, bits) & (RFLAGS_ZF | RFLAGS_SF);
		if (m == ZYDIS_MNEMONIC_BLSMSK)
			f &= ~RFLAGS_ZF;
		f |= (m == ZYDIS_MNEMONIC_BLSI ? a != 0 : a == 0) ? RFLAGS_CF : 0;
		break;
	default:
		return -ENOTSUP;
	}
	if ((rc = op_write(c, 0, r)) < 0)
		return rc;
	if (which) /* PF is undefined: left as it was, as in emulate_bits */
		set_flags(c->regs, which & ~RFLAGS_PF, f);
	return 0;
}

static int emulate_imul(struct emulate_ctx *c)
{
	unsigned bits = c->insn->operand_width;
	uint64_t a, b;
	int rc;

	/* imul r, r/m and imul r, r/m, imm; the one-operand form writes rdx:rax. */
	if (c->insn->operand_count_visible == 1)
		return emulate_widening_mul(c, 1);
	if (c->insn->operand_count_visible == 2) {
		if ((rc = op_read(c, 0, &a)) < 0 || (rc = op_read(c, 1, &b)) < 0)
			return rc;
	} else if (c->insn->operand_count_visible == 3) {
		if ((rc = op_read(c, 1, &a)) < 0 || (rc = op_read(c, 2, &b)) < 0)
			return rc;
	} else {
		return -ENOTSUP;
	}
	__int128 full = (__int128)(int64_t)sign_extend(a, bits) * (int64_t)sign_extend(b, bits);
	uint64_t r = (uint64_t)full;
	uint64_t f = flags_of_result(r, bits);
	if ((__int128)(int64_t)sign_extend(r, bits) != full)
		f |= RFLAGS_CF | RFLAGS_OF;
	if ((rc = op_write(c, 0, r)) < 0)
		return rc;
	set_flags(c->regs, RFLAGS_ARITH, f);
	return 0;
}

static int emulate_move(struct emulate_ctx *c, ZydisMnemonic m)
{
	uint64_t v, addr;
	int rc;

	switch (m) {
	case ZYDIS_MNEMONIC_LEA:
		if ((rc = mem_address(c, &c->ops[1], &addr)) < 0)
			return rc;
		return op_write(c, 0, addr);
	case ZYDIS_MNEMONIC_MOVZX:
		if ((rc = op_read(c, 1, &v)) < 0)
			return rc;
		return op_write(c, 0, v);
	case ZYDIS_MNEMONIC_MOVSX:
	case ZYDIS_MNEMONIC_MOVSXD:
		if ((rc = op_read(c, 1, &v)) < 0)
			return rc;
		return op_write(c, 0, sign_extend(v, c->ops[1].size));
	default: /* mov */
		if ((rc = op_read(c, 1, &v)) < 0)
			return rc;
		return op_write(c, 0, v);
	}
}

static int emulate_sign(struct emulate_ctx *c, ZydisMnemonic m)
{
	struct decode_regs *r = c->regs;
	uint64_t rax = r->gpr[DECODE_RAX];

	switch (m) {
	case ZYDIS_MNEMONIC_CDQE: r->gpr[DECODE_RAX] = sign_extend(rax, 32); return 0;
	case ZYDIS_MNEMONIC_CWDE: r->gpr[DECODE_RAX] = sign_extend(rax, 16) & 0xffffffffull; return 0;
	case ZYDIS_MNEMONIC_CQO: r->gpr[DECODE_RDX] = (rax >> 63) ? ~0ull : 0; return 0;
	case ZYDIS_MNEMONIC_CDQ:
		r->gpr[DECODE_RDX] = (rax & 0x80000000ull) ? 0xffffffffull : 0;
		return 0;
	default: return -ENOTSUP;
	}
}

static int emulate_stack(struct emulate_ctx *c, ZydisMnemonic m)
{
	uint64_t v, rsp = c->regs->gpr[DECODE_RSP];
	unsigned bits = c->insn->operand_width;
	int rc;

	if (bits != 64)
		return -ENOTSUP;
	if (m == ZYDIS_MNEMONIC_PUSH) {
		if ((rc = op_read(c, 0, &v)) < 0)
			return rc;
		if ((rc = mem_note_store(c, rsp - 8, 64, 1, v)) < 0)
			return rc;
		c->regs->gpr[DECODE_RSP] = rsp - 8;
		return 0;
	}
	if ((rc = mem_load(c, rsp, 64, &v)) < 0)
		return rc;
	c->regs->gpr[DECODE_RSP] = rsp + 8; /* before the write: pop rsp loads rsp */
	return op_write(c, 0, v);
}

/* call: push the return address (noted, with the call kept so that its ret
 * needs no memory), jump.  ret: to a kept call's return address, or to the
 * one on the real stack, leaving a frame of the starting context. */
static int emulate_call_ret(struct emulate_ctx *c, const struct decode_insn *in)
{
	struct emulate *e = c->e;
	uint64_t rsp = c->regs->gpr[DECODE_RSP], target, v;
	int rc;

	if (c->insn->operand_width != 64 && !(in->flags & DECODE_F_RET))
		return -ENOTSUP;
	if (in->flags & DECODE_F_CALL) {
		if (e->n_calls == EMULATE_MAX_CALLS)
			return -ENOTSUP;
		if (in->branch_target)
			target = in->branch_target;
		else if ((rc = op_read(c, 0, &target)) < 0)
			return rc;
		if ((rc = mem_note_store(c, rsp - 8, 64, 1, c->next_rip)) < 0)
			return rc;
		e->call_ret[e->n_calls] = c->next_rip;
		e->call_slot[e->n_calls] = rsp - 8;
		e->n_calls++;
		e->frame_gen++;
		c->regs->gpr[DECODE_RSP] = rsp - 8;
		c->next_rip = target;
		return 0;
	}
	uint64_t pop = 8;
	if (c->insn->operand_count_visible == 1 && (rc = op_read(c, 0, &v)) == 0)
		pop += v & 0xffff; /* ret imm16 */
	if (e->n_calls > 0 && e->call_slot[e->n_calls - 1] == rsp) {
		target = e->call_ret[--e->n_calls];
	} else {
		if (e->n_calls > 0)
			return -ENOTSUP; /* the stack is not as the calls left it */
		if ((rc = mem_load(c, rsp, 64, &target)) < 0)
			return rc;
		e->frames_left++;
	}
	e->frame_gen++;
	c->regs->gpr[DECODE_RSP] = rsp + pop;
	c->next_rip = target;
	return 0;
}

int emulate_return_from_call(struct emulate *e, struct decode_regs *regs)
{
	uint64_t rsp = regs->gpr[DECODE_RSP];

	if (e->n_calls == 0 || e->call_slot[e->n_calls - 1] != rsp)
		return -ENOTSUP;
	regs->rip = e->call_ret[--e->n_calls];
	e->frame_gen++;
	regs->gpr[DECODE_RSP] = rsp + 8;
	return 0;
}

int emulate_frame_left(struct emulate *e)
{
	if (e->n_calls > 0)
		return -ENOTSUP;
	e->frames_left++;
	e->frame_gen++;
	return 0;
}

static int emulate_jump(struct emulate_ctx *c, const struct decode_insn *in, int cc)
{
	uint64_t target;
	int rc;

	if (cc >= 0) {
		c->next_rip = cond_holds((unsigned)cc, c->regs->rflags) ? in->branch_target
									  : c->next_rip;
		return 0;
	}
	if (in->branch_target) {
		c->next_rip = in->branch_target;
		return 0;
	}
	if ((rc = op_read(c, 0, &target)) < 0) /* jmp reg / jmp [mem] (a switch table) */
		return rc;
	c->next_rip = target;
	return 0;
}

/* Anything else that changes no general register, no flag and no control
 * flow (vector and x87 arithmetic, vector loads and stores, prefetch) is
 * nothing to the registers we follow: its stores are noted, its loads must
 * not read bytes an emulated store wrote. */
static int emulate_other(struct emulate_ctx *c, const struct decode_insn *in)
{
	if (in->regs_written || (in->flags & DECODE_F_STACK) || c->insn->flags_changed)
		return -ENOTSUP;
	for (int i = 0; i < in->n_access; i++) {
		const struct decode_access *a = &in->access[i];
		int rc;
		/* A store over stored bytes is fine: a load there finds the
		 * latest, whose value is not known. */
		if ((a->flags & DECODE_ACC_UNKNOWN_ADDR) ||
		    ((a->kind & DECODE_LOAD) && emulate_stored(c->e, a->addr, a->len)))
			return -ENOTSUP;
		if ((a->kind & DECODE_STORE) && (rc = mem_note_store(c, a->addr, a->len * 8, 0, 0)) < 0)
			return rc;
	}
	return 0;
}

static int emulate_one(struct emulate_ctx *c, const struct decode_insn *in)
{
	ZydisMnemonic m = c->insn->mnemonic;
	enum cond_kind kind = COND_SET; /* (set by cond_of where it finds a code) */
	int cc = cond_of(m, &kind);

	/* A lock prefix makes the access atomic for other cores; what this
	 * thread's run sees is the same (a mutex, a reference count). */
	if (c->insn->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
				   ZYDIS_ATTRIB_HAS_REPNE))
		return -ENOTSUP;
	if (in->flags & DECODE_F_NO_STEP)
		return -ENOTSUP;
	if (in->flags & (DECODE_F_CALL | DECODE_F_RET))
		return emulate_call_ret(c, in);
	if (in->flags & DECODE_F_BRANCH) {
		if (m == ZYDIS_MNEMONIC_JMP || (cc >= 0 && kind == COND_JCC))
			return emulate_jump(c, in, m == ZYDIS_MNEMONIC_JMP ? -1 : cc);
		return -ENOTSUP; /* loop, jrcxz, far jumps */
	}
	if (cc >= 0 && kind == COND_SET)
		return op_write(c, 0, (uint64_t)cond_holds((unsigned)cc, c->regs->rflags));
	if (cc >= 0) { /* cmovcc */
		if (!cond_holds((unsigned)cc, c->regs->rflags)) {
			/* cmov with a false condition still reads its source (it
			 * may fault) and zero-extends a 32-bit destination. */
			uint64_t v, src;
			int rc = op_read(c, 1, &src);
			if (rc == 0)
				rc = op_read(c, 0, &v);
			return rc < 0 ? rc : op_write(c, 0, v);
		}
		return emulate_move(c, ZYDIS_MNEMONIC_MOV);
	}
	switch (m) {
	case ZYDIS_MNEMONIC_NOP:
	case ZYDIS_MNEMONIC_ENDBR64:
		return 0;
	case ZYDIS_MNEMONIC_XTEST:
		/* A signal aborts any transaction before its handler runs, so a
		 * run never starts inside one: ZF set, the other flags clear
		 * (glibc's *_rtm string functions test this before returning). */
		set_flags(c->regs, RFLAGS_ARITH, RFLAGS_ZF);
		return 0;
	case ZYDIS_MNEMONIC_MOV:
	case ZYDIS_MNEMONIC_MOVZX:
	case ZYDIS_MNEMONIC_MOVSX:
	case ZYDIS_MNEMONIC_MOVSXD:
	case ZYDIS_MNEMONIC_LEA:
		return emulate_move(c, m);
	case ZYDIS_MNEMONIC_ADD: case ZYDIS_MNEMONIC_ADC: case ZYDIS_MNEMONIC_SUB:
	case ZYDIS_MNEMONIC_SBB: case ZYDIS_MNEMONIC_CMP: case ZYDIS_MNEMONIC_AND:
	case ZYDIS_MNEMONIC_OR: case ZYDIS_MNEMONIC_XOR: case ZYDIS_MNEMONIC_TEST:
	case ZYDIS_MNEMONIC_INC: case ZYDIS_MNEMONIC_DEC: case ZYDIS_MNEMONIC_NEG:
	case ZYDIS_MNEMONIC_NOT:
		return emulate_alu(c, m);
	case ZYDIS_MNEMONIC_SHL: case ZYDIS_MNEMONIC_SHR: case ZYDIS_MNEMONIC_SAR:
	case ZYDIS_MNEMONIC_ROL: case ZYDIS_MNEMONIC_ROR:
		return emulate_shift(c, m);
	case ZYDIS_MNEMONIC_IMUL:
		return emulate_imul(c);
	case ZYDIS_MNEMONIC_MUL:
		return emulate_widening_mul(c, 0);
	case ZYDIS_MNEMONIC_DIV:
		return emulate_divide(c, 0);
	case ZYDIS_MNEMONIC_IDIV:
		return emulate_divide(c, 1);
	case ZYDIS_MNEMONIC_TZCNT: case ZYDIS_MNEMONIC_LZCNT: case ZYDIS_MNEMONIC_POPCNT:
	case ZYDIS_MNEMONIC_BSF: case ZYDIS_MNEMONIC_BSR:
		return emulate_bits(c, m);
	case ZYDIS_MNEMONIC_SHLX: case ZYDIS_MNEMONIC_SHRX: case ZYDIS_MNEMONIC_SARX:
	case ZYDIS_MNEMONIC_BZHI: case ZYDIS_MNEMONIC_ANDN: case ZYDIS_MNEMONIC_BLSR:
	case ZYDIS_MNEMONIC_BLSMSK: case ZYDIS_MNEMONIC_BLSI:
		return emulate_bmi(c, m);
	case ZYDIS_MNEMONIC_BSWAP: {
		uint64_t v;
		int rc = op_read(c, 0, &v);
		if (rc < 0)
			return rc;
		if (c->insn->operand_width == 64)
			return op_write(c, 0, __builtin_bswap64(v));
		if (c->insn->operand_width == 32)
			return op_write(c, 0, __builtin_bswap32((uint32_t)v));
		return -ENOTSUP; /* 16-bit bswap is undefined */
	}
	case ZYDIS_MNEMONIC_XCHG: {
		uint64_t a, b;
		int rc;
		if ((rc = op_read(c, 0, &a)) < 0 || (rc = op_read(c, 1, &b)) < 0 ||
		    (rc = op_write(c, 0, b)) < 0)
			return rc;
		return op_write(c, 1, a);
	}
	case ZYDIS_MNEMONIC_XADD: case ZYDIS_MNEMONIC_CMPXCHG:
		return emulate_atomic(c, m);
	case ZYDIS_MNEMONIC_CDQE: case ZYDIS_MNEMONIC_CWDE: case ZYDIS_MNEMONIC_CQO:
	case ZYDIS_MNEMONIC_CDQ:
		return emulate_sign(c, m);
	case ZYDIS_MNEMONIC_PUSH: case ZYDIS_MNEMONIC_POP:
		return emulate_stack(c, m);
	case ZYDIS_MNEMONIC_LEAVE: {
		/* mov rsp, rbp; pop rbp */
		uint64_t v;
		int rc = mem_load(c, c->regs->gpr[DECODE_RBP], 64, &v);
		if (rc < 0)
			return rc;
		c->regs->gpr[DECODE_RSP] = c->regs->gpr[DECODE_RBP] + 8;
		c->regs->gpr[DECODE_RBP] = v;
		return 0;
	}
	default: {
		/* Vector code first; what it does not know changes no general
		 * register, or stops here, as before. */
		int rc = emulate_vec_insn(c, in);
		if (rc <= 0)
			return rc;
		if ((rc = emulate_other(c, in)) == 0)
			emulate_vec_clobber(c);
		return rc;
	}
	}
}

/* What an instruction that fails must leave as it found: the registers it
 * writes (its form's dep_writes, hidden operands too: test_emulate sweeps
 * libc's code for an instruction that changes any other), rip, the flags,
 * and e's scalars (its arrays are only appended to, so its counts put them
 * back).  Only those: saving all 20 words of the registers was ~100 of the
 * runtime's ~1,100 instructions an emulated one (callgrind, interp).  Word
 * by word, not as block copies: the last instruction wrote them so, and a
 * 16-byte load across narrower stores still in the store buffer cannot
 * take their data (a stall of some dozen cycles a load). */
struct emulate_undo {
	uint64_t gprs; /* which gpr[] holds: bit r, register r */
	uint64_t gpr[DECODE_NGPR];
	uint64_t rip, rflags;
	int n_stores, n_calls, frames_left;
	uint32_t frame_gen;
	uint64_t spill_lo, spill_hi, code_page[2];
};
_Static_assert(offsetof(struct emulate, store_addr) == 64,
	       "a scalar added to struct emulate: save it in emulate_undo too");

static void undo_save(struct emulate_undo *u, const struct emulate *e, const struct decode_regs *regs,
		      uint64_t writes)
{
	u->gprs = writes & ((1ull << DECODE_NGPR) - 1);
	for (uint64_t w = u->gprs; w; w &= w - 1) {
		int r = __builtin_ctzll(w);
		u->gpr[r] = regs->gpr[r];
	}
	u->rip = regs->rip;
	u->rflags = regs->rflags;
	u->n_stores = e->n_stores;
	u->n_calls = e->n_calls;
	u->frames_left = e->frames_left;
	u->frame_gen = e->frame_gen;
	u->spill_lo = e->spill_lo;
	u->spill_hi = e->spill_hi;
	u->code_page[0] = e->code_page[0];
	u->code_page[1] = e->code_page[1];
}

static void undo_restore(const struct emulate_undo *u, struct emulate *e, struct decode_regs *regs)
{
	for (uint64_t w = u->gprs; w; w &= w - 1) {
		int r = __builtin_ctzll(w);
		regs->gpr[r] = u->gpr[r];
	}
	regs->rip = u->rip;
	regs->rflags = u->rflags;
	e->n_stores = u->n_stores;
	e->n_calls = u->n_calls;
	e->frames_left = u->frames_left;
	e->frame_gen = u->frame_gen;
	e->spill_lo = u->spill_lo;
	e->spill_hi = u->spill_hi;
	e->code_page[0] = u->code_page[0];
	e->code_page[1] = u->code_page[1];
	e->late_ns = 0;
}

int emulate_insn(struct emulate *e, struct decode_regs *regs, const struct decode_insn *in,
		 const struct decode_zydis *z)
{
	int rc;

	/* The instruction runs on regs in place; one half done is undone. */
	struct emulate_undo undo;
	undo_save(&undo, e, regs, z->form.dep_writes);
	e->late_ns = 0;
	struct emulate_ctx c = {.e = e, .regs = regs, .insn = &z->insn, .ops = z->ops,
			.next_rip = regs->rip + z->insn.length};
	if ((rc = emulate_one(&c, in)) < 0 || !emulate_code_readable(e, c.next_rip)) {
		undo_restore(&undo, e, regs);
		return rc < 0 ? rc : -EFAULT;
	}
	regs->rip = c.next_rip;
	return 0;
}
