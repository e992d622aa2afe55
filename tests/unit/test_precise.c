/* Unit test of precise.c, the access behind a watchpoint trap (Witch 4.5).
 *
 * Each row is a trap as the kernel reports it: the registers after the
 * access (rip past the accessing instruction, pointers moved), the watched
 * bytes, and what precise_resolve must answer: the accessing instruction
 * (a label of the code below plus an offset), its access kind and length,
 * the overlap, and how many innermost frames are not the accessing code's.
 * The code is never run: it only has to be decodable and have unwind
 * tables (.cfi), as the program's code would; pr_nocfi has none, so only
 * what a window decoded (decode_cache_note, through the decode cache's
 * prev) says where its instructions begin.
 *
 * A second table, for precise_stored_value: a trapped store, the
 * registers after it, and the bytes it wrote, worked out from them, or
 * -ENOENT where they cannot be (it loads, writes a general register, or
 * repeats).  Its rows run in a signal handler whose frame holds xmm1 =
 * STORED_XMM1 (set just before a raw tgkill), the vector stores' source.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "witch/decode.h"
#include "witch/decode_zcache.h"
#include "witch/emulate_vec.h"
#include "witch/precise.h"
#include "witch/xsave.h"
#include "witch/unwind.h"

#include "check.h"

#define FN(name, body)                                                     \
	".globl " #name "\n.type " #name ",@function\n" #name ":\n"        \
	".cfi_startproc\n" body ".cfi_endproc\n.size " #name ", .-" #name "\n"

__asm__(".text\n"
	FN(pr_store, "mov %rax, (%rdi)\n" "pr_store_end: ret\n")           /* 48 89 07 */
	FN(pr_load, "nop\n" "mov (%rsi), %rax\n" "pr_load_end: ret\n")      /* 90; 48 8b 06 */
	FN(pr_self_load, "mov (%rax), %rax\n" "pr_self_load_end: ret\n")   /* 48 8b 00 */
	FN(pr_push, "push %rbx\n" "pr_push_end: pop %rbx\n ret\n")         /* 53 */
	FN(pr_vec, "vmovdqu %ymm0, (%rdi)\n" "pr_vec_end: ret\n")          /* c5 fe 7f 07 */
	FN(pr_rep, "rep movsb\n" "pr_rep_end: ret\n")                       /* f3 a4 */
	FN(pr_repq, "rep movsq\n" "pr_repq_end: ret\n")                    /* f3 48 a5 */
	FN(pr_callee, "ret\n")
	FN(pr_caller, "nop\n" "call pr_callee\n" "pr_caller_ret: ret\n")  /* 90; e8 rel32 */
	/* A PLT entry as ld makes them with IBT (.plt.sec), its GOT slot, and
	 * callers through it and through memory (-fno-plt). */
	FN(pr_target, "ret\n")
	FN(pr_stub, "endbr64\n" "bnd jmp *pr_got(%rip)\n")              /* f3 0f 1e fa; f2 ff 25 */
	FN(pr_stub_other, "endbr64\n" "bnd jmp *pr_got_other(%rip)\n")
	FN(pr_stub_caller, "call pr_stub\n" "pr_stub_caller_ret: ret\n")
	FN(pr_stub_other_caller, "call pr_stub_other\n" "pr_stub_other_caller_ret: ret\n")
	FN(pr_icaller, "call *pr_got(%rip)\n" "pr_icaller_ret: ret\n")  /* ff 15 */
	FN(pr_rcaller, "call *%rax\n" "pr_rcaller_ret: ret\n")         /* ff d0 */
	/* jumps through memory that leave no return address: a stub reached
	 * by a tail call, a dispatch table */
	FN(pr_tail, "jmp *pr_got(%rip)\n")                                /* ff 25 */
	FN(pr_disp, "jmp *(%rcx,%rax,8)\n")                               /* ff 24 c1 */
	FN(pr_imm, "movq $-5, (%rdi)\n" "pr_imm_end: ret\n")
	FN(pr_byte, "mov %al, (%rdi)\n" "pr_byte_end: ret\n")
	FN(pr_rmw, "add %rax, (%rdi)\n" "pr_rmw_end: ret\n")
	FN(pr_movsd, "movsd %xmm1, (%rdi)\n" "pr_movsd_end: ret\n")
	FN(pr_movss, "movss %xmm1, (%rdi)\n" "pr_movss_end: ret\n")
	FN(pr_movq, "movq %xmm1, (%rdi)\n" "pr_movq_end: ret\n")
	FN(pr_stos, "stosq\n" "pr_stos_end: ret\n")
	".globl pr_nocfi\npr_nocfi: mov %rax, (%rdi)\npr_nocfi_end: ret\n"
	".data\n.balign 8\npr_got: .quad pr_target\npr_got_other: .quad pr_callee\n"
	"pr_table: .quad pr_target, pr_callee\n.text\n");

