//! Benchmark: written below.
fn main() {}
