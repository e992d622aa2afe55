/* test_datasym's stripped library (linked with -s: no .symtab, only the
 * .dynsym the loader maps), dlopen'd after datasym_init: its exported
 * data is named from the loaded image's .dynsym (elfdata.h), its static
 * data is not named at all. */
long dss_exported[7] = {7};
static long dss_hidden[5] = {5};

long *dss_hidden_addr(void)
{
	return dss_hidden;
}