extern char pr_store[], pr_store_end[], pr_load[], pr_load_end[], pr_self_load[],
	pr_self_load_end[], pr_push[], pr_push_end[], pr_vec[], pr_vec_end[], pr_rep[], pr_rep_end[], pr_repq[], pr_repq_end[],
	pr_callee[], pr_caller[], pr_caller_ret[], pr_target[], pr_stub[], pr_stub_other[],
	pr_stub_caller_ret[], pr_stub_other_caller_ret[], pr_icaller[], pr_icaller_ret[],
	pr_rcaller[], pr_rcaller_ret[], pr_tail[], pr_disp[],
	pr_nocfi[], pr_nocfi_end[], pr_imm[], pr_imm_end[], pr_byte[], pr_byte_end[], pr_rmw[],
	pr_rmw_end[], pr_movsd[], pr_movsd_end[], pr_movss[], pr_movss_end[], pr_movq[],
	pr_movq_end[], pr_stos[], pr_stos_end[];
extern uint64_t pr_got, pr_got_other, pr_table[2];

static uint64_t data[8];
/* Return slots: stack[4] pr_caller_ret, stack[1] pr_icaller_ret, stack[2]
 * pr_stub_caller_ret, stack[0] pr_stub_other_caller_ret, stack[3]
 * pr_rcaller_ret. */
static uint64_t stack[8];

#define A(p) ((uint64_t)(uintptr_t)(p))
#define D(i) A(&data[i])
#define S(i) A(&stack[i])

struct row {
	int line;
	uint64_t rip, rdi, rsi, rax, rbx, rcx, rsp;
	uint64_t rflags;  /* DF (0x400) for a string instruction run down */
	uint64_t watch;
	uint32_t watch_len;
	int rc;           /* 0 or -ENOENT */
	uint64_t pc;      /* expected, when rc == 0 */
	uint8_t kind;
	uint32_t len;
	uint64_t overlap;
	uint32_t overlap_len;
	int skip;
	uint64_t decoded; /* an instruction a window decoded before the trap, or 0 */
	uint64_t hint;    /* precise_resolve_branch_at's pc (the sample's), or 0:
			   * precise_resolve */
};

