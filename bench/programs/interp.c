/* interp: a stack-based bytecode interpreter running small programs.
 *
 * Why it is realistic: the design is that of CPython, Lua 4 or a JVM
 * without a JIT.  One function dispatches with a switch over 22 opcodes;
 * operands live on an operand stack in memory; each call gets a frame
 * with zero-initialised locals; constants come from a constant pool; the
 * VM keeps the current instruction's address in the VM state so a runtime
 * error (division by zero, bad index, stack overflow) can say where it
 * happened, and counts instructions against a budget.  Array memory is
 * zero-filled when it is allocated, as managed languages define.  The
 * programs are assembled from readable source in this file: a
 * sum-of-residues loop, recursive Fibonacci, a sieve of Eratosthenes and
 * Collatz chain lengths.  A native implementation checks every result.
 * SCALE multiplies the rounds; a round runs all four programs.
 *
 * Wasted operations by design (rough shares; the oracle measures them):
 *  - dead stores:
 *    * run_vm stores the instruction's pc into vm->pc for error reports on
 *      every instruction; nothing reads it unless an error happens, so all
 *      but the last are dead.  Likely the largest share, a sizeable
 *      fraction of all stores.  The instruction counter vm->executed,
 *      which GCC keeps in a register inside the loop but stores back on
 *      every instruction, is dead the same way.
 *    * push_frame zero-fills the 16 locals of every frame; fib uses one,
 *      which the argument overwrites, so the rest are cleared again by the
 *      next call at that depth without being read.
 *    * alloc_array zero-fills the sieve's array; the program then marks
 *      composites without reading them first.
 *  - silent stores:
 *    * operand stack slots rewritten with the value they hold: loops push
 *      the same constants and bounds to the same depth on every iteration,
 *      and the loop condition's result (1) lands in the same slot.
 *    * push_frame's zeroing of locals that are already zero, and the same
 *      return pc written to the same frame by repeated calls.
 *    * the sieve's `flags[j] = 1` for numbers already marked by a smaller
 *      prime.
 *  - redundant loads:
 *    * instruction fetch: the bytecode never changes, so every fetch of
 *      an opcode or operand after the first repeats its value.
 *    * constant pool reads (OP_CONST) and loads of locals that do not
 *      change inside a loop (bounds like n and limit).
 *    Expect the load client to be high here.
 *
 * Usage: interp [SCALE]     (SCALE >= 1, default 1: about 0.5 s natively)
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

#define STACK_MAX 256
#define FRAMES_MAX 64
#define NLOCALS 16
#define CODE_MAX 1024
#define CONSTS_MAX 64
#define LABELS_MAX 64
#define HEAP_MAX (1 << 16)
#define ROUNDS_PER_SCALE 4

/* Program parameters per round. */
#define SUM_N 1500000
#define FIB_N 24
#define SIEVE_LIMIT 60000
#define SIEVE_REPEAT 4
#define COLLATZ_N 12000

enum opcode {
	OP_HALT,
	OP_CONST,  /* push consts[arg] */
	OP_LOAD,   /* push locals[arg] */
	OP_STORE,  /* locals[arg] = pop */
	OP_INC,    /* locals[arg] += 1 */
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_DIV,
	OP_MOD,
	OP_LT,
	OP_EQ,
	OP_JMP,    /* pc = arg */
	OP_JZ,     /* if (pop == 0) pc = arg */
	OP_JNZ,    /* if (pop != 0) pc = arg */
	OP_DUP,
	OP_POP,
	OP_ALOAD,  /* index = pop; push heap[index] */
	OP_ASTORE, /* index = pop; value = pop; heap[index] = value */
	OP_CALL,   /* arg: target, next word: argument count */
	OP_RET,    /* return pop to the caller */
	OP_EMIT,   /* append pop to the output */
	OP_COUNT
};

/* Operand words after each opcode. */
static const int operand_count[OP_COUNT] = {
	[OP_CONST] = 1, [OP_LOAD] = 1, [OP_STORE] = 1, [OP_INC] = 1,
	[OP_JMP] = 1,   [OP_JZ] = 1,   [OP_JNZ] = 1,   [OP_CALL] = 2,
};

struct program {
	int32_t code[CODE_MAX];
	int len;
	int64_t consts[CONSTS_MAX];
	int nconsts;
	int32_t labels[LABELS_MAX];   /* address, or -1 while unplaced */
	int nlabels;
	int32_t fixups[LABELS_MAX * 4]; /* code offsets holding a label id */
	int nfixups;
};

