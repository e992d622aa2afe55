/* deps_forward: libwitch.so's Zydis and libunwind, reached through
 * pointers that dlopen's handles fill (deps_backend.h).  Each forwarder
 * has the library's own name and prototype, so the runtime's callers are
 * as they were; none is called before deps_ready() (decode.c and
 * unwind.c ask it first). */
#define UNW_LOCAL_ONLY
#include "witch/deps_backend.h"

#include <Zydis/Zydis.h>
#include <dlfcn.h>
#include <errno.h>
#include <libunwind.h>
#include <stddef.h>

const int deps_backend_lazy = 1;

static struct {
	ZyanStatus (*calc_absolute_address)(const ZydisDecodedInstruction *,
					    const ZydisDecodedOperand *, ZyanU64, ZyanU64 *);
	ZyanStatus (*decode_instruction)(const ZydisDecoder *, ZydisDecoderContext *, const void *,
					 ZyanUSize, ZydisDecodedInstruction *);
	ZyanStatus (*decode_operands)(const ZydisDecoder *, const ZydisDecoderContext *,
				      const ZydisDecodedInstruction *, ZydisDecodedOperand *, ZyanU8);
	ZyanStatus (*decoder_init)(ZydisDecoder *, ZydisMachineMode, ZydisStackWidth);
	const char *(*mnemonic_string)(ZydisMnemonic);
	ZydisRegisterClass (*register_class)(ZydisRegister);
	ZyanI8 (*register_id)(ZydisRegister);
	ZydisRegister (*register_largest)(ZydisMachineMode, ZydisRegister);
	ZydisRegisterWidth (*register_width)(ZydisMachineMode, ZydisRegister);
	const void *decode_full; /* (an address in Zydis's text only) */

	int (*get_proc_info)(unw_cursor_t *, unw_proc_info_t *);
	int (*get_proc_info_by_ip)(unw_addr_space_t, unw_word_t, unw_proc_info_t *, void *);
	int (*get_reg)(unw_cursor_t *, int, unw_word_t *);
	int (*get_save_loc)(unw_cursor_t *, int, unw_save_loc_t *);
	int (*init_local2)(unw_cursor_t *, unw_context_t *, int);
	int (*is_signal_frame)(unw_cursor_t *);
	int (*set_caching_policy)(unw_addr_space_t, unw_caching_policy_t);
	int (*step)(unw_cursor_t *);
} deps_fn;

/* libunwind's local address space: its variable's value, read at the bind
 * (set by libunwind's own relocation, never changed after). */
unw_addr_space_t unw_local_addr_space;

int deps_backend_bind(void *zydis, void *unwind, const char **missing)
{
	static const struct {
		int zydis; /* 1: from Zydis, 0: from libunwind */
		const char *name;
		size_t at;
	} names[] = {
#define ZY(field, name) {1, name, offsetof(__typeof__(deps_fn), field)}
#define UNW(field, name) {0, name, offsetof(__typeof__(deps_fn), field)}
		ZY(calc_absolute_address, "ZydisCalcAbsoluteAddress"),
		ZY(decode_instruction, "ZydisDecoderDecodeInstruction"),
		ZY(decode_operands, "ZydisDecoderDecodeOperands"),
		ZY(decoder_init, "ZydisDecoderInit"),
		ZY(mnemonic_string, "ZydisMnemonicGetString"),
		ZY(register_class, "ZydisRegisterGetClass"),
		ZY(register_id, "ZydisRegisterGetId"),
		ZY(register_largest, "ZydisRegisterGetLargestEnclosing"),
		ZY(register_width, "ZydisRegisterGetWidth"),
		ZY(decode_full, "ZydisDecoderDecodeFull"),
		UNW(get_proc_info, "_ULx86_64_get_proc_info"),
		UNW(get_proc_info_by_ip, "_ULx86_64_get_proc_info_by_ip"),
		UNW(get_reg, "_ULx86_64_get_reg"),
		UNW(get_save_loc, "_ULx86_64_get_save_loc"),
		UNW(init_local2, "_ULx86_64_init_local2"),
		UNW(is_signal_frame, "_ULx86_64_is_signal_frame"),
		UNW(set_caching_policy, "_ULx86_64_set_caching_policy"),
		UNW(step, "_ULx86_64_step"),
#undef ZY
#undef UNW
	};
	void *space = dlsym(unwind, "_ULx86_64_local_addr_space");
	if (!space) {
		*missing = "_ULx86_64_local_addr_space";
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *p = dlsym(names[i].zydis ? zydis : unwind, names[i].name);
		if (!p) {
			*missing = names[i].name;
			return -ENOENT;
		}
		*(void **)((char *)&deps_fn + names[i].at) = p;
	}
	unw_local_addr_space = *(unw_addr_space_t *)space;
	*missing = NULL;
	return 0;
}