static void run(const struct row *r)
{
	static struct decode_cache cache;
	static struct decode_zcache zc;
	struct decode_regs regs;
	struct precise_access p;

	if (!zc.tag) {
		void *zmem = calloc(1, DECODE_ZCACHE_MEM_SIZE);
		CHECK(__LINE__, zmem != NULL, "no memory");
		if (!zmem)
			return;
		decode_zcache_init(&zc, zmem, NULL);
		zc.prev = &cache;
	}

	memset(&regs, 0, sizeof(regs));
	regs.rip = r->rip;
	regs.rflags = r->rflags;
	regs.gpr[DECODE_RDI] = r->rdi;
	regs.gpr[DECODE_RSI] = r->rsi;
	regs.gpr[DECODE_RAX] = r->rax;
	regs.gpr[DECODE_RBX] = r->rbx;
	regs.gpr[DECODE_RCX] = r->rcx;
	regs.gpr[DECODE_RSP] = r->rsp ? r->rsp : S(6);
	if (r->decoded) {
		struct decode_insn in;
		const struct decode_zydis *z;
		CHECK(r->line, decode_at_zydis_cached(&zc, r->decoded, &regs, &in, &z) == 0,
		      "cannot decode %#lx", (unsigned long)r->decoded);
	}
	int rc = r->hint ? precise_resolve_branch_at(&regs, r->watch, r->watch_len, r->hint, &p)
			 : precise_resolve(&zc, &regs, r->watch, r->watch_len, &p);
	CHECK(r->line, rc == r->rc, "rc %d, want %d", rc, r->rc);
	if (rc != 0 || r->rc != 0)
		return;
	CHECK(r->line, p.pc == r->pc, "pc %#lx, want %#lx", (unsigned long)p.pc,
	      (unsigned long)r->pc);
	CHECK(r->line, p.kind == r->kind, "kind %u, want %u", p.kind, r->kind);
	CHECK(r->line, p.len == r->len, "len %u, want %u", p.len, r->len);
	CHECK(r->line, p.overlap_addr == r->overlap && p.overlap_len == r->overlap_len,
	      "overlap %#lx+%u, want %#lx+%u", (unsigned long)p.overlap_addr, p.overlap_len,
	      (unsigned long)r->overlap, r->overlap_len);
	CHECK(r->line, p.skip_frames == r->skip, "skip %d, want %d", p.skip_frames, r->skip);
}

/* --- precise_stored_value --------------------------------------------------- */

#define STORED_XMM1 0x1122334455667788ull

static const struct stored_row {
	int line;
	const char *pc, *end; /* the store, and rip after it */
	uint64_t rax, rdi;    /* after it (stosq moved rdi on) */
	uint8_t kind;
	uint32_t len;
	int rc;
	uint64_t value;
} stored_rows[] = {
	/* mov [rdi], rax: rax */
	{__LINE__, pr_store, pr_store_end, 0xdeadbeefcafef00dull, D(1), DECODE_STORE, 8, 0,
	 0xdeadbeefcafef00dull},
	/* movq $-5, [rdi]: the immediate, sign-extended */
	{__LINE__, pr_imm, pr_imm_end, 0, D(1), DECODE_STORE, 8, 0, (uint64_t)-5},
	/* mov [rdi], al: the low byte */
	{__LINE__, pr_byte, pr_byte_end, 0x1234, D(1), DECODE_STORE, 1, 0, 0x34},
	/* add [rdi], rax: it loaded the bytes before, gone now */
	{__LINE__, pr_rmw, pr_rmw_end, 1, D(1), DECODE_LOAD | DECODE_STORE, 8, -ENOENT, 0},
	/* ... and asked as a store alone: still the instruction's load */
	{__LINE__, pr_rmw, pr_rmw_end, 1, D(1), DECODE_STORE, 8, -ENOENT, 0},
	/* movsd, movss, movq from xmm1: its low 8, 4, 8 bytes in the frame */
	{__LINE__, pr_movsd, pr_movsd_end, 0, D(1), DECODE_STORE, 8, 0, STORED_XMM1},
	{__LINE__, pr_movss, pr_movss_end, 0, D(1), DECODE_STORE, 4, 0, STORED_XMM1 & 0xffffffffu},
	{__LINE__, pr_movq, pr_movq_end, 0, D(1), DECODE_STORE, 8, 0, STORED_XMM1},
	/* vmovdqu [rdi], ymm0: 32 bytes, more than a value holds */
	{__LINE__, pr_vec, pr_vec_end, 0, D(1), DECODE_STORE, 32, -ENOENT, 0},
	/* push rbx and stosq write a general register (rsp, rdi) */
	{__LINE__, pr_push, pr_push_end, 0, S(5), DECODE_STORE, 8, -ENOENT, 0},
	{__LINE__, pr_stos, pr_stos_end, 7, D(2), DECODE_STORE, 8, -ENOENT, 0},
	/* a load is no store */
	{__LINE__, pr_load + 1, pr_load_end, 0, 0, DECODE_LOAD, 8, -ENOENT, 0},
};

