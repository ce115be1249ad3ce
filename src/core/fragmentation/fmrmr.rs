//! The FMRMR criterion and fragment construction (Zakerzadeh et al., §2.3 and Algorithm 1; note §3.3
//! with its fixes).
//!
//! FMRMR(𝓕) = Σₜ (Vₜ − Wₜ), with Vₜ the mean relevance I(class; j) of fragment t's features and
//! Wₜ = (1/|t|²)·Σ_{k,j∈t} I(k; j) its redundancy over ordered pairs. Whether W counts the diagonal
//! I(k; k) = H(k) is the note's gap A2: counted by default (the literal formula, which gives balanced
//! fragments and positive early contributions), left out on request.
//!
//! Algorithm 1 seeds two fragments with the pair of features of highest mutual information (the smaller
//! index to the first fragment, ties to the lexicographically smallest pair), then repeatedly adds the
//! unassigned feature whose move raises FMRMR most (the best contribution may be negative: the running
//! maximum starts at −∞, fix A3), scanning features in schema order and the first fragment before the
//! second, a later candidate winning only by more than [`TIE_TOLERANCE`]. More than two fragments bisect
//! the largest fragment again until there are enough (fix A4).

use super::mutual_information::MiMatrix;

/// Contributions closer than this are ties, kept by the first candidate.
pub const TIE_TOLERANCE: f64 = 1e-12;

/// Whether the redundancy W counts each feature with itself (I(k; k) = H(k)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Diagonal {
    /// Counted (the literal formula; the default).
    #[default]
    Included,
    /// Left out: distinct pairs only.
    Excluded,
}

/// Relevance sum R, redundancy sum Q (ordered pairs) and size of one fragment.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    relevance: f64,
    redundancy: f64,
    size: usize,
}

impl Sums {
    /// The sums with feature `a` added, `link` = Σ_{j∈S} I(a; j).
    fn with(self, mi: &MiMatrix, a: usize, link: f64, diagonal: Diagonal) -> Sums {
        Sums {
            relevance: self.relevance + mi.get(mi.class(), a),
            redundancy: self.redundancy + 2.0 * link + diagonal_term(mi, a, diagonal),
            size: self.size + 1,
        }
    }

    /// Vₜ − Wₜ (0 for an empty fragment).
    fn score(self) -> f64 {
        if self.size == 0 {
            return 0.0;
        }
        let s = self.size as f64;
        self.relevance / s - self.redundancy / (s * s)
    }
}

fn diagonal_term(mi: &MiMatrix, a: usize, diagonal: Diagonal) -> f64 {
    match diagonal {
        Diagonal::Included => mi.get(a, a),
        Diagonal::Excluded => 0.0,
    }
}

fn sums(mi: &MiMatrix, fragment: &[usize], diagonal: Diagonal) -> Sums {
    let mut sums = Sums {
        size: fragment.len(),
        ..Sums::default()
    };
    for &j in fragment {
        sums.relevance += mi.get(mi.class(), j);
        for &k in fragment {
            sums.redundancy += if k == j {
                diagonal_term(mi, j, diagonal)
            } else {
                mi.get(k, j)
            };
        }
    }
    sums
}

/// The mean relevance Vₜ and the mean redundancy Wₜ of one fragment (0 and 0 when empty).
pub fn relevance_and_redundancy(
    mi: &MiMatrix,
    fragment: &[usize],
    diagonal: Diagonal,
) -> (f64, f64) {
    let sums = sums(mi, fragment, diagonal);
    if sums.size == 0 {
        return (0.0, 0.0);
    }
    let s = sums.size as f64;
    (sums.relevance / s, sums.redundancy / (s * s))
}

/// FMRMR of a fragmentation (each fragment a list of feature indices).
pub fn fmrmr(mi: &MiMatrix, fragments: &[Vec<usize>], diagonal: Diagonal) -> f64 {
    fragments
        .iter()
        .map(|f| sums(mi, f, diagonal).score())
        .sum()
}