struct frame {
	int32_t return_pc;
	int32_t base_sp;              /* caller's stack depth at the call */
	int64_t locals[NLOCALS];
};

enum vm_status { VM_OK, VM_STACK_OVERFLOW, VM_STACK_UNDERFLOW,
		 VM_DIV_ZERO, VM_BAD_INDEX, VM_FRAME_OVERFLOW, VM_BUDGET,
		 VM_BAD_OPCODE };

struct vm {
	const struct program *prog;
	int64_t stack[STACK_MAX];
	struct frame frames[FRAMES_MAX];
	int64_t *heap;
	int64_t heap_len;
	int32_t pc;          /* instruction being executed, for errors */
	int32_t fp;
	uint64_t executed;   /* instructions run, checked against budget */
	uint64_t budget;
	uint64_t output;     /* hash of the values the program emitted */
	int64_t last_emit;
};

/* ---- assembler ---- */

static void asm_fail(const char *what)
{
	fprintf(stderr, "interp: assembler: %s\n", what);
	exit(1);
}

static void asm_init(struct program *p)
{
	memset(p, 0, sizeof *p);
}

static void emit_word(struct program *p, int32_t w)
{
	if (p->len >= CODE_MAX)
		asm_fail("code too long");
	p->code[p->len++] = w;
}

static void op0(struct program *p, enum opcode op)
{
	emit_word(p, op);
}

static void op1(struct program *p, enum opcode op, int32_t arg)
{
	emit_word(p, op);
	emit_word(p, arg);
}

/* OP_CONST with the value interned in the constant pool. */
static void push_const(struct program *p, int64_t v)
{
	int i;
	for (i = 0; i < p->nconsts && p->consts[i] != v; i++)
		;
	if (i == p->nconsts) {
		if (p->nconsts >= CONSTS_MAX)
			asm_fail("too many constants");
		p->consts[p->nconsts++] = v;
	}
	op1(p, OP_CONST, i);
}

static int new_label(struct program *p)
{
	if (p->nlabels >= LABELS_MAX)
		asm_fail("too many labels");
	p->labels[p->nlabels] = -1;
	return p->nlabels++;
}

static void place_label(struct program *p, int label)
{
	p->labels[label] = p->len;
}

/* A jump or call to a label, resolved by asm_finish. */
static void op_label(struct program *p, enum opcode op, int label)
{
	emit_word(p, op);
	if (p->nfixups >= LABELS_MAX * 4)
		asm_fail("too many fixups");
	p->fixups[p->nfixups++] = p->len;
	emit_word(p, label);
}

static void op_call(struct program *p, int label, int nargs)
{
	op_label(p, OP_CALL, label);
	emit_word(p, nargs);
}

static void asm_finish(struct program *p)
{
	for (int i = 0; i < p->nfixups; i++) {
		int32_t at = p->fixups[i];
		int32_t target = p->labels[p->code[at]];
		if (target < 0)
			asm_fail("label used but never placed");
		p->code[at] = target;
	}
	/* Verify, as a loader would: known opcodes, jumps inside the code. */
	for (int pc = 0; pc < p->len; pc += 1 + operand_count[p->code[pc]]) {
		int32_t op = p->code[pc];
		if (op < 0 || op >= OP_COUNT || pc + operand_count[op] >= p->len)
			asm_fail("malformed code");
		if ((op == OP_JMP || op == OP_JZ || op == OP_JNZ ||
		     op == OP_CALL) &&
		    (p->code[pc + 1] < 0 || p->code[pc + 1] >= p->len))
			asm_fail("jump outside the code");
		if (op == OP_CONST &&
		    (p->code[pc + 1] < 0 || p->code[pc + 1] >= p->nconsts))
			asm_fail("bad constant index");
		if ((op == OP_LOAD || op == OP_STORE || op == OP_INC) &&
		    (p->code[pc + 1] < 0 || p->code[pc + 1] >= NLOCALS))
			asm_fail("bad local index");
	}
}

/* ---- the programs (locals named in comments) ---- */

