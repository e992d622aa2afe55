/* test_datasym's dlopen'd library with initial-exec TLS: the loader puts
 * its block in the static TLS area (DF_STATIC_TLS). */
__thread long dsc_tls[4] __attribute__((tls_model("initial-exec"))) = {1, 2, 3, 4};

long *dsc_tls_addr(void)
{
	return dsc_tls;
}
