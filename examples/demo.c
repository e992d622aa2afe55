/* demo: a small program with a dead store for `witch run` to find.
 *
 * reset_grid() clears the whole grid every step, and then draw_step()
 * writes every cell again before anything reads it: all of reset_grid's
 * stores are dead (killed by draw_step's).  checksum() reads every cell,
 * so draw_step's stores are used.  Stores are half reset_grid's and half
 * draw_step's, so DeadCraft reports the pair <reset_grid, draw_step> on
 * top and a fraction of roughly 0.3-0.5 (the software sampler samples
 * stores in proportion to the time spent near them, and the two loops do
 * not run at quite the same speed).  Fix: drop reset_grid().
 */
#include <stdio.h>
#include <stdlib.h>

#define W 1024
#define H 1024

static int grid[H][W];

__attribute__((noinline)) static void reset_grid(void)
{
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			grid[y][x] = 0;
}

__attribute__((noinline)) static void draw_step(int step)
{
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			grid[y][x] = step;
}

__attribute__((noinline)) static long checksum(void)
{
	long s = 0;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			s += grid[y][x];
	return s;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 2000;
	long total = 0;
	for (int i = 0; i < steps; i++) {
		reset_grid();
		draw_step(i);
		total += checksum();
	}
	printf("checksum %ld\n", total);
	return 0;
}