/* s = 0; for (i = 0; i < n; i++) s = s + i * i % 7 + i / 3; emit s */
static void build_sum_program(struct program *p, int64_t n)
{
	enum { I, N_, S };
	int loop = new_label(p), done = new_label(p);
	push_const(p, n);
	op1(p, OP_STORE, N_);
	push_const(p, 0);
	op1(p, OP_STORE, S);
	push_const(p, 0);
	op1(p, OP_STORE, I);
	place_label(p, loop);
	op1(p, OP_LOAD, I);
	op1(p, OP_LOAD, N_);
	op0(p, OP_LT);
	op_label(p, OP_JZ, done);
	op1(p, OP_LOAD, S);
	op1(p, OP_LOAD, I);
	op1(p, OP_LOAD, I);
	op0(p, OP_MUL);
	push_const(p, 7);
	op0(p, OP_MOD);
	op0(p, OP_ADD);
	op1(p, OP_LOAD, I);
	push_const(p, 3);
	op0(p, OP_DIV);
	op0(p, OP_ADD);
	op1(p, OP_STORE, S);
	op1(p, OP_INC, I);
	op_label(p, OP_JMP, loop);
	place_label(p, done);
	op1(p, OP_LOAD, S);
	op0(p, OP_EMIT);
	op0(p, OP_HALT);
}

/* fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2); emit fib(n) */
static void build_fib_program(struct program *p, int64_t n)
{
	int fib = new_label(p), recurse = new_label(p);
	push_const(p, n);
	op_call(p, fib, 1);
	op0(p, OP_EMIT);
	op0(p, OP_HALT);

	place_label(p, fib); /* local 0: n */
	op1(p, OP_LOAD, 0);
	push_const(p, 2);
	op0(p, OP_LT);
	op_label(p, OP_JZ, recurse);
	op1(p, OP_LOAD, 0);
	op0(p, OP_RET);
	place_label(p, recurse);
	op1(p, OP_LOAD, 0);
	push_const(p, 1);
	op0(p, OP_SUB);
	op_call(p, fib, 1);
	op1(p, OP_LOAD, 0);
	push_const(p, 2);
	op0(p, OP_SUB);
	op_call(p, fib, 1);
	op0(p, OP_ADD);
	op0(p, OP_RET);
}

/* The array (zero-filled by the VM) marks composites; emit the number of
 * primes below limit. */
static void build_sieve_program(struct program *p, int64_t limit)
{
	enum { I, J, LIMIT, COUNT };
	int outer = new_label(p), inner = new_label(p), next = new_label(p);
	int count_loop = new_label(p), not_prime = new_label(p);
	int done = new_label(p);
	push_const(p, limit);
	op1(p, OP_STORE, LIMIT);
	push_const(p, 2);
	op1(p, OP_STORE, I);
	place_label(p, outer);            /* while (i * i < limit) */
	op1(p, OP_LOAD, I);
	op1(p, OP_LOAD, I);
	op0(p, OP_MUL);
	op1(p, OP_LOAD, LIMIT);
	op0(p, OP_LT);
	op_label(p, OP_JZ, count_loop);
	op1(p, OP_LOAD, I);               /* if (flags[i]) continue */
	op0(p, OP_ALOAD);
	op_label(p, OP_JNZ, next);
	op1(p, OP_LOAD, I);               /* for (j = i * i; ...) */
	op1(p, OP_LOAD, I);
	op0(p, OP_MUL);
	op1(p, OP_STORE, J);
	place_label(p, inner);            /* while (j < limit) */
	op1(p, OP_LOAD, J);
	op1(p, OP_LOAD, LIMIT);
	op0(p, OP_LT);
	op_label(p, OP_JZ, next);
	push_const(p, 1);                 /* flags[j] = 1 */
	op1(p, OP_LOAD, J);
	op0(p, OP_ASTORE);
	op1(p, OP_LOAD, J);               /* j = j + i */
	op1(p, OP_LOAD, I);
	op0(p, OP_ADD);
	op1(p, OP_STORE, J);
	op_label(p, OP_JMP, inner);
	place_label(p, next);
	op1(p, OP_INC, I);
	op_label(p, OP_JMP, outer);

	place_label(p, count_loop);       /* count = 0; i = 2 */
	push_const(p, 0);
	op1(p, OP_STORE, COUNT);
	push_const(p, 2);
	op1(p, OP_STORE, I);
	int count_test = new_label(p);
	place_label(p, count_test);       /* while (i < limit) */
	op1(p, OP_LOAD, I);
	op1(p, OP_LOAD, LIMIT);
	op0(p, OP_LT);
	op_label(p, OP_JZ, done);
	op1(p, OP_LOAD, I);               /* if (!flags[i]) count++ */
	op0(p, OP_ALOAD);
	op_label(p, OP_JNZ, not_prime);
	op1(p, OP_INC, COUNT);
	place_label(p, not_prime);
	op1(p, OP_INC, I);
	op_label(p, OP_JMP, count_test);
	place_label(p, done);
	op1(p, OP_LOAD, COUNT);
	op0(p, OP_EMIT);
	op0(p, OP_HALT);
}

