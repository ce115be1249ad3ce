//! Operators for direct identifiers (a record number, a name, a phone number): instead of dropping such a
//! column, a release may publish
//! - a **pseudonym**: HMAC-SHA-256 (RFC 2104 over FIPS 180-4) of the value under a secret key, truncated
//!   to 128 bits and written as 32 lowercase hex characters. The same value and key always give the same
//!   token, so records link across the releases made with one key (for whoever holds two of them);
//!   without the key a token reveals nothing about the value (a keyed hash, unlike a plain one, cannot
//!   be reversed by hashing every candidate value);
//! - a **mask**: the first or last `keep` characters kept and every other character replaced by a fill
//!   character (the length is kept). A value no longer than `keep` is masked whole, so no value is ever
//!   shown in full;
//! - a **constant** in every cell.
//!
//! Operators work per distinct value of the column's dictionary, so a column of n records with d distinct
//! values costs d operations, and the texts are packed in one buffer. Empty cells (a missing identifier)
//! stay empty under a pseudonym or a mask.

use hmac::{Hmac, Mac};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::core::data::Dictionary;
use crate::core::hex::{hex, push_hex};

/// Fewest bytes of a pseudonym key.
pub const MIN_KEY_BYTES: usize = 32;

/// Bytes of the HMAC kept in a pseudonym (written as twice as many hex characters).
pub const TOKEN_BYTES: usize = 16;

/// Most characters a mask may keep.
pub const MAX_MASK_KEEP: usize = 64;

/// A secret pseudonym key. Its `Debug` output never shows the key.
#[derive(Clone)]
pub struct PseudonymKey(Box<[u8]>);

impl std::fmt::Debug for PseudonymKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PseudonymKey(fingerprint {})", self.fingerprint())
    }
}

/// Why a key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// Fewer than [`MIN_KEY_BYTES`] bytes.
    #[error("a pseudonym key needs at least {MIN_KEY_BYTES} bytes; it has {0}")]
    TooShort(usize),
}

impl PseudonymKey {
    /// A key of the given secret bytes (at least [`MIN_KEY_BYTES`]).
    pub fn new(secret: &[u8]) -> Result<Self, KeyError> {
        if secret.len() < MIN_KEY_BYTES {
            return Err(KeyError::TooShort(secret.len()));
        }
        Ok(Self(secret.into()))
    }

    /// The secret bytes (to store the key; never to show it).
    pub fn secret(&self) -> &[u8] {
        &self.0
    }

    /// A public name of the key: the first 8 bytes of SHA-256 over a fixed label and the key, as 16 hex
    /// characters. Two releases whose reports show the same fingerprint used the same key (their
    /// pseudonyms link); the fingerprint reveals nothing usable about the key.
    pub fn fingerprint(&self) -> String {
        let mut hash = Sha256::new();
        hash.update(b"anonymizer pseudonym key fingerprint\0");
        hash.update(&self.0);
        hex(&hash.finalize()[..8])
    }

    /// The pseudonym of `value`: 32 lowercase hex characters (empty for an empty value).
    pub fn pseudonym(&self, value: &str) -> String {
        let mut text = String::with_capacity(2 * TOKEN_BYTES);
        if let Some(mac) = self.mac() {
            push_pseudonym(&mac, value, &mut text);
        }
        text
    }

    /// The HMAC keyed once, to be cloned per value.
    fn mac(&self) -> Option<Hmac<Sha256>> {
        // HMAC takes keys of any length: this never fails
        Hmac::<Sha256>::new_from_slice(&self.0).ok()
    }
}

/// Appends the pseudonym of `value` under the keyed `mac` (nothing for an empty value).
fn push_pseudonym(mac: &Hmac<Sha256>, value: &str, text: &mut String) {
    if value.is_empty() {
        return;
    }
    let mut mac = mac.clone();
    mac.update(value.as_bytes());
    push_hex(&mac.finalize().into_bytes()[..TOKEN_BYTES], text);
}

