//! Numeric intervals (ARX's interval-based hierarchy builder): level 1 cuts the number line into
//! intervals of `width` from `start`; each further level joins `fanouts[i]` neighbouring intervals of the
//! level below. Values below `bottom_coding` or at or above `top_coding` are coded as `<x` and `>=x` at
//! every level (outliers that would otherwise stay unique). When `start`, `width` and every value are
//! integers, intervals are closed integer ranges, `[0 .. 4]`; otherwise half-open decimal ranges,
//! `[0.5 .. 1.5[`.

use serde::Deserialize;

use super::{check_fanouts, range_label, BuildError};

/// The `interval` builder's parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntervalBuilder {
    /// Where the first interval starts; the smallest value rounded down to a multiple of `width` when
    /// absent.
    pub start: Option<f64>,
    /// Width of the intervals of level 1 (positive).
    pub width: f64,
    /// How many intervals of the level below each further level joins (each at least 2).
    #[serde(default)]
    pub fanouts: Vec<u32>,
    /// Values below this are one group, `<x`, at every level.
    pub bottom_coding: Option<f64>,
    /// Values at or above this are one group, `>=x`, at every level.
    pub top_coding: Option<f64>,
    /// Values that stand for a missing value (`[""]` when absent).
    pub missing: Option<Vec<String>>,
}

/// Intervals the first level of an automatic interval builder aims at.
pub const AUTOMATIC_INTERVALS: f64 = 16.0;

impl IntervalBuilder {
    /// The builder chosen for `numbers` when none is given: about [`AUTOMATIC_INTERVALS`] intervals of
    /// a round width (1, 2, 2.5 or 5 times a power of ten; at least 1 for `integer` values) over their
    /// range, joined in pairs until at most two groups are left. `None` when the numbers span no range.
    pub fn automatic(numbers: &[f64], integer: bool) -> Option<Self> {
        let min = numbers.iter().copied().reduce(f64::min)?;
        let max = numbers.iter().copied().reduce(f64::max)?;
        if max <= min || !(max - min).is_finite() {
            return None;
        }
        let mut width = round_width((max - min) / AUTOMATIC_INTERVALS);
        if integer {
            width = width.max(1.0);
        }
        let start = (min / width).floor() * width;
        let mut groups = ((max - start) / width).floor() + 1.0;
        let mut fanouts = Vec::new();
        while groups > 2.0 && fanouts.len() < 6 {
            fanouts.push(2);
            groups = (groups / 2.0).ceil();
        }
        Some(Self {
            start: None,
            width,
            fanouts,
            bottom_coding: None,
            top_coding: None,
            missing: Some(Vec::new()),
        })
    }