/* For k in 1..n: the Collatz chain length of k; emit the total and the
 * longest. */
static void build_collatz_program(struct program *p, int64_t n)
{
	enum { K, N_, X, STEPS, TOTAL, BEST };
	int outer = new_label(p), chain = new_label(p), odd = new_label(p);
	int chain_done = new_label(p), not_best = new_label(p);
	int done = new_label(p), step_done = new_label(p);
	push_const(p, n);
	op1(p, OP_STORE, N_);
	push_const(p, 1);
	op1(p, OP_STORE, K);
	place_label(p, outer);            /* while (k < n) */
	op1(p, OP_LOAD, K);
	op1(p, OP_LOAD, N_);
	op0(p, OP_LT);
	op_label(p, OP_JZ, done);
	op1(p, OP_LOAD, K);               /* x = k; steps = 0 */
	op1(p, OP_STORE, X);
	push_const(p, 0);
	op1(p, OP_STORE, STEPS);
	place_label(p, chain);            /* while (x != 1) */
	op1(p, OP_LOAD, X);
	push_const(p, 1);
	op0(p, OP_EQ);
	op_label(p, OP_JNZ, chain_done);
	op1(p, OP_LOAD, X);               /* if (x % 2) x = 3x + 1 */
	push_const(p, 2);
	op0(p, OP_MOD);
	op_label(p, OP_JNZ, odd);
	op1(p, OP_LOAD, X);               /* else x = x / 2 */
	push_const(p, 2);
	op0(p, OP_DIV);
	op1(p, OP_STORE, X);
	op_label(p, OP_JMP, step_done);
	place_label(p, odd);
	op1(p, OP_LOAD, X);
	push_const(p, 3);
	op0(p, OP_MUL);
	push_const(p, 1);
	op0(p, OP_ADD);
	op1(p, OP_STORE, X);
	place_label(p, step_done);
	op1(p, OP_INC, STEPS);
	op_label(p, OP_JMP, chain);
	place_label(p, chain_done);
	op1(p, OP_LOAD, TOTAL);           /* total += steps */
	op1(p, OP_LOAD, STEPS);
	op0(p, OP_ADD);
	op1(p, OP_STORE, TOTAL);
	op1(p, OP_LOAD, BEST);            /* best = max(best, steps) */
	op1(p, OP_LOAD, STEPS);
	op0(p, OP_LT);
	op_label(p, OP_JZ, not_best);
	op1(p, OP_LOAD, STEPS);
	op1(p, OP_STORE, BEST);
	place_label(p, not_best);
	op1(p, OP_INC, K);
	op_label(p, OP_JMP, outer);
	place_label(p, done);
	op1(p, OP_LOAD, TOTAL);
	op0(p, OP_EMIT);
	op1(p, OP_LOAD, BEST);
	op0(p, OP_EMIT);
	op0(p, OP_HALT);
}

/* ---- the virtual machine ---- */

/* Zero-filled, as the language promises for new arrays. */
__attribute__((noinline, noclone)) static void
alloc_array(struct vm *vm, int64_t len)
{
	memset(vm->heap, 0, (size_t)len * sizeof *vm->heap);
	vm->heap_len = len;
}

/* New frame for a call: locals start at zero, arguments come off the
 * stack into the first locals.  Returns the new stack depth, or -1. */
__attribute__((noinline, noclone)) static int32_t
push_frame(struct vm *vm, int32_t return_pc, int32_t sp, int32_t nargs)
{
	if (vm->fp + 1 >= FRAMES_MAX || nargs > NLOCALS || nargs > sp)
		return -1;
	struct frame *f = &vm->frames[++vm->fp];
	f->return_pc = return_pc;
	memset(f->locals, 0, sizeof f->locals);
	for (int32_t i = 0; i < nargs; i++)
		f->locals[i] = vm->stack[sp - nargs + i];
	f->base_sp = sp - nargs;
	return f->base_sp;
}

static void vm_reset(struct vm *vm, const struct program *prog)
{
	vm->prog = prog;
	vm->pc = 0;
	vm->fp = 0;
	vm->executed = 0;
	vm->output = 0;
	memset(vm->frames[0].locals, 0, sizeof vm->frames[0].locals);
	vm->frames[0].base_sp = 0;
	vm->frames[0].return_pc = -1;
}

