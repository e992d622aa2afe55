/* test_datasym's library with a .dynsym of several pages (600 exported
 * longs, 14 KiB of symbols), stripped like lib_stripped.c: its whole
 * pages are given back after they are read in place (elfdata.c), except
 * one the test has patched. */
#define V1(n) long dsm_##n = n;
#define V10(n) V1(n##0) V1(n##1) V1(n##2) V1(n##3) V1(n##4) V1(n##5) V1(n##6) V1(n##7) V1(n##8) V1(n##9)
#define V100(n) V10(n##0) V10(n##1) V10(n##2) V10(n##3) V10(n##4) V10(n##5) V10(n##6) V10(n##7) V10(n##8) V10(n##9)
V100(1) V100(2) V100(3) V100(4) V100(5) V100(6)
