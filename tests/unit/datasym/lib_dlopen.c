/* test_datasym's library loaded with dlopen after datasym_init. */
double dsb_global[6] = {1.5, 2.5};
int dsb_other = 3;