#define NEED(n)                                                        \
	do {                                                           \
		if (sp < (n))                                          \
			return VM_STACK_UNDERFLOW;                     \
	} while (0)
#define ROOM()                                                         \
	do {                                                           \
		if (sp >= STACK_MAX)                                   \
			return VM_STACK_OVERFLOW;                      \
	} while (0)

__attribute__((noinline, noclone)) static enum vm_status
run_vm(struct vm *vm)
{
	const int32_t *code = vm->prog->code;
	const int64_t *consts = vm->prog->consts;
	int64_t *stack = vm->stack;
	int64_t *locals = vm->frames[vm->fp].locals;
	int32_t pc = 0, sp = 0;

	for (;;) {
		vm->pc = pc; /* for error reports only */
		if (++vm->executed > vm->budget)
			return VM_BUDGET;
		int32_t op = code[pc++];
		int64_t a, b;
		switch (op) {
		case OP_HALT:
			return VM_OK;
		case OP_CONST:
			ROOM();
			stack[sp++] = consts[code[pc++]];
			break;
		case OP_LOAD:
			ROOM();
			stack[sp++] = locals[code[pc++]];
			break;
		case OP_STORE:
			NEED(1);
			locals[code[pc++]] = stack[--sp];
			break;
		case OP_INC:
			locals[code[pc++]]++;
			break;
		case OP_ADD:
		case OP_SUB:
		case OP_MUL:
		case OP_DIV:
		case OP_MOD:
		case OP_LT:
		case OP_EQ:
			NEED(2);
			b = stack[--sp];
			a = stack[sp - 1];
			switch (op) {
			case OP_ADD: a += b; break;
			case OP_SUB: a -= b; break;
			case OP_MUL: a *= b; break;
			case OP_DIV:
			case OP_MOD:
				if (b == 0)
					return VM_DIV_ZERO;
				a = op == OP_DIV ? a / b : a % b;
				break;
			case OP_LT: a = a < b; break;
			default: a = a == b; break;
			}
			stack[sp - 1] = a;
			break;
		case OP_JMP:
			pc = code[pc];
			break;
		case OP_JZ:
		case OP_JNZ:
			NEED(1);
			a = stack[--sp];
			if ((a == 0) == (op == OP_JZ))
				pc = code[pc];
			else
				pc++;
			break;
		case OP_DUP:
			NEED(1);
			ROOM();
			stack[sp] = stack[sp - 1];
			sp++;
			break;
		case OP_POP:
			NEED(1);
			sp--;
			break;
		case OP_ALOAD:
			NEED(1);
			a = stack[sp - 1];
			if (a < 0 || a >= vm->heap_len)
				return VM_BAD_INDEX;
			stack[sp - 1] = vm->heap[a];
			break;
		case OP_ASTORE:
			NEED(2);
			a = stack[--sp];
			b = stack[--sp];
			if (a < 0 || a >= vm->heap_len)
				return VM_BAD_INDEX;
			vm->heap[a] = b;
			break;
		case OP_CALL: {
			int32_t target = code[pc], nargs = code[pc + 1];
			sp = push_frame(vm, pc + 2, sp, nargs);
			if (sp < 0)
				return VM_FRAME_OVERFLOW;
			locals = vm->frames[vm->fp].locals;
			pc = target;
			break;
		}
		case OP_RET: {
			NEED(1);
			if (vm->fp == 0)
				return VM_FRAME_OVERFLOW;
			a = stack[sp - 1];
			const struct frame *f = &vm->frames[vm->fp--];
			sp = f->base_sp;
			pc = f->return_pc;
			stack[sp++] = a;
			locals = vm->frames[vm->fp].locals;
			break;
		}
		case OP_EMIT:
			NEED(1);
			a = stack[--sp];
			vm->output = vm->output * 1000003 + (uint64_t)a;
			vm->last_emit = a;
			break;
		default:
			return VM_BAD_OPCODE;
		}
	}
}

static const char *status_name(enum vm_status s)
{
	static const char *const names[] = {
		"ok", "stack overflow", "stack underflow", "division by zero",
		"index out of range", "frame overflow", "budget exhausted",
		"bad opcode",
	};
	return names[s];
}

static uint64_t run_checked(struct vm *vm, const struct program *prog,
			    const char *name)
{
	vm_reset(vm, prog);
	enum vm_status st = run_vm(vm);
	if (st != VM_OK) {
		fprintf(stderr, "interp: %s: %s at pc %d\n", name,
			status_name(st), vm->pc);
		exit(1);
	}
	return vm->output;
}

