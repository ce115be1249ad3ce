//! A cryptographically secure generator for choices an adversary must not be able to replay: the
//! ChaCha20 stream cipher (Bernstein 2008, "ChaCha, a variant of Salsa20") keyed by a 256-bit secret,
//! with one independent stream per stream number (the cipher's 64-bit nonce), so callers can give each
//! unit of work its own stream and get results that do not depend on the order the units run in.
//!
//! Hybrid k-anonymization draws its relocation targets, moved records and output order from it
//! (implementation note `nergiz-2013-hybrid-k-anonymization.md` §2.4 and §6: a CSPRNG with a secret
//! seed). The engine never draws the key itself (it reads no environment): the caller passes one, from
//! the operating system's randomness for published output, or expanded from a number for repeatable tests.

use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

use super::rng::{shuffle_with, SplitMix64};

/// A 256-bit key. Its `Debug` output never shows the key, and comparing two keys takes the same time
/// whatever they hold.
#[derive(Clone)]
pub struct SecretKey([u8; 32]);

impl PartialEq for SecretKey {
    fn eq(&self, other: &Self) -> bool {
        self.0
            .iter()
            .zip(&other.0)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
    }
}

impl Eq for SecretKey {}

impl SecretKey {
    /// The key `bytes`, which must come from a cryptographically secure source to keep the draws
    /// unpredictable.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A key expanded from a 64-bit number: repeatable, and therefore only for tests and benchmarks
    /// (anyone who guesses the number replays every draw). Never for output that is published.
    pub fn from_u64(seed: u64) -> Self {
        let mut expander = SplitMix64(seed);
        let mut bytes = [0u8; 32];
        for chunk in bytes.chunks_exact_mut(8) {
            chunk.copy_from_slice(&expander.next_u64().to_le_bytes());
        }
        Self(bytes)
    }
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

/// One ChaCha20 stream of a [`SecretKey`]. Not `Clone`: a copy would repeat its draws.
pub struct SecretStream(ChaCha20Rng);

impl std::fmt::Debug for SecretStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretStream(..)")
    }
}

impl SecretStream {
    /// Stream number `stream` of `key`; different numbers give independent streams.
    pub fn new(key: &SecretKey, stream: u64) -> Self {
        let mut cipher = ChaCha20Rng::from_seed(key.0);
        cipher.set_stream(stream);
        Self(cipher)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniform number in `0..bound`, without bias (Lemire 2019, "Fast random integer generation in an
    /// interval", multiply-shift with rejection); 0 when `bound` is 0.
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        let mut product = u128::from(self.next_u64()) * u128::from(bound);
        let mut low = product as u64;
        if low < bound {
            // reject the `2^64 mod bound` lowest products, which would favour the small results
            let threshold = bound.wrapping_neg() % bound;
            while low < threshold {
                product = u128::from(self.next_u64()) * u128::from(bound);
                low = product as u64;
            }
        }
        (product >> 64) as u64
    }

    /// Shuffles `items` uniformly (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        shuffle_with(items, |bound| self.below(bound));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_repeatable_per_key_and_number_and_independent_otherwise() {
        let key = SecretKey::from_u64(7);
        let draw = |key: &SecretKey, stream: u64| -> Vec<u64> {
            let mut s = SecretStream::new(key, stream);
            (0..4).map(|_| s.next_u64()).collect()
        };
        assert_eq!(draw(&key, 3), draw(&key, 3));
        assert_ne!(draw(&key, 3), draw(&key, 4));
        assert_ne!(draw(&key, 3), draw(&SecretKey::from_u64(8), 3));
        assert_ne!(SecretKey::from_u64(7), SecretKey::from_u64(8));
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let key = SecretKey::from_bytes([0xAB; 32]);
        let shown = format!("{key:?} {:?}", SecretStream::new(&key, 0));
        assert_eq!(shown, "SecretKey(..) SecretStream(..)");
    }

    #[test]
    fn bounded_draws_stay_in_range_and_cover_it_evenly() {
        let mut s = SecretStream::new(&SecretKey::from_u64(1), 0);
        assert_eq!(s.below(0), 0);
        assert_eq!(s.below(1), 0);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[s.below(6) as usize] += 1;
        }
        // each count is binomial(60000, 1/6): mean 10000, sd about 91; 6 sd either side
        assert!(
            counts.iter().all(|&c| (9_450..=10_550).contains(&c)),
            "{counts:?}"
        );
        let big = u64::MAX / 3 * 2 + 1;
        assert!((0..1000).all(|_| s.below(big) < big));
    }

    #[test]
    fn shuffles_are_permutations() {
        let mut s = SecretStream::new(&SecretKey::from_u64(2), 9);
        let mut items: Vec<u32> = (0..100).collect();
        s.shuffle(&mut items);
        assert_ne!(items, (0..100).collect::<Vec<u32>>());
        items.sort_unstable();
        assert_eq!(items, (0..100).collect::<Vec<u32>>());
    }
}