    /// Rows without the top.
    pub(super) fn rows(&self, values: &[&str]) -> Result<Vec<Vec<String>>, BuildError> {
        if !(self.width.is_finite() && self.width > 0.0) {
            return Err(BuildError::Invalid(
                "the interval width is a positive number".into(),
            ));
        }
        check_fanouts(&self.fanouts)?;
        for bound in [self.start, self.bottom_coding, self.top_coding]
            .into_iter()
            .flatten()
        {
            if !bound.is_finite() {
                return Err(BuildError::Invalid(
                    "start and coding bounds are finite numbers".into(),
                ));
            }
        }
        if let (Some(b), Some(t)) = (self.bottom_coding, self.top_coding) {
            if b >= t {
                return Err(BuildError::Invalid(
                    "bottom_coding is below top_coding".into(),
                ));
            }
        }
        let numbers: Vec<Option<f64>> = values
            .iter()
            .map(|v| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
            .collect();
        let unparsed = numbers.iter().filter(|n| n.is_none()).count();
        if unparsed > 0 {
            return Err(BuildError::Uncovered {
                count: unparsed,
                why: "are not numbers",
            });
        }
        let numbers: Vec<f64> = numbers.into_iter().flatten().collect();
        let smallest = numbers.iter().copied().fold(f64::INFINITY, f64::min);
        let start = self.start.unwrap_or_else(|| {
            if smallest.is_finite() {
                (smallest / self.width).floor() * self.width
            } else {
                0.0
            }
        });
        let integral = start.fract() == 0.0
            && self.width.fract() == 0.0
            && numbers.iter().all(|x| x.fract() == 0.0);
        let levels = 1 + self.fanouts.len();
        Ok(values
            .iter()
            .zip(&numbers)
            .map(|(&value, &x)| {
                let mut row = Vec::with_capacity(levels + 2);
                row.push(value.to_string());
                if let Some(bottom) = self.bottom_coding.filter(|&b| x < b) {
                    row.extend((0..levels).map(|_| format!("<{}", number(bottom))));
                    return row;
                }
                if let Some(top) = self.top_coding.filter(|&t| x >= t) {
                    row.extend((0..levels).map(|_| format!(">={}", number(top))));
                    return row;
                }
                // the level-1 interval, then its ancestors by integer division (no drift)
                let first = ((x - start) / self.width).floor() as i64;
                let mut span = 1i64;
                for level in 0..levels {
                    if level > 0 {
                        span = span.saturating_mul(i64::from(self.fanouts[level - 1]));
                    }
                    let index = first.div_euclid(span);
                    let width = self.width * span as f64;
                    let low = start + index as f64 * width;
                    row.push(if integral {
                        range_label(&number(low), &number(low + width - 1.0))
                    } else {
                        format!("[{} .. {}[", number(low), number(low + width))
                    });
                }
                row
            })
            .collect())
    }
}

/// A number as a label: integers without a fraction, others with at most ten decimals.
fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        let text = format!("{x:.10}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The smallest of 1, 2, 2.5 and 5 times a power of ten that is at least `x` (> 0).
fn round_width(x: f64) -> f64 {
    let power = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&w| w >= x * (1.0 - 1e-9))
        .unwrap_or(10.0 * power)
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec;
    use super::*;

    #[test]
    fn integer_intervals_join_by_fanouts() {
        let rows = spec(r#"{"type": "interval", "start": 0, "width": 5, "fanouts": [2, 2]}"#)
            .build(&["0", "4", "5", "19", "20", "-1"])
            .unwrap();
        let labels: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            labels,
            [
                ["0", "[0 .. 4]", "[0 .. 9]", "[0 .. 19]", "*"],
                ["4", "[0 .. 4]", "[0 .. 9]", "[0 .. 19]", "*"],
                ["5", "[5 .. 9]", "[0 .. 9]", "[0 .. 19]", "*"],
                ["19", "[15 .. 19]", "[10 .. 19]", "[0 .. 19]", "*"],
                ["20", "[20 .. 24]", "[20 .. 29]", "[20 .. 39]", "*"],
                ["-1", "[-5 .. -1]", "[-10 .. -1]", "[-20 .. -1]", "*"],
            ]
        );
    }

    #[test]
    fn decimals_coding_and_default_start() {
        let rows =
            spec(r#"{"type": "interval", "width": 0.5, "bottom_coding": 1, "top_coding": 2.5}"#)
                .build(&["1.2", "0.3", "2.5", "1.75"])
                .unwrap();
        assert_eq!(rows[0], ["1.2", "[1 .. 1.5[", "*"]);
        assert_eq!(rows[1], ["0.3", "<1", "*"]);
        assert_eq!(rows[2], ["2.5", ">=2.5", "*"]);
        assert_eq!(rows[3], ["1.75", "[1.5 .. 2[", "*"]);
        // no start: the smallest value rounded down to the width
        let rows = spec(r#"{"type": "interval", "width": 10}"#)
            .build(&["23", "47"])
            .unwrap();
        assert_eq!(rows[0], ["23", "[20 .. 29]", "*"]);
        assert_eq!(number(0.1 + 0.2), "0.3");
    }

    #[test]
    fn bad_parameters_are_refused() {
        for json in [
            r#"{"type": "interval", "width": -1}"#,
            r#"{"type": "interval", "width": 5, "fanouts": [1]}"#,
            r#"{"type": "interval", "width": 5, "bottom_coding": 9, "top_coding": 3}"#,
        ] {
            let e = spec(json).build(&["1"]).unwrap_err();
            assert!(matches!(e, BuildError::Invalid(_)), "{json}: {e}");
        }
    }

    #[test]
    fn automatic_intervals_have_round_widths() {
        assert_eq!(round_width(4.56), 5.0);
        assert_eq!(round_width(0.31), 0.5);
        assert_eq!(round_width(120.0), 200.0);
        assert_eq!(round_width(2.0), 2.0);
        let ages: Vec<f64> = (17..=90).map(f64::from).collect();
        let b = IntervalBuilder::automatic(&ages, true).unwrap();
        assert_eq!((b.width, b.fanouts.clone()), (5.0, vec![2, 2, 2]));
        assert!(IntervalBuilder::automatic(&[3.0, 3.0], true).is_none());
        assert!(IntervalBuilder::automatic(&[], false).is_none());
        let tiny = IntervalBuilder::automatic(&[0.0, 1.0], true).unwrap();
        assert_eq!(tiny.width, 1.0);
    }
}