/// Splits `features` into two fragments by Algorithm 1. Fewer than two features stay one fragment.
pub fn bisect(mi: &MiMatrix, features: &[usize], diagonal: Diagonal) -> Vec<Vec<usize>> {
    if features.len() < 2 {
        return vec![features.to_vec()];
    }
    // seeds: the pair of highest mutual information, ties to the smallest pair
    let mut seeds = (features[0], features[1]);
    let mut best = f64::NEG_INFINITY;
    for (x, &i) in features.iter().enumerate() {
        for &j in &features[x + 1..] {
            let (i, j) = (i.min(j), i.max(j));
            let value = mi.get(i, j);
            if value > best + TIE_TOLERANCE
                || ((value - best).abs() <= TIE_TOLERANCE && (i, j) < seeds)
            {
                best = value;
                seeds = (i, j);
            }
        }
    }
    let mut fragments = [vec![seeds.0], vec![seeds.1]];
    let mut current = [
        sums(mi, &fragments[0], diagonal),
        sums(mi, &fragments[1], diagonal),
    ];
    // per candidate and fragment: Σ_{j ∈ fragment} I(a; j)
    let mut unassigned: Vec<usize> = features
        .iter()
        .copied()
        .filter(|&a| a != seeds.0 && a != seeds.1)
        .collect();
    unassigned.sort_unstable();
    let mut linked: Vec<[f64; 2]> = unassigned
        .iter()
        .map(|&a| [mi.get(a, seeds.0), mi.get(a, seeds.1)])
        .collect();
    while !unassigned.is_empty() {
        let mut choice = (0usize, 0usize);
        let mut best = f64::NEG_INFINITY;
        for (x, &a) in unassigned.iter().enumerate() {
            for t in 0..2 {
                let c = contribution(mi, a, current[t], linked[x][t], diagonal);
                if c > best + TIE_TOLERANCE {
                    best = c;
                    choice = (x, t);
                }
            }
        }
        let (x, t) = choice;
        let a = unassigned.remove(x);
        let link = linked.remove(x);
        current[t] = current[t].with(mi, a, link[t], diagonal);
        fragments[t].push(a);
        for (y, &b) in unassigned.iter().enumerate() {
            linked[y][t] += mi.get(a, b);
        }
    }
    fragments.into_iter().collect()
}

/// FMRMR gained by adding feature `a` to a fragment with sums `s`, where `link` = Σ_{j∈S} I(a; j)
/// (the note's closed form, §3.3 fix 5).
fn contribution(mi: &MiMatrix, a: usize, s: Sums, link: f64, diagonal: Diagonal) -> f64 {
    s.with(mi, a, link, diagonal).score() - s.score()
}

/// `m` fragments of the features `0..n`: Algorithm 1, then the largest fragment bisected again until
/// there are `m` (ties to the first). `None` when `m` is 0 or above the number of features.
pub fn fragment(mi: &MiMatrix, m: usize, diagonal: Diagonal) -> Option<Vec<Vec<usize>>> {
    let n = mi.features();
    if m == 0 || m > n {
        return None;
    }
    let mut fragments = vec![(0..n).collect::<Vec<usize>>()];
    while fragments.len() < m {
        let largest = (0..fragments.len())
            .max_by(|&a, &b| fragments[a].len().cmp(&fragments[b].len()).then(b.cmp(&a)))
            .unwrap_or(0);
        let split = bisect(mi, &fragments[largest], diagonal);
        fragments.splice(largest..=largest, split);
    }
    Some(fragments)
}

