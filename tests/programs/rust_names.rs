// rust_names: Rust names for the report tests (tests/tools/test_names.sh).
// rust_names::shapes::Grid::fill and ::clear store to the same cells, a
// method of a struct inside a module; the test writes a profile whose pcs
// lie in them and checks that every format shows the demangled path
// (rust_names::shapes::Grid::fill), JSON the mangled symbol beside it.
mod shapes {
    pub struct Grid {
        pub cells: Vec<u32>,
    }

    impl Grid {
        #[inline(never)]
        pub fn fill(&mut self, seed: u32) {
            let mut v = seed;
            for c in self.cells.iter_mut() {
                v = v.wrapping_mul(1103515245).wrapping_add(12345);
                *c = v;
            }
        }

        #[inline(never)]
        pub fn clear(&mut self) {
            for c in self.cells.iter_mut() {
                *c = 0;
            }
        }
    }
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1 << 20);
    let mut g = shapes::Grid { cells: vec![1; n] };
    g.fill(7);
    g.clear();
    println!("{}", g.cells.iter().map(|&x| x as u64).sum::<u64>());
}
