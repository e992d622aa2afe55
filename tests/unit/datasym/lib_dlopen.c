/* test_datasym's library loaded with dlopen after datasym_init. */
double dsb_global[6] = {1.5, 2.5};
int dsb_other = 3;
/* Global-dynamic TLS in a dlopen'd library: a block the loader mallocs
 * on a thread's first access (dynamic TLS, not datasym's). */
__thread int dsb_tls[2];

int *dsb_tls_addr(void)
{
	return dsb_tls;
}