/// Moves features until every fragment holds between `low` and `high` features (the caller checks that
/// the bounds can hold them all): while a fragment is too large, one of its features moves to a fragment
/// that can take it; while one is too small, it takes a feature from a fragment that can spare one. Each
/// move is the one that keeps FMRMR highest (ties to the first feature and target in order).
pub fn bounded(
    mi: &MiMatrix,
    mut fragments: Vec<Vec<usize>>,
    (low, high): (usize, usize),
    diagonal: Diagonal,
) -> Vec<Vec<usize>> {
    loop {
        let over = fragments.iter().position(|f| f.len() > high);
        let under = fragments.iter().position(|f| f.len() < low);
        let moves: Vec<(usize, usize)> = match (over, under) {
            (Some(from), _) => (0..fragments.len())
                .filter(|&to| to != from && fragments[to].len() < high)
                .map(|to| (from, to))
                .collect(),
            (None, Some(to)) => (0..fragments.len())
                .filter(|&from| from != to && fragments[from].len() > low)
                .map(|from| (from, to))
                .collect(),
            (None, None) => return fragments,
        };
        let mut best: Option<(f64, usize, usize, usize)> = None;
        for (from, to) in moves {
            for x in 0..fragments[from].len() {
                let mut trial = fragments.clone();
                let feature = trial[from].remove(x);
                trial[to].push(feature);
                let score = fmrmr(mi, &trial, diagonal);
                if best.is_none_or(|(b, ..)| score > b + TIE_TOLERANCE) {
                    best = Some((score, from, x, to));
                }
            }
        }
        let Some((_, from, x, to)) = best else {
            return fragments;
        };
        let feature = fragments[from].remove(x);
        fragments[to].push(feature);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The note's §6.6 toy: five features of entropy 1.
    fn toy() -> MiMatrix {
        MiMatrix::from_values(
            &[1.0; 5],
            &[0.40, 0.35, 0.30, 0.20, 0.10],
            &[
                (0, 1, 0.60),
                (0, 2, 0.10),
                (0, 3, 0.05),
                (0, 4, 0.20),
                (1, 2, 0.30),
                (1, 3, 0.02),
                (1, 4, 0.05),
                (2, 3, 0.25),
                (2, 4, 0.02),
                (3, 4, 0.15),
            ],
        )
    }

    fn sorted(mut fragments: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
        for f in &mut fragments {
            f.sort_unstable();
        }
        fragments
    }

    #[test]
    fn the_toy_with_the_diagonal_matches_the_note() {
        let mi = toy();
        // the first iteration's contributions (f4 → F2 wins)
        let f1 = sums(&mi, &[0], Diagonal::Included);
        let f2 = sums(&mi, &[1], Diagonal::Included);
        let c = |a: usize, s: Sums, seed: usize| {
            contribution(&mi, a, s, mi.get(a, seed), Diagonal::Included)
        };
        for (got, want) in [
            (c(2, f1, 0), 0.400),
            (c(2, f2, 1), 0.325),
            (c(3, f1, 0), 0.375),
            (c(3, f2, 1), 0.415),
            (c(4, f1, 0), 0.250),
            (c(4, f2, 1), 0.350),
        ] {
            assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        }
        let fragments = sorted(bisect(&mi, &[0, 1, 2, 3, 4], Diagonal::Included));
        assert_eq!(fragments, vec![vec![0, 2], vec![1, 3, 4]]);
        let score = fmrmr(&mi, &fragments, Diagonal::Included);
        assert!((score - (-0.36556)).abs() < 1e-5, "{score}");
    }

    #[test]
    fn the_toy_without_the_diagonal_matches_the_note() {
        let mi = toy();
        let fragments = sorted(bisect(&mi, &[0, 1, 2, 3, 4], Diagonal::Excluded));
        assert_eq!(fragments, vec![vec![0], vec![1, 2, 3, 4]]);
        let score = fmrmr(&mi, &fragments, Diagonal::Excluded);
        assert!((score - 0.53875).abs() < 1e-5, "{score}");
    }

    #[test]
    fn small_inputs_and_more_fragments() {
        let mi = toy();
        assert_eq!(fragment(&mi, 0, Diagonal::Included), None);
        assert_eq!(fragment(&mi, 6, Diagonal::Included), None);
        assert_eq!(
            fragment(&mi, 1, Diagonal::Included),
            Some(vec![vec![0, 1, 2, 3, 4]])
        );
        let three = fragment(&mi, 3, Diagonal::Included).unwrap();
        assert_eq!(three.len(), 3);
        let mut all: Vec<usize> = three.concat();
        all.sort_unstable();
        assert_eq!(all, vec![0, 1, 2, 3, 4]);
        assert_eq!(bisect(&mi, &[3], Diagonal::Included), vec![vec![3]]);
        assert_eq!(
            sorted(bisect(&mi, &[2, 4], Diagonal::Included)),
            vec![vec![2], vec![4]]
        );
    }

    /// Every split of `features` into two non-empty fragments (the first holding the first feature).
    fn best_split(mi: &MiMatrix, n: usize, diagonal: Diagonal) -> f64 {
        let mut best = f64::NEG_INFINITY;
        for mask in 0u32..(1 << (n - 1)) {
            let mut a = vec![0usize];
            let mut b = Vec::new();
            for f in 1..n {
                if mask >> (f - 1) & 1 == 1 {
                    a.push(f);
                } else {
                    b.push(f);
                }
            }
            if b.is_empty() {
                continue;
            }
            best = best.max(fmrmr(mi, &[a, b], diagonal));
        }
        best
    }

    fn random_matrix() -> impl Strategy<Value = MiMatrix> {
        (2usize..=10).prop_flat_map(|n| {
            let pairs = n * (n - 1) / 2;
            (
                proptest::collection::vec(0.2f64..2.0, n),
                proptest::collection::vec(0.0f64..1.0, n),
                proptest::collection::vec(0.0f64..1.0, pairs),
            )
                .prop_map(move |(h, r, p)| {
                    let mut list = Vec::new();
                    let mut at = 0;
                    for i in 0..n {
                        for j in i + 1..n {
                            list.push((i, j, p[at]));
                            at += 1;
                        }
                    }
                    MiMatrix::from_values(&h, &r, &list)
                })
        })
    }

    proptest! {
        /// Greedy construction terminates with a partition into two non-empty fragments whose FMRMR
        /// is at most the exhaustive optimum, in both conventions.
        #[test]
        fn greedy_is_a_partition_and_never_beats_the_exhaustive_optimum(mi in random_matrix()) {
            let n = mi.features();
            for diagonal in [Diagonal::Included, Diagonal::Excluded] {
                let fragments = bisect(&mi, &(0..n).collect::<Vec<_>>(), diagonal);
                prop_assert_eq!(fragments.len(), 2);
                prop_assert!(fragments.iter().all(|f| !f.is_empty()));
                let mut all = fragments.concat();
                all.sort_unstable();
                prop_assert_eq!(all, (0..n).collect::<Vec<_>>());
                let greedy = fmrmr(&mi, &fragments, diagonal);
                prop_assert!(greedy <= best_split(&mi, n, diagonal) + 1e-9);
            }
        }

        /// Size bounds that can hold the features are met, the result is still a partition, and bounds
        /// the fragmentation already meets change nothing.
        #[test]
        fn bounds_are_met(mi in random_matrix(), m in 2usize..4, low in 1usize..3, slack in 0usize..3) {
            let n = mi.features();
            let high = (n.div_ceil(m) + slack).min(n);
            prop_assume!(m <= n && low * m <= n && high >= low);
            let free = fragment(&mi, m, Diagonal::Included).unwrap();
            let fragments = bounded(&mi, free.clone(), (low, high), Diagonal::Included);
            prop_assert!(fragments.iter().all(|f| (low..=high).contains(&f.len())), "{:?}", fragments);
            let mut all = fragments.concat();
            all.sort_unstable();
            prop_assert_eq!(all, (0..n).collect::<Vec<_>>());
            prop_assert_eq!(bounded(&mi, free.clone(), (1, n), Diagonal::Included), free);
        }

        /// Scaling every mutual information (another log base) leaves the fragmentation as it is.
        #[test]
        fn the_log_base_does_not_change_the_fragments(mi in random_matrix(), scale in 0.5f64..3.0) {
            let n = mi.features();
            let mut h = Vec::new();
            let mut r = Vec::new();
            let mut pairs = Vec::new();
            for i in 0..n {
                h.push(mi.get(i, i) * scale);
                r.push(mi.get(i, mi.class()) * scale);
                for j in i + 1..n {
                    pairs.push((i, j, mi.get(i, j) * scale));
                }
            }
            let scaled = MiMatrix::from_values(&h, &r, &pairs);
            let features: Vec<usize> = (0..n).collect();
            prop_assert_eq!(
                bisect(&mi, &features, Diagonal::Included),
                bisect(&scaled, &features, Diagonal::Included)
            );
        }
    }
}