static int stored_ran;

static void on_stored_signal(int sig, siginfo_t *si, void *ucv)
{
	static struct decode_zcache zc;
	static struct emulate_vec vec;
	ucontext_t *uc = ucv;
	(void)sig;
	(void)si;
	if (!zc.tag) {
		void *zmem = calloc(1, DECODE_ZCACHE_MEM_SIZE);
		if (!zmem)
			return;
		decode_zcache_init(&zc, zmem, NULL);
	}
	stored_ran = 1;
	for (size_t i = 0; i < sizeof(stored_rows) / sizeof(stored_rows[0]); i++) {
		const struct stored_row *r = &stored_rows[i];
		struct decode_regs regs;
		memset(&regs, 0, sizeof(regs));
		regs.rip = A(r->end);
		regs.gpr[DECODE_RAX] = r->rax;
		regs.gpr[DECODE_RDI] = r->rdi;
		regs.gpr[DECODE_RSP] = r->pc == pr_push ? S(5) : S(6);
		/* (the store's own address: rdi, or rsp for the push, rdi - 8
		 * for stosq) */
		uint64_t addr = r->pc == pr_push ? S(5) : r->pc == pr_stos ? r->rdi - 8 : r->rdi;
		struct precise_access p = {.pc = A(r->pc), .kind = r->kind, .addr = addr, .len = r->len};
		uint64_t value = 0;
		emulate_vec_begin(&vec, uc->uc_mcontext.fpregs);
		int rc = precise_stored_value(&zc, &vec, &regs, &p, &value);
		CHECK(r->line, rc == r->rc && (rc != 0 || value == r->value), "rc %d value %#llx, want %d %#llx",
		      rc, (unsigned long long)value, r->rc, (unsigned long long)r->value);
	}
}

static void check_stored_values(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stored_signal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &sa, &old);
	long pid = getpid(), tid = syscall(SYS_gettid), rc;
	uint64_t x = STORED_XMM1;
	/* xmm1 set, then the signal with no call between that may change it */
	__asm__ volatile("movq %[x], %%xmm1\n\tsyscall"
			 : "=a"(rc)
			 : "a"((long)SYS_tgkill), "D"(pid), "S"(tid), "d"((long)SIGUSR2), [x] "r"(x)
			 : "rcx", "r11", "memory", "xmm1");
	CHECK(__LINE__, rc == 0 && stored_ran, "tgkill %ld, handler ran %d", rc, stored_ran);
	sigaction(SIGUSR2, &old, NULL);
}

