/* Unit test of sysret_tick (sysret.h): which ticks arrived on a system
 * call's way out.  Code is laid out in a mapping whose first page is
 * PROT_NONE (a read there must fail, not fault), then a callee that makes
 * the call as glibc's pread does, then its caller:
 *
 *   callee: mov eax,0x11; syscall; cmp rax,-4096; ja +16; ret
 *   caller: call callee; add r14d,1; mov rdi,r13; mov rsi,rax; call +0
 *
 * Each row names the tick's pc, rcx and the word below rsp (where a `ret`
 * took its address from), and the answer: the kernel's time where pc is on
 * a short path from the return address that leaves rcx alone, else the
 * program's.  An rcx off pc's page counts only in a loaded module (the
 * lookup that spares most ticks a remote read): this binary's own
 * `syscall; ret` (sysret_stub) is one, a copy in the mapping, as a JIT's
 * would be, is not.  Table-driven, each row keeps its __LINE__.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "witch/decode.h"
#include "witch/sysret.h"

#include "check.h"

#define PAGE 4096

/* Offsets in the mapping. */
enum {
	CALLEE = PAGE + 16,         /* mov eax,0x11 */
	SYSCALL = CALLEE + 5,       /* 0f 05 */
	AFTER = SYSCALL + 2,        /* cmp rax,-4096: rcx after the call */
	JA = AFTER + 6,             /* ja +16 */
	RET = JA + 2,               /* ret */
	CALL_SITE = PAGE + 256,     /* call callee */
	BACK = CALL_SITE + 5,       /* add r14d,1: where the ret goes */
	MOV_RDI = BACK + 4,         /* mov rdi,r13 */
	MOV_RSI = MOV_RDI + 3,      /* mov rsi,rax */
	NOPS = PAGE + 512,          /* syscall, then 12 nops */
	ECX = PAGE + 640,           /* syscall; mov ecx,5; nop */
	UD2 = PAGE + 768,           /* ud2; nop: not a system call */
	PAGE_START = 2 * PAGE,      /* nop at a page's start, PROT_NONE before */
	JIT = PAGE_START + 64,      /* syscall; ret: a JIT's, off the caller's page */
	STUB_AFTER = 7,             /* sysret_stub's return address of its syscall */
};

/* getpid as glibc's wrappers make a call, in this binary's text. */
__asm__(".text\n.globl sysret_stub\n.type sysret_stub,@function\n"
	"sysret_stub: mov $0x27,%eax\n syscall\n ret\n.size sysret_stub,.-sysret_stub\n");
void sysret_stub(void);
static const uint8_t jit_code[] = {0x0f, 0x05, 0xc3};
static uint64_t data_words[4]; /* a module's data, not code */

/* How a row's rcx is given. */
enum { RCX_MAP, RCX_ABS, RCX_STUB, RCX_DATA };

static const uint8_t callee[] = {0xb8, 0x11, 0, 0, 0, 0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff,
				 0x77, 0x10, 0xc3};
static const uint8_t caller[] = {0xe8, 0, 0, 0, 0, 0x41, 0x83, 0xc6, 0x01, 0x4c, 0x89, 0xef,
				 0x48, 0x89, 0xc6, 0xe8, 0, 0, 0, 0};
static const uint8_t ecx_code[] = {0x0f, 0x05, 0xb9, 0x05, 0, 0, 0, 0x90};
static const uint8_t ud2_code[] = {0x0f, 0x0b, 0x90};

struct row {
	int line;
	long pc;     /* offsets in the mapping */
	long rcx;    /* an offset in the mapping, a value, or one from sysret_stub or data_words */
	int rcx_kind;
	long ret_to; /* an offset, or 0: none */
	int want;
};