/// Which end of a value a mask keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskEnd {
    /// The first characters.
    Start,
    /// The last characters.
    End,
}

/// What is published of an identifying column instead of its values.
#[derive(Debug, Clone)]
pub enum IdentifierOperator {
    /// Each value's pseudonym under the key.
    Pseudonym(PseudonymKey),
    /// `keep` characters at `end` kept, the others replaced by `fill`.
    Mask {
        /// Characters kept.
        keep: usize,
        /// Where they are kept.
        end: MaskEnd,
        /// The character written for each hidden one.
        fill: char,
    },
    /// The same text in every cell.
    Replace(String),
}

impl IdentifierOperator {
    /// The operator's name as the spec and the report write it.
    pub fn name(&self) -> &'static str {
        match self {
            IdentifierOperator::Pseudonym(_) => "pseudonym",
            IdentifierOperator::Mask { .. } => "mask",
            IdentifierOperator::Replace(_) => "replace",
        }
    }
}

/// The published text of every value of one identifying column, by the column's codes.
#[derive(Clone)]
pub enum OperatedTexts {
    /// One text for every cell.
    Constant(String),
    /// Texts of one width (pseudonyms): code `c`'s is `text[c·width..(c+1)·width]`, except the empty
    /// value's (`empty`), which is empty.
    Fixed {
        /// Every text.
        text: String,
        /// Bytes per text.
        width: usize,
        /// The code of the empty value, if the column has one.
        empty: Option<u32>,
    },
    /// One text per code, back to back in `text`; code `c` ends at `ends[c]`.
    Packed {
        /// Every text.
        text: String,
        /// The end of each code's text.
        ends: Vec<usize>,
    },
}

/// Shows the shape, never a text (they derive from the column's values).
impl std::fmt::Debug for OperatedTexts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OperatedTexts::Constant(_) => write!(f, "OperatedTexts::Constant"),
            OperatedTexts::Fixed { width, .. } => write!(f, "OperatedTexts::Fixed({width})"),
            OperatedTexts::Packed { ends, .. } => {
                write!(f, "OperatedTexts::Packed({})", ends.len())
            }
        }
    }
}

/// Values per block of the parallel pass.
const BLOCK: usize = 1 << 14;

impl OperatedTexts {
    /// Applies `operator` to every value of `values`, in blocks on the caller's rayon pool.
    pub fn new(values: &Dictionary, operator: &IdentifierOperator) -> Self {
        match operator {
            IdentifierOperator::Replace(constant) => OperatedTexts::Constant(constant.clone()),
            IdentifierOperator::Pseudonym(key) => pseudonyms(values, key).unwrap_or_else(|| {
                packed(values, |value, text| text.push_str(&key.pseudonym(value)))
            }),
            IdentifierOperator::Mask { keep, end, fill } => packed(values, |value, text| {
                push_masked(value, *keep, *end, *fill, text)
            }),
        }
    }

