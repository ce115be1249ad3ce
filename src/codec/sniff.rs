//! Which delimiter a CSV file uses when nobody said: the header line's most frequent candidate among
//! `,`, `;`, tab and `|` outside quotes (`,` on a tie or when none occurs). And the check that catches a
//! wrong delimiter afterwards: a table read as one column whose name holds another candidate.

use std::io::{self, Read};

use super::{read_table, CodecError, CsvOptions};
use crate::core::data::Table;

/// The delimiters a file is sniffed for, in the order ties are broken.
pub const CANDIDATES: [u8; 4] = [b',', b';', b'\t', b'|'];

/// Most bytes read while looking for the end of the header line.
pub const HEAD_LIMIT: usize = 64 << 10;

/// The delimiter of a file whose first bytes are `head` (the header line, or its start).
pub fn sniff_delimiter(head: &[u8]) -> u8 {
    let line = head.split(|&b| b == b'\n').next().unwrap_or(head);
    let mut counts = [0usize; CANDIDATES.len()];
    let mut quoted = false;
    for &byte in line {
        if byte == b'"' {
            quoted = !quoted;
        } else if !quoted {
            if let Some(i) = CANDIDATES.iter().position(|&c| c == byte) {
                counts[i] += 1;
            }
        }
    }
    let mut best = 0;
    for i in 1..CANDIDATES.len() {
        if counts[i] > counts[best] {
            best = i;
        }
    }
    CANDIDATES[best]
}

/// Reads from `reader` until the first line break or [`HEAD_LIMIT`] bytes; the bytes read (to be read
/// again before the rest).
pub fn read_head<R: Read>(reader: &mut R) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 4096];
    while head.len() < HEAD_LIMIT && !head.contains(&b'\n') {
        let n = reader.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    Ok(head)
}

/// Reads a table with `options`, or, without them, with the delimiter sniffed from its header line
/// (and `max_field_bytes` either way); returns the options the table was read with.
pub fn read_table_sniffing<R: Read + Send>(
    mut input: R,
    options: Option<CsvOptions>,
    max_field_bytes: usize,
) -> Result<(Table, CsvOptions), CodecError> {
    let head = read_head(&mut input).map_err(|e| CodecError::Malformed {
        line: 1,
        problem: format!("the header could not be read: {}", e.kind()),
    })?;
    let options = options
        .unwrap_or_else(|| CsvOptions {
            delimiter: sniff_delimiter(&head),
            ..CsvOptions::default()
        })
        .with_max_field_bytes(max_field_bytes);
    let table = read_table(io::Cursor::new(head).chain(input), &options)?;
    Ok((table, options))
}

/// Another candidate delimiter than `delimiter` that the name of a table's only column holds: the
/// table was then probably read with the wrong delimiter.
pub fn other_delimiter_in(single_column_name: &str, delimiter: u8) -> Option<u8> {
    CANDIDATES
        .iter()
        .copied()
        .filter(|&c| c != delimiter)
        .find(|&c| single_column_name.as_bytes().contains(&c))
}

/// How a delimiter is written in a query or spec (`\t` for tab).
pub fn delimiter_text(delimiter: u8) -> String {
    if delimiter == b'\t' {
        "\\t".into()
    } else {
        char::from(delimiter).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_decides() {
        assert_eq!(sniff_delimiter(b"a;b;c\n1,5;2;3\n"), b';');
        assert_eq!(sniff_delimiter(b"a,b,c"), b',');
        assert_eq!(sniff_delimiter(b"a\tb\n"), b'\t');
        assert_eq!(sniff_delimiter(b"a|b|c\n"), b'|');
        // quoted names do not count; nothing at all is a comma
        assert_eq!(sniff_delimiter(b"\"a;b\",c\n"), b',');
        assert_eq!(sniff_delimiter(b"single\n"), b',');
        // a tie keeps the earlier candidate
        assert_eq!(sniff_delimiter(b"a;b,c\n"), b',');
    }

    #[test]
    fn the_head_stops_at_the_first_line() {
        let text = b"a;b\n1;2\n3;4\n";
        let mut reader = &text[..];
        let head = read_head(&mut reader).unwrap();
        assert!(head.starts_with(b"a;b\n"));
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).unwrap();
        assert_eq!([head, rest].concat(), text);
        assert_eq!(other_delimiter_in("a;b;c", b','), Some(b';'));
        assert_eq!(other_delimiter_in("name", b','), None);
        assert_eq!(delimiter_text(b'\t'), "\\t");
    }

    #[test]
    fn tables_are_read_with_the_sniffed_delimiter_or_refused() {
        let (table, options) = read_table_sniffing(&b"a;b\n1;2\n"[..], None, 1024).unwrap();
        assert_eq!((table.columns().len(), options.delimiter), (2, b';'));
        // told the wrong delimiter: one column named with another one
        let wrong = CsvOptions::with_delimiter(",").ok();
        let e = read_table_sniffing(&b"a;b\n1;2\n"[..], wrong, 1024).unwrap_err();
        assert_eq!(e.code(), crate::error_code::ErrorCode::DelimiterMismatch);
        assert!(e.to_string().contains("give the delimiter ';'"), "{e}");
    }
}
