//! Characters masked from one end (ARX's redaction-based hierarchy builder), for codes such as ZIP
//! codes, ICD-10 codes or phone numbers: level `i` replaces the last (or first) `i` characters with the
//! mask character. Values of unequal length are first padded on the left to the longest with `pad` when
//! one is given (ZIP codes that lost a leading zero); otherwise each is masked as it is.

use serde::Deserialize;

use super::{BuildError, MAX_LEVELS};

/// Which end characters are masked from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaskSide {
    /// The last characters first (`1234*`).
    #[default]
    Right,
    /// The first characters first (`*2345`).
    Left,
}

/// The `mask` builder's parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaskBuilder {
    /// The end masked first; `right` when absent.
    #[serde(default)]
    pub from: MaskSide,
    /// The mask character; `*` when absent.
    pub character: Option<char>,
    /// Pads shorter values on the left with this character before masking.
    pub pad: Option<char>,
    /// Masking levels below the top; the longest value's length minus one when absent.
    pub levels: Option<u32>,
    /// Values that stand for a missing value (`[""]` when absent).
    pub missing: Option<Vec<String>>,
}

impl MaskBuilder {
    /// Rows without the top.
    pub(super) fn rows(&self, values: &[&str]) -> Result<Vec<Vec<String>>, BuildError> {
        let mask = self.character.unwrap_or('*');
        let longest = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
        let levels = match self.levels {
            Some(n) => n as usize,
            None => longest.saturating_sub(1),
        };
        if levels + 1 > MAX_LEVELS {
            return Err(BuildError::Invalid(format!(
                "a built hierarchy has at most {MAX_LEVELS} levels"
            )));
        }
        Ok(values
            .iter()
            .map(|&value| {
                let mut chars: Vec<char> = value.chars().collect();
                if let Some(pad) = self.pad {
                    let missing = longest - chars.len();
                    chars.splice(0..0, std::iter::repeat_n(pad, missing));
                }
                let mut row = vec![value.to_string()];
                for level in 1..=levels {
                    let masked = level.min(chars.len());
                    let label: String = match self.from {
                        MaskSide::Right => chars[..chars.len() - masked]
                            .iter()
                            .copied()
                            .chain(std::iter::repeat_n(mask, masked))
                            .collect(),
                        MaskSide::Left => std::iter::repeat_n(mask, masked)
                            .chain(chars[masked..].iter().copied())
                            .collect(),
                    };
                    row.push(label);
                }
                row
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec;

    #[test]
    fn masks_from_either_end_with_padding() {
        let rows = spec(r#"{"type": "mask"}"#)
            .build(&["13053", "130"])
            .unwrap();
        assert_eq!(rows[0], ["13053", "1305*", "130**", "13***", "1****", "*"]);
        assert_eq!(rows[1], ["130", "13*", "1**", "***", "***", "*"]);
        let rows = spec(r#"{"type": "mask", "pad": "0", "levels": 2}"#)
            .build(&["2345", "12345"])
            .unwrap();
        assert_eq!(rows[0], ["2345", "0234*", "023**", "*"]);
        let rows = spec(r#"{"type": "mask", "from": "left", "character": "x", "levels": 2}"#)
            .build(&["C34.1"])
            .unwrap();
        assert_eq!(rows[0], ["C34.1", "x34.1", "xx4.1", "*"]);
    }
}
