/* test_datasym's library linked at start: a global and a TLS array. */
int dsa_global[5] = {1, 2, 3, 4, 5};
__thread long dsa_tls[3] = {7, 8, 9};

int *dsa_global_addr(void)
{
	return dsa_global;
}

long *dsa_tls_addr(void)
{
	return dsa_tls;
}