    /// The published text of code `code`.
    pub fn text(&self, code: u32) -> &str {
        match self {
            OperatedTexts::Constant(text) => text,
            OperatedTexts::Fixed { text, width, empty } => {
                if *empty == Some(code) {
                    ""
                } else {
                    let start = code as usize * width;
                    &text[start..start + width]
                }
            }
            OperatedTexts::Packed { text, ends } => {
                let code = code as usize;
                let start = if code == 0 { 0 } else { ends[code - 1] };
                &text[start..ends[code]]
            }
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        match self {
            OperatedTexts::Constant(text) | OperatedTexts::Fixed { text, .. } => text.capacity(),
            OperatedTexts::Packed { text, ends } => {
                text.capacity() + ends.capacity() * std::mem::size_of::<usize>()
            }
        }
    }
}

/// Every value's pseudonym written in place into one buffer of 32 bytes per code, in blocks on the
/// caller's rayon pool (`None` only if the key cannot be used, which HMAC never refuses).
fn pseudonyms(values: &Dictionary, key: &PseudonymKey) -> Option<OperatedTexts> {
    let mac = key.mac()?;
    let width = 2 * TOKEN_BYTES;
    let mut bytes = vec![b'0'; values.len() * width];
    bytes
        .par_chunks_mut(BLOCK * width)
        .enumerate()
        .for_each(|(block, chunk)| {
            let mut token = String::with_capacity(width);
            for (i, slot) in chunk.chunks_mut(width).enumerate() {
                token.clear();
                push_pseudonym(&mac, values.value((block * BLOCK + i) as u32), &mut token);
                if token.len() == width {
                    slot.copy_from_slice(token.as_bytes());
                }
            }
        });
    let text = String::from_utf8(bytes).ok()?;
    Some(OperatedTexts::Fixed {
        text,
        width,
        empty: values.code(""),
    })
}

/// Every value's text by `operate`, in blocks on the caller's rayon pool, packed in one buffer.
fn packed(values: &Dictionary, operate: impl Fn(&str, &mut String) + Sync) -> OperatedTexts {
    let starts: Vec<usize> = (0..values.len()).step_by(BLOCK).collect();
    let blocks: Vec<(String, Vec<usize>)> = starts
        .par_iter()
        .map(|&start| {
            let codes = start..(start + BLOCK).min(values.len());
            let mut text = String::with_capacity(codes.len() * 2 * TOKEN_BYTES);
            let mut ends = Vec::with_capacity(codes.len());
            for code in codes {
                operate(values.value(code as u32), &mut text);
                ends.push(text.len());
            }
            (text, ends)
        })
        .collect();
    let mut text = String::with_capacity(blocks.iter().map(|(t, _)| t.len()).sum());
    let mut ends = Vec::with_capacity(values.len());
    for (block, block_ends) in blocks {
        let offset = text.len();
        text.push_str(&block);
        ends.extend(block_ends.into_iter().map(|e| e + offset));
    }
    OperatedTexts::Packed { text, ends }
}

/// Appends `value` masked: `keep` characters at `end` kept, the rest written as `fill`; a value of at most
/// `keep` characters is masked whole, an empty one stays empty.
fn push_masked(value: &str, keep: usize, end: MaskEnd, fill: char, text: &mut String) {
    let length = value.chars().count();
    if length <= keep {
        text.extend(std::iter::repeat_n(fill, length));
        return;
    }
    let hidden = length - keep;
    match end {
        MaskEnd::Start => {
            text.extend(value.chars().take(keep));
            text.extend(std::iter::repeat_n(fill, hidden));
        }
        MaskEnd::End => {
            text.extend(std::iter::repeat_n(fill, hidden));
            text.extend(value.chars().skip(hidden));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> PseudonymKey {
        PseudonymKey::new(&[byte; 32]).unwrap()
    }

    fn dictionary(values: &[&str]) -> Dictionary {
        let mut d = Dictionary::new();
        for v in values {
            d.intern(v);
        }
        d
    }

    /// RFC 4231, test case 2 (key "Jefe"): the HMAC-SHA-256 of "what do ya want for nothing?" starts
    /// with 5bdcc146bf60754e6a042426089575c7. Keys shorter than 32 bytes are refused, so the test computes
    /// the same MAC through the crate and checks the truncation and hex writing on it.
    #[test]
    fn a_pseudonym_is_the_truncated_hmac_in_hex() {
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        let mut text = String::new();
        push_hex(&mac.finalize().into_bytes()[..TOKEN_BYTES], &mut text);
        assert_eq!(text, "5bdcc146bf60754e6a042426089575c7");
        // RFC 4231 test case 1 shape with a 32-byte key of 0x0b: the crate's MAC, truncated
        let k = PseudonymKey::new(&[0x0b; 32]).unwrap();
        let mut mac = Hmac::<Sha256>::new_from_slice(&[0x0b; 32]).unwrap();
        mac.update(b"Hi There");
        assert_eq!(
            k.pseudonym("Hi There"),
            hex(&mac.finalize().into_bytes()[..16])
        );
    }

    #[test]
    fn pseudonyms_are_stable_per_key_and_differ_across_keys() {
        let a = key(1);
        assert_eq!(a.pseudonym("MRN-0042"), a.pseudonym("MRN-0042"));
        assert_eq!(a.pseudonym("MRN-0042").len(), 32);
        assert!(a
            .pseudonym("MRN-0042")
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(a.pseudonym("MRN-0042"), a.pseudonym("MRN-0043"));
        assert_ne!(a.pseudonym("MRN-0042"), key(2).pseudonym("MRN-0042"));
        assert_eq!(a.pseudonym(""), "");
    }

    #[test]
    fn short_keys_are_refused_and_debug_hides_the_key() {
        assert_eq!(
            PseudonymKey::new(&[7; 31]).unwrap_err(),
            KeyError::TooShort(31)
        );
        let k = PseudonymKey::new(b"0123456789abcdef0123456789abcdef-secret").unwrap();
        let shown = format!("{k:?}");
        assert!(
            !shown.contains("secret") && !shown.contains("0123"),
            "{shown}"
        );
        assert!(shown.contains(&k.fingerprint()));
        assert_eq!(k.fingerprint().len(), 16);
        assert_ne!(k.fingerprint(), key(1).fingerprint());
    }

    #[test]
    fn masks_keep_one_end_and_never_show_a_short_value() {
        let mask = |v: &str, keep, end| {
            let mut t = String::new();
            push_masked(v, keep, end, '*', &mut t);
            t
        };
        assert_eq!(mask("555-867-5309", 4, MaskEnd::End), "********5309");
        assert_eq!(mask("555-867-5309", 3, MaskEnd::Start), "555*********");
        assert_eq!(mask("5309", 4, MaskEnd::End), "****");
        assert_eq!(mask("ab", 4, MaskEnd::Start), "**");
        assert_eq!(mask("", 4, MaskEnd::End), "");
        assert_eq!(mask("Zoë Ångström", 3, MaskEnd::End), "*********röm");
        assert_eq!(mask("abc", 0, MaskEnd::End), "***");
    }

    #[test]
    fn texts_follow_the_codes_across_blocks() {
        let values: Vec<String> = (0..BLOCK * 2 + 5).map(|i| format!("id-{i}")).collect();
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let d = dictionary(&refs);
        let k = key(9);
        let texts = OperatedTexts::new(&d, &IdentifierOperator::Pseudonym(k.clone()));
        for code in [0, 1, BLOCK - 1, BLOCK, 2 * BLOCK + 4] {
            assert_eq!(texts.text(code as u32), k.pseudonym(&values[code]));
        }
        let masked = OperatedTexts::new(
            &d,
            &IdentifierOperator::Mask {
                keep: 2,
                end: MaskEnd::End,
                fill: '#',
            },
        );
        assert_eq!(masked.text(BLOCK as u32 + 3), "######87");
        let constant = OperatedTexts::new(&d, &IdentifierOperator::Replace("REDACTED".into()));
        assert_eq!(constant.text(17), "REDACTED");
        // an empty value stays empty among fixed-width pseudonyms
        let with_empty = dictionary(&["a", "", "b"]);
        let texts = OperatedTexts::new(&with_empty, &IdentifierOperator::Pseudonym(k.clone()));
        assert!(matches!(texts, OperatedTexts::Fixed { .. }));
        assert_eq!(texts.text(0), k.pseudonym("a"));
        assert_eq!(texts.text(1), "");
        assert_eq!(texts.text(2), k.pseudonym("b"));
        assert!(!format!("{texts:?}").contains(&k.pseudonym("a")));
    }
}