/* ---- native reference results ---- */

static uint64_t emitted(const int64_t *values, int n)
{
	uint64_t h = 0;
	for (int i = 0; i < n; i++)
		h = h * 1000003 + (uint64_t)values[i];
	return h;
}

static int64_t native_sum(int64_t n)
{
	int64_t s = 0;
	for (int64_t i = 0; i < n; i++)
		s += i * i % 7 + i / 3;
	return s;
}

static int64_t native_fib(int64_t n)
{
	int64_t a = 0, b = 1;
	for (int64_t i = 0; i < n; i++) {
		int64_t t = a + b;
		a = b;
		b = t;
	}
	return a;
}

static int64_t native_primes(int64_t limit, char *flags)
{
	memset(flags, 0, (size_t)limit);
	int64_t count = 0;
	for (int64_t i = 2; i < limit; i++) {
		if (flags[i])
			continue;
		count++;
		for (int64_t j = i * i; j < limit; j += i)
			flags[j] = 1;
	}
	return count;
}

static void native_collatz(int64_t n, int64_t *total, int64_t *best)
{
	*total = *best = 0;
	for (int64_t k = 1; k < n; k++) {
		int64_t x = k, steps = 0;
		while (x != 1) {
			x = x % 2 ? 3 * x + 1 : x / 2;
			steps++;
		}
		*total += steps;
		if (*best < steps)
			*best = steps;
	}
}

int main(int argc, char **argv)
{
	long scale = bench_parse_scale("interp", argc, argv);
	long rounds = scale * ROUNDS_PER_SCALE;

	static struct program sum_prog, fib_prog, sieve_prog, collatz_prog;
	asm_init(&sum_prog);
	build_sum_program(&sum_prog, SUM_N);
	asm_finish(&sum_prog);
	asm_init(&fib_prog);
	build_fib_program(&fib_prog, FIB_N);
	asm_finish(&fib_prog);
	asm_init(&sieve_prog);
	build_sieve_program(&sieve_prog, SIEVE_LIMIT);
	asm_finish(&sieve_prog);
	asm_init(&collatz_prog);
	build_collatz_program(&collatz_prog, COLLATZ_N);
	asm_finish(&collatz_prog);

	/* Native results, to check the interpreter against. */
	char *flags = malloc(SIEVE_LIMIT);
	if (!flags)
		return 1;
	int64_t total, best;
	native_collatz(COLLATZ_N, &total, &best);
	const int64_t want_sum = native_sum(SUM_N);
	const int64_t want_fib = native_fib(FIB_N);
	const int64_t want_primes = native_primes(SIEVE_LIMIT, flags);
	const int64_t want_collatz[2] = { total, best };
	free(flags);

	struct vm *vm = calloc(1, sizeof *vm);
	if (!vm)
		return 1;
	vm->heap = malloc(HEAP_MAX * sizeof *vm->heap);
	if (!vm->heap)
		return 1;
	vm->budget = UINT64_MAX;

	uint64_t checksum = 0, instructions = 0;
	for (long round = 0; round < rounds; round++) {
		uint64_t out[4];
		out[0] = run_checked(vm, &sum_prog, "sum");
		instructions += vm->executed;
		out[1] = run_checked(vm, &fib_prog, "fib");
		instructions += vm->executed;
		for (int r = 0; r < SIEVE_REPEAT; r++) {
			alloc_array(vm, SIEVE_LIMIT);
			out[2] = run_checked(vm, &sieve_prog, "sieve");
			instructions += vm->executed;
		}
		out[3] = run_checked(vm, &collatz_prog, "collatz");
		instructions += vm->executed;
		if (out[0] != emitted(&want_sum, 1) ||
		    out[1] != emitted(&want_fib, 1) ||
		    out[2] != emitted(&want_primes, 1) ||
		    out[3] != emitted(want_collatz, 2)) {
			fprintf(stderr, "interp: round %ld: a program computed "
				"a wrong result\n", round);
			return 1;
		}
		for (int i = 0; i < 4; i++)
			checksum = checksum * 31 + out[i];
	}
	printf("interp: rounds=%ld instructions=%llu checksum=%016llx\n",
	       rounds, (unsigned long long)instructions,
	       (unsigned long long)checksum);
	free(vm->heap);
	free(vm);
	return 0;
}