static const struct row rows[] = {
	/* where the kernel takes the pending tick on the way out */
	{__LINE__, AFTER, AFTER, 0, 0, 1},            /* at the return address */
	{__LINE__, SYSCALL, AFTER, 0, 0, 1},          /* moved back to restart */
	{__LINE__, JA, AFTER, 0, 0, 1},               /* one instruction on */
	{__LINE__, RET, AFTER, 0, 0, 1},              /* two */
	{__LINE__, BACK, AFTER, 0, BACK, 1},          /* past the ret, in the caller */
	{__LINE__, MOV_RSI, AFTER, 0, BACK, 1},       /* ... two more on */
	{__LINE__, MOV_RSI + 8, AFTER, 0, BACK, 1},   /* on into the caller's next call */
	{__LINE__, NOPS + 2 + 8, NOPS + 2, 0, 0, 1},  /* 8 instructions on */
	/* the program's own time */
	{__LINE__, NOPS + 2 + 9, NOPS + 2, 0, 0, 0},  /* 9: past SYSRET_MAX_INSNS */
	{__LINE__, MOV_RDI, AFTER, 0, 0, 0},          /* past a ret with no address below rsp */
	{__LINE__, MOV_RDI, AFTER, 0, MOV_RSI, 0},    /* ... with another one there */
	{__LINE__, ECX + 7, ECX + 2, 0, 0, 0},        /* the path wrote rcx */
	{__LINE__, UD2 + 2, UD2 + 2, 0, 0, 0},        /* rcx past a ud2, not a syscall */
	{__LINE__, CALL_SITE, AFTER, 0, 0, 0},        /* pc before the call */
	{__LINE__, MOV_RDI, 8, 1, BACK, 0},           /* rcx unmapped: no fault */
	{__LINE__, PAGE_START, PAGE_START, 0, 0, 0},  /* rcx - 2 in a PROT_NONE page */
	{__LINE__, BACK, -1, 1, BACK, 0},             /* rcx at the top of the address space */
	/* rcx off pc's page: a module's code, or not recognised */
	{__LINE__, BACK, STUB_AFTER, RCX_STUB, BACK, 1}, /* this binary's syscall; ret */
	{__LINE__, BACK, JIT + 2, RCX_MAP, BACK, 0},  /* a JIT's: no module holds it */
	{__LINE__, BACK, 8, RCX_DATA, BACK, 0},       /* a module's data: read, not 0f 05 */
};

int main(void)
{
	if (decode_init() < 0) {
		FAIL(__LINE__, "decode_init failed");
		return 1;
	}
	uint8_t *m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		FAIL(__LINE__, "mmap failed");
		return 1;
	}
	memset(m + PAGE, 0x90, 2 * PAGE);
	memcpy(m + CALLEE, callee, sizeof(callee));
	memcpy(m + CALL_SITE, caller, sizeof(caller));
	m[NOPS] = 0x0f;
	m[NOPS + 1] = 0x05;
	memcpy(m + ECX, ecx_code, sizeof(ecx_code));
	memcpy(m + UD2, ud2_code, sizeof(ud2_code));
	memcpy(m + JIT, jit_code, sizeof(jit_code));
	if (mprotect(m, PAGE, PROT_NONE) < 0) {
		FAIL(__LINE__, "mprotect failed");
		return 1;
	}
	uint64_t stack[8];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		/* PAGE_START's row: the page before its pc PROT_NONE */
		int need_code = r->pc != PAGE_START;
		if (mprotect(m + PAGE, PAGE, need_code ? PROT_READ | PROT_WRITE : PROT_NONE) < 0) {
			FAIL(r->line, "mprotect failed");
			continue;
		}
		struct decode_regs regs;
		memset(&regs, 0, sizeof(regs));
		regs.rip = (uint64_t)(uintptr_t)(m + r->pc);
		uint64_t base = r->rcx_kind == RCX_MAP    ? (uint64_t)(uintptr_t)m
				: r->rcx_kind == RCX_STUB ? (uint64_t)(uintptr_t)&sysret_stub
				: r->rcx_kind == RCX_DATA ? (uint64_t)(uintptr_t)data_words
							  : 0;
		regs.gpr[DECODE_RCX] = base + (uint64_t)r->rcx;
		stack[3] = r->ret_to ? (uint64_t)(uintptr_t)(m + r->ret_to) : 0;
		regs.gpr[DECODE_RSP] = (uint64_t)(uintptr_t)&stack[4];
		int got = sysret_tick(&regs);
		CHECK(r->line, got == r->want, "sysret_tick: %d, want %d", got, r->want);
	}
	munmap(m, 3 * PAGE);
	return check_failures != 0;
}