int main(void)
{
	if (decode_init() < 0) {
		fprintf(stderr, "test_precise: cannot initialize the decoder or unwinder\n");
		return 1;
	}
	stack[4] = A(pr_caller_ret);
	stack[1] = A(pr_icaller_ret);
	stack[2] = A(pr_stub_caller_ret);
	stack[0] = A(pr_stub_other_caller_ret);
	stack[3] = A(pr_rcaller_ret);
	const struct row rows[] = {
		/* mov [rdi], rax: the store, all 8 watched bytes */
		{__LINE__, A(pr_store_end), .rdi = D(1), .watch = D(1), .watch_len = 8,
		 .pc = A(pr_store), .kind = DECODE_STORE, .len = 8, .overlap = D(1),
		 .overlap_len = 8},
		/* ... watched from its middle: the overlap is the common part */
		{__LINE__, A(pr_store_end), .rdi = D(1), .watch = D(1) + 4, .watch_len = 8,
		 .pc = A(pr_store), .kind = DECODE_STORE, .len = 8, .overlap = D(1) + 4,
		 .overlap_len = 4},
		/* ... rcx not 0: not a rep instruction still on itself */
		{__LINE__, A(pr_store_end), .rdi = D(1), .rcx = 7, .watch = D(1), .watch_len = 8,
		 .pc = A(pr_store), .kind = DECODE_STORE, .len = 8, .overlap = D(1),
		 .overlap_len = 8},
		/* the instruction before rip touches other bytes: nothing fits */
		{__LINE__, A(pr_store_end), .rdi = D(1), .watch = D(3), .watch_len = 8,
		 .rc = -ENOENT},
		/* mov rax, [rsi] after a nop: the instruction ending at rip */
		{__LINE__, A(pr_load_end), .rsi = D(2), .watch = D(2), .watch_len = 4,
		 .pc = A(pr_load) + 1, .kind = DECODE_LOAD, .len = 8, .overlap = D(2),
		 .overlap_len = 4},
		/* mov rax, [rax]: the address register was overwritten, the one
		 * memory operand must be the access */
		{__LINE__, A(pr_self_load_end), .rax = 12345, .watch = D(0), .watch_len = 8,
		 .pc = A(pr_self_load), .kind = DECODE_LOAD, .len = 8, .overlap = D(0),
		 .overlap_len = 8},
		/* push rbx: rsp moved past the slot; tried with it moved back */
		{__LINE__, A(pr_push_end), .rsp = S(3), .watch = S(3), .watch_len = 8,
		 .pc = A(pr_push), .kind = DECODE_STORE, .len = 8, .overlap = S(3),
		 .overlap_len = 8},
		/* vmovdqu [rdi], ymm0: a 32-byte store, 8 of its bytes watched */
		{__LINE__, A(pr_vec_end), .rdi = D(0), .watch = D(2), .watch_len = 8,
		 .pc = A(pr_vec), .kind = DECODE_STORE, .len = 32, .overlap = D(2),
		 .overlap_len = 8},
		/* rep movsb with 3 left: rip still on it, rdi one past the store */
		{__LINE__, A(pr_rep), .rsi = D(4) + 6, .rdi = D(1) + 6, .rcx = 3, .watch = D(1) + 5,
		 .watch_len = 1, .pc = A(pr_rep), .kind = DECODE_STORE, .len = 1,
		 .overlap = D(1) + 5, .overlap_len = 1},
		/* ... reported after a group of fast-string iterations (Intel):
		 * rsi 40 bytes past the watched source byte, the load */
		{__LINE__, A(pr_rep), .rsi = D(4) + 45, .rdi = D(0), .rcx = 3, .watch = D(4) + 5,
		 .watch_len = 1, .pc = A(pr_rep), .kind = DECODE_LOAD, .len = 1,
		 .overlap = D(4) + 5, .overlap_len = 1},
		/* ... both pointers past it (rdi 16 bytes, rsi 40): the nearer, the
		 * store, touched it last */
		{__LINE__, A(pr_rep), .rsi = D(4) + 45, .rdi = D(1) + 45, .rcx = 3, .watch = D(4) + 5,
		 .watch_len = 1, .pc = A(pr_rep), .kind = DECODE_STORE, .len = 1,
		 .overlap = D(4) + 5, .overlap_len = 1},
		/* ... run down (DF): rdi 40 bytes below the watched byte, the store */
		{__LINE__, A(pr_rep), .rflags = 0x400, .rsi = D(7), .rdi = D(1) + 5 - 40, .rcx = 3,
		 .watch = D(1) + 5, .watch_len = 1, .pc = A(pr_rep), .kind = DECODE_STORE, .len = 1,
		 .overlap = D(1) + 5, .overlap_len = 1},
		/* ... more than a group (4 KiB) behind both pointers: not this */
		{__LINE__, A(pr_rep), .rsi = D(4) + 5000, .rdi = D(1) + 5000, .rcx = 3, .watch = D(4) + 5,
		 .watch_len = 1, .rc = -ENOENT},
		/* ... ahead of the pointers (not reached yet): not this */
		{__LINE__, A(pr_rep), .rsi = D(4), .rdi = D(1), .rcx = 3, .watch = D(4) + 5,
		 .watch_len = 1, .rc = -ENOENT},
		/* rep movsq done (rcx 0, rip past it): its last element, 8 bytes
		 * below rdi, over the watched 4 (strings' format_record) */
		{__LINE__, A(pr_repq_end), .rsi = D(4) + 24, .rdi = D(1) + 24, .watch = D(1) + 20,
		 .watch_len = 4, .pc = A(pr_repq), .kind = DECODE_STORE, .len = 8,
		 .overlap = D(1) + 20, .overlap_len = 4},
		/* ... its last load, from the source */
		{__LINE__, A(pr_repq_end), .rsi = D(4) + 24, .rdi = D(1) + 24, .watch = D(4) + 16,
		 .watch_len = 8, .pc = A(pr_repq), .kind = DECODE_LOAD, .len = 8,
		 .overlap = D(4) + 16, .overlap_len = 8},
		/* rep movsb done, reported after its last group (Intel): the
		 * store 40 bytes behind rdi */
		{__LINE__, A(pr_rep_end), .rsi = D(4) + 45, .rdi = D(1) + 45, .watch = D(1) + 5,
		 .watch_len = 1, .pc = A(pr_rep), .kind = DECODE_STORE, .len = 1,
		 .overlap = D(1) + 5, .overlap_len = 1},
		/* ... bytes past where both strings ended: not this */
		{__LINE__, A(pr_repq_end), .rsi = D(4) + 24, .rdi = D(1) + 24, .watch = D(7) + 8,
		 .watch_len = 8, .rc = -ENOENT},
		/* the call's push of its return address traps on the callee's first
		 * instruction: the call is the leaf, the callee's frame is dropped */
		{__LINE__, A(pr_callee), .rsp = S(4), .watch = S(4), .watch_len = 8,
		 .pc = A(pr_caller) + 1, .kind = DECODE_STORE, .len = 8, .overlap = S(4),
		 .overlap_len = 8, .skip = 1},
		/* ... the same where a window decoded the ret ending at the
		 * callee's start (pr_rep's), which reads [rsp] too: a ret does not
		 * fall through, so it is not taken for the instruction before */
		{__LINE__, A(pr_callee), .rsp = S(4), .watch = S(4), .watch_len = 8,
		 .pc = A(pr_caller) + 1, .kind = DECODE_STORE, .len = 8, .overlap = S(4),
		 .overlap_len = 8, .skip = 1, .decoded = A(pr_callee) - 1},
		/* the callee's ret read it: the trap is at the return site */
		{__LINE__, A(pr_caller_ret), .rsp = S(5), .watch = S(4), .watch_len = 8,
		 .pc = A(pr_caller) + 1, .kind = DECODE_LOAD, .len = 8, .overlap = S(4),
		 .overlap_len = 8},
		/* ... but not when the watched slot is another */
		{__LINE__, A(pr_caller_ret), .rsp = S(5), .watch = S(2), .watch_len = 8,
		 .rc = -ENOENT},
		/* a PLT entry's jmp read its GOT slot: the trap is at the target;
		 * the jmp (after endbr64) is the leaf, in the caller's stack */
		{__LINE__, A(pr_target), .rsp = S(2), .watch = A(&pr_got), .watch_len = 8,
		 .pc = A(pr_stub) + 4, .kind = DECODE_LOAD, .len = 8, .overlap = A(&pr_got),
		 .overlap_len = 8},
		/* ... 4 of its bytes watched */
		{__LINE__, A(pr_target), .rsp = S(2), .watch = A(&pr_got) + 4, .watch_len = 4,
		 .pc = A(pr_stub) + 4, .kind = DECODE_LOAD, .len = 8, .overlap = A(&pr_got) + 4,
		 .overlap_len = 4},
		/* a stub whose slot holds another target did not bring us here */
		{__LINE__, A(pr_target), .rsp = S(0), .watch = A(&pr_got_other), .watch_len = 8,
		 .rc = -ENOENT},
		/* the stub jumps through another slot than the watched one */
		{__LINE__, A(pr_target), .rsp = S(2), .watch = A(&pr_got_other), .watch_len = 8,
		 .rc = -ENOENT},
		/* call *[got]: its load traps at the callee's first instruction, as
		 * its push would; the call is the leaf, the callee's frame dropped */
		{__LINE__, A(pr_target), .rsp = S(1), .watch = A(&pr_got), .watch_len = 8,
		 .pc = A(pr_icaller), .kind = DECODE_LOAD, .len = 8, .overlap = A(&pr_got),
		 .overlap_len = 8, .skip = 1},
		/* call *[got]'s push onto the watched slot: the callee's first
		 * instruction, as for a direct call; the call is the leaf */
		{__LINE__, A(pr_target), .rsp = S(1), .watch = S(1), .watch_len = 8,
		 .pc = A(pr_icaller), .kind = DECODE_STORE, .len = 8, .overlap = S(1),
		 .overlap_len = 8, .skip = 1},
		/* call *%rax's push: rax (unchanged since) is where it went */
		{__LINE__, A(pr_target), .rax = A(pr_target), .rsp = S(3), .watch = S(3),
		 .watch_len = 8, .pc = A(pr_rcaller), .kind = DECODE_STORE, .len = 8,
		 .overlap = S(3), .overlap_len = 8, .skip = 1},
		/* ... but rax says it went elsewhere: not this call's push */
		{__LINE__, A(pr_target), .rax = A(pr_callee), .rsp = S(3), .watch = S(3),
		 .watch_len = 8, .rc = -ENOENT},
		/* a stub reached by a tail call (`jmp f@plt`) read its GOT slot:
		 * no return address names it, precise_resolve finds nothing ... */
		{__LINE__, A(pr_target), .rsp = S(7), .watch = A(&pr_got), .watch_len = 8,
		 .rc = -ENOENT},
		/* ... the sample's own jump through the slot, which goes here, is it */
		{__LINE__, A(pr_target), .rsp = S(7), .watch = A(&pr_got), .watch_len = 8,
		 .hint = A(pr_tail), .pc = A(pr_tail), .kind = DECODE_LOAD, .len = 8,
		 .overlap = A(&pr_got), .overlap_len = 8},
		/* ... not a jump through another slot (its word goes elsewhere) */
		{__LINE__, A(pr_target), .rsp = S(7), .watch = A(&pr_got_other), .watch_len = 8,
		 .hint = A(pr_stub_other) + 4, .rc = -ENOENT},
		/* ... nor an instruction that is no jump */
		{__LINE__, A(pr_target), .rsi = A(&pr_got), .rsp = S(7), .watch = A(&pr_got),
		 .watch_len = 8, .hint = A(pr_load) + 1, .rc = -ENOENT},
		/* a dispatch table's entry 0, by the jump that indexes it with rax */
		{__LINE__, A(pr_target), .rax = 0, .rcx = A(pr_table), .rsp = S(7), .watch = A(&pr_table[0]),
		 .watch_len = 8, .hint = A(pr_disp), .pc = A(pr_disp), .kind = DECODE_LOAD,
		 .len = 8, .overlap = A(&pr_table[0]), .overlap_len = 8},
		/* ... with rax 1 it would read entry 1, which goes elsewhere */
		{__LINE__, A(pr_target), .rax = 1, .rcx = A(pr_table), .rsp = S(7), .watch = A(&pr_table[0]),
		 .watch_len = 8, .hint = A(pr_disp), .rc = -ENOENT},
		/* code without unwind tables: no function start, so no scan ... */
		{__LINE__, A(pr_nocfi_end), .rdi = D(1), .watch = D(1), .watch_len = 8,
		 .rc = -ENOENT},
		/* ... until a window decoded the store: its end is known */
		{__LINE__, A(pr_nocfi_end), .rdi = D(1), .watch = D(1), .watch_len = 8,
		 .pc = A(pr_nocfi), .kind = DECODE_STORE, .len = 8, .overlap = D(1),
		 .overlap_len = 8, .decoded = A(pr_nocfi)},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run(&rows[i]);
	CHECK(__LINE__, xsave_init() == 0, "no XSAVE layout for the stored-value rows");
	check_stored_values();
	if (check_failures)
		fprintf(stderr, "test_precise: %d failure(s)\n", check_failures);
	return check_failures != 0;
}
