// cxx_names: C++ names for the report tests (tests/tools/test_names.sh).
//
// Half of the stores are dead, in methods of a class template inside a
// namespace: ns::Foo<int>::bar fills the array and ns::Foo<int>::baz
// overwrites every element before anything reads it, then sum reads it
// (the pair <ns::Foo<int>::bar, ns::Foo<int>::baz> carries all the waste).
// ns::detail::step<unsigned> is an inlined function template, so inlined
// frames need their linkage names demangled too. The test checks that
// every format of `witch report` shows the demangled names, and JSON the
// mangled ones beside them.
//
// Usage: cxx_names [REPS]     default 6 (~0.4 s)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace ns {
namespace detail {
template <typename T>
inline __attribute__((always_inline)) T step(T v)
{
	return v * 1103515245u + 12345u;
}
} // namespace detail

template <typename T>
class Foo {
public:
	explicit Foo(std::size_t n) : a_(n) {}
	__attribute__((noinline)) void bar(T seed);
	__attribute__((noinline)) void baz(T seed);
	__attribute__((noinline)) std::uint64_t sum() const;

private:
	std::vector<T> a_;
};

template <typename T>
void Foo<T>::bar(T seed)
{
	T v = seed;
	for (std::size_t i = 0; i < a_.size(); i++) {
		v = detail::step<unsigned>(v);
		a_[i] = v;
	}
}

template <typename T>
void Foo<T>::baz(T seed)
{
	T v = seed;
	for (std::size_t i = 0; i < a_.size(); i++) {
		v = detail::step<unsigned>(v) ^ 7;
		a_[i] = v;
	}
}

template <typename T>
std::uint64_t Foo<T>::sum() const
{
	std::uint64_t s = 0;
	for (T x : a_)
		s += x;
	return s;
}
} // namespace ns

int main(int argc, char **argv)
{
	long reps = argc > 1 ? std::atol(argv[1]) : 6;
	ns::Foo<int> f(8u << 20);
	std::uint64_t total = 0;

	for (long r = 0; r < reps; r++) {
		f.bar((int)r);
		f.baz((int)r + 1);
		total += f.sum();
	}
	std::printf("%llu\n", (unsigned long long)total);
	return 0;
}
