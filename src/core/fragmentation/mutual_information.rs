//! Mutual information between discrete columns, as vertical fragmentation needs it (Zakerzadeh et al.,
//! §2.3; note §3.2 and gap A1): the plug-in estimator I(X;Y) = Σ p(x,y)·ln(p(x,y)/(p(x)p(y))) on
//! discrete values, numeric columns discretized into equal-frequency bins first, and the symmetric
//! (n+1)×(n+1) matrix of every pair of features and the class, with I(X;X) = H(X) on the diagonal. The
//! log base rescales every score uniformly, so it does not change any choice; natural logarithms are used.

/// A discrete column: one code per record, codes `0..cardinality`.
#[derive(Debug, Clone, Copy)]
pub struct Discrete<'a> {
    /// The code of every record.
    pub codes: &'a [u32],
    /// The number of distinct codes (every code is below it).
    pub cardinality: usize,
}

/// The entropy H(X) of a column, in nats.
pub fn entropy(x: Discrete<'_>) -> f64 {
    let n = x.codes.len();
    if n == 0 {
        return 0.0;
    }
    let mut counts = vec![0u64; x.cardinality];
    for &c in x.codes {
        counts[c as usize] += 1;
    }
    let n = n as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.ln()
        })
        .sum()
}

/// The mutual information I(X;Y) of two columns of equal length, in nats (the plug-in estimate).
pub fn mutual_information(x: Discrete<'_>, y: Discrete<'_>) -> f64 {
    assert_eq!(x.codes.len(), y.codes.len(), "columns of one table");
    let n = x.codes.len();
    if n == 0 {
        return 0.0;
    }
    let mut joint = vec![0u64; x.cardinality * y.cardinality];
    let mut px = vec![0u64; x.cardinality];
    let mut py = vec![0u64; y.cardinality];
    for (&a, &b) in x.codes.iter().zip(y.codes) {
        joint[a as usize * y.cardinality + b as usize] += 1;
        px[a as usize] += 1;
        py[b as usize] += 1;
    }
    let n = n as f64;
    let mut total = 0.0;
    for (cell, &count) in joint.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let (a, b) = (cell / y.cardinality, cell % y.cardinality);
        // p(x,y)·ln(p(x,y)/(p(x)p(y))) = (c/n)·ln(c·n/(cx·cy))
        total += count as f64 / n * (count as f64 * n / (px[a] as f64 * py[b] as f64)).ln();
    }
    // estimates are never negative; rounding can make an independent pair's slightly so
    total.max(0.0)
}

