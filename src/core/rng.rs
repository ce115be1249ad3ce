//! A small seeded pseudo-random generator shared by the engine's seeded algorithms (Datafly's tie-break,
//! the synthetic data generator): SplitMix64 (Steele, Lea & Flood 2014, "Fast splittable pseudorandom
//! number generators", OOPSLA). Same seed, same sequence, on every platform.

/// A small, well-distributed deterministic generator (Steele, Lea, Flood 2014).
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound > 0`; 0 when `bound` is 0), by multiply-shift: the bias is below
    /// `bound / 2^64`.
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// An index in `0..bound` (0 when `bound` is 0), as [`SplitMix64::below`].
    pub fn index(&mut self, bound: usize) -> usize {
        self.below(bound as u64) as usize
    }

    /// Shuffles `items` uniformly (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        shuffle_with(items, |bound| self.below(bound));
    }
}

/// Shuffles `items` (Fisher–Yates) with `below`, a draw in `0..bound`: uniform when the draws are.
pub fn shuffle_with<T>(items: &mut [T], mut below: impl FnMut(u64) -> u64) {
    for i in (1..items.len()).rev() {
        let j = below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_bounded_draws() {
        let mut a = SplitMix64(7);
        let mut b = SplitMix64(7);
        let mut c = SplitMix64(8);
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let zs: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
        let mut seen = [false; 5];
        for _ in 0..200 {
            let x = a.below(5);
            assert!(x < 5);
            seen[x as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "every value of 0..5 drawn");
        assert_eq!(a.below(0), 0);
    }
}