const void *deps_backend_decoder_fn(void)
{
	return deps_fn.decode_full;
}

const void *deps_backend_unwinder_fn(void)
{
	return (const void *)deps_fn.step;
}

/* --- the forwarders ------------------------------------------------------ */

ZyanStatus ZydisCalcAbsoluteAddress(const ZydisDecodedInstruction *insn,
				    const ZydisDecodedOperand *op, ZyanU64 at, ZyanU64 *out)
{
	return deps_fn.calc_absolute_address(insn, op, at, out);
}

ZyanStatus ZydisDecoderDecodeInstruction(const ZydisDecoder *d, ZydisDecoderContext *ctx,
					 const void *buf, ZyanUSize len,
					 ZydisDecodedInstruction *insn)
{
	return deps_fn.decode_instruction(d, ctx, buf, len, insn);
}

ZyanStatus ZydisDecoderDecodeOperands(const ZydisDecoder *d, const ZydisDecoderContext *ctx,
				      const ZydisDecodedInstruction *insn, ZydisDecodedOperand *ops,
				      ZyanU8 n)
{
	return deps_fn.decode_operands(d, ctx, insn, ops, n);
}

ZyanStatus ZydisDecoderInit(ZydisDecoder *d, ZydisMachineMode mode, ZydisStackWidth width)
{
	return deps_fn.decoder_init(d, mode, width);
}

const char *ZydisMnemonicGetString(ZydisMnemonic m)
{
	return deps_fn.mnemonic_string(m);
}

ZydisRegisterClass ZydisRegisterGetClass(ZydisRegister r)
{
	return deps_fn.register_class(r);
}

ZyanI8 ZydisRegisterGetId(ZydisRegister r)
{
	return deps_fn.register_id(r);
}

ZydisRegister ZydisRegisterGetLargestEnclosing(ZydisMachineMode mode, ZydisRegister r)
{
	return deps_fn.register_largest(mode, r);
}

ZydisRegisterWidth ZydisRegisterGetWidth(ZydisMachineMode mode, ZydisRegister r)
{
	return deps_fn.register_width(mode, r);
}

int unw_get_proc_info(unw_cursor_t *c, unw_proc_info_t *pi)
{
	return deps_fn.get_proc_info(c, pi);
}

int unw_get_proc_info_by_ip(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, void *arg)
{
	return deps_fn.get_proc_info_by_ip(as, ip, pi, arg);
}

int unw_get_reg(unw_cursor_t *c, int reg, unw_word_t *out)
{
	return deps_fn.get_reg(c, reg, out);
}

int unw_get_save_loc(unw_cursor_t *c, int reg, unw_save_loc_t *out)
{
	return deps_fn.get_save_loc(c, reg, out);
}

int unw_init_local2(unw_cursor_t *c, unw_context_t *uc, int flags)
{
	return deps_fn.init_local2(c, uc, flags);
}

int unw_is_signal_frame(unw_cursor_t *c)
{
	return deps_fn.is_signal_frame(c);
}

int unw_set_caching_policy(unw_addr_space_t as, unw_caching_policy_t p)
{
	return deps_fn.set_caching_policy(as, p);
}

int unw_step(unw_cursor_t *c)
{
	return deps_fn.step(c);
}