/// Equal-frequency bins of numbers: codes `0..bins` (fewer when there are fewer distinct numbers) such
/// that each bin holds about as many records, equal numbers always sharing a bin. `numbers[r]` is record
/// r's value.
pub fn equal_frequency_bins(numbers: &[f64], bins: usize) -> (Vec<u32>, usize) {
    let n = numbers.len();
    if n == 0 || bins == 0 {
        return (vec![0; n], 1);
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by(|&a, &b| numbers[a as usize].total_cmp(&numbers[b as usize]));
    let mut codes = vec![0u32; n];
    let mut bin = 0u32;
    let mut start = 0usize;
    while start < n {
        // a run of equal numbers goes to one bin; a bin closes once it reached its share
        let mut end = start;
        while end < n && numbers[order[end] as usize] == numbers[order[start] as usize] {
            end += 1;
        }
        for &r in &order[start..end] {
            codes[r as usize] = bin;
        }
        let target = (bin as usize + 1) * n / bins;
        if end >= target && (bin as usize) < bins - 1 {
            bin += 1;
        }
        start = end;
    }
    let used = codes.iter().copied().max().map_or(1, |m| m as usize + 1);
    (codes, used)
}

/// The symmetric matrix of mutual information between every pair of `n` features and the class (index
/// `n`), with entropies on the diagonal.
#[derive(Debug, Clone, PartialEq)]
pub struct MiMatrix {
    size: usize,
    values: Vec<f64>,
}

impl MiMatrix {
    /// The matrix of `features` and `class` (all of one length).
    pub fn new(features: &[Discrete<'_>], class: Discrete<'_>) -> Self {
        let mut columns: Vec<Discrete<'_>> = features.to_vec();
        columns.push(class);
        let size = columns.len();
        let mut values = vec![0.0; size * size];
        for i in 0..size {
            values[i * size + i] = entropy(columns[i]);
            for j in i + 1..size {
                let mi = mutual_information(columns[i], columns[j]);
                values[i * size + j] = mi;
                values[j * size + i] = mi;
            }
        }
        Self { size, values }
    }

    /// A matrix given by its values: `entropies[i]` of feature i, `relevance[i]` = I(class; i), and
    /// `pairs` (i, j, I(i; j)) for i ≠ j (absent pairs are 0). The class's entropy is not used by
    /// fragmentation and is set to 0.
    pub fn from_values(
        entropies: &[f64],
        relevance: &[f64],
        pairs: &[(usize, usize, f64)],
    ) -> Self {
        assert_eq!(
            entropies.len(),
            relevance.len(),
            "one relevance per feature"
        );
        let n = entropies.len();
        let size = n + 1;
        let mut values = vec![0.0; size * size];
        for i in 0..n {
            values[i * size + i] = entropies[i];
            values[i * size + n] = relevance[i];
            values[n * size + i] = relevance[i];
        }
        for &(i, j, mi) in pairs {
            values[i * size + j] = mi;
            values[j * size + i] = mi;
        }
        Self { size, values }
    }

    /// Number of features (the class excluded).
    pub fn features(&self) -> usize {
        self.size - 1
    }

    /// I(i; j) for features or the class ([`MiMatrix::class`]); H(i) when i = j.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.values[i * self.size + j]
    }

    /// The class's index.
    pub fn class(&self) -> usize {
        self.size - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(codes: &[u32]) -> Discrete<'_> {
        Discrete {
            codes,
            cardinality: codes.iter().copied().max().map_or(0, |m| m as usize + 1),
        }
    }

    #[test]
    fn mi_of_a_column_with_itself_is_its_entropy_and_mi_is_symmetric() {
        let x = [0, 1, 1, 2, 2, 2, 0, 1];
        let y = [1, 1, 0, 0, 1, 0, 1, 1];
        let h = entropy(d(&x));
        assert!((mutual_information(d(&x), d(&x)) - h).abs() < 1e-12);
        assert!(
            (mutual_information(d(&x), d(&y)) - mutual_information(d(&y), d(&x))).abs() < 1e-12
        );
        // two equally likely values: ln 2
        assert!((entropy(d(&[0, 1, 0, 1])) - std::f64::consts::LN_2).abs() < 1e-12);
    }

    #[test]
    fn independent_columns_share_nothing() {
        // the product table of {0,1} × {0,1,2}: exactly independent
        let mut x = Vec::new();
        let mut y = Vec::new();
        for a in 0..2u32 {
            for b in 0..3u32 {
                x.push(a);
                y.push(b);
            }
        }
        assert!(mutual_information(d(&x), d(&y)).abs() < 1e-12);
        // a function of x shares all of x's entropy
        let f: Vec<u32> = x.iter().map(|&a| 1 - a).collect();
        assert!((mutual_information(d(&x), d(&f)) - entropy(d(&x))).abs() < 1e-12);
    }

    #[test]
    fn equal_frequency_bins_balance_records_and_keep_ties_together() {
        let numbers: Vec<f64> = (0..100).map(f64::from).collect();
        let (codes, used) = equal_frequency_bins(&numbers, 10);
        assert_eq!(used, 10);
        for bin in 0..10u32 {
            assert_eq!(codes.iter().filter(|&&c| c == bin).count(), 10);
        }
        // ordered: a larger number never gets a smaller bin
        assert!(codes.windows(2).all(|w| w[0] <= w[1]));
        let ties = [5.0, 5.0, 5.0, 5.0, 1.0, 9.0];
        let (codes, used) = equal_frequency_bins(&ties, 3);
        assert_eq!(codes[0], codes[3]);
        assert!(used <= 3);
        let (codes, used) = equal_frequency_bins(&[2.0; 7], 10);
        assert_eq!((codes, used), (vec![0; 7], 1));
    }

    #[test]
    fn the_matrix_holds_entropies_and_relevance() {
        let a = [0, 0, 1, 1];
        let b = [0, 1, 0, 1];
        let class = [0, 0, 1, 1];
        let m = MiMatrix::new(&[d(&a), d(&b)], d(&class));
        assert_eq!(m.features(), 2);
        assert!((m.get(0, 0) - std::f64::consts::LN_2).abs() < 1e-12);
        assert!((m.get(0, m.class()) - std::f64::consts::LN_2).abs() < 1e-12);
        assert!(m.get(1, m.class()).abs() < 1e-12);
        assert_eq!(m.get(0, 1), m.get(1, 0));
    }
}
