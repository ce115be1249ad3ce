//! (ε, δ)-differential privacy for microdata with SafePub (Bild, Kuhn & Prasser 2018, "SafePub: A
//! truthful data anonymization algorithm with strong privacy guarantees", PoPETs 2018(1):67–87): draw
//! every record with probability β, choose a generalization with a differentially private search over
//! the lattice, and suppress every class below k. The anonymization's share of ε fixes β and, with δ,
//! k ([`parameters`]); the search's share pays the exponential mechanism's draws ([`mechanism`]) over
//! the score functions of [`score`]; the search itself is `core::search::safepub`.

pub mod mechanism;
pub mod parameters;
pub mod score;

use crate::core::secret_rng::SecretKey;

/// The part of SafePub the lattice search runs: its budget, steps and the secret key of its draws.
#[derive(Debug, Clone)]
pub struct PrivateSearch {
    /// The search's share ε_s of the budget.
    pub epsilon: f64,
    /// Pivots drawn (SafePub's step limit).
    pub steps: u32,
    /// The smallest published class.
    pub k: u64,
    /// Records before sampling.
    pub input_rows: u64,
    /// The key of the search's random draws (the operating system's randomness in production).
    pub key: SecretKey,
}

impl PrivateSearch {
    /// The budget of each pivot's draw: half the search budget shared by the steps (the other half
    /// pays the final choice among the pivots).
    pub fn step_epsilon(&self) -> f64 {
        self.epsilon / 2.0 / f64::from(self.steps.max(1))
    }

    /// The budget of the final choice among the pivots.
    pub fn choice_epsilon(&self) -> f64 {
        self.epsilon / 2.0
    }
}
