//! The input table of the commands that read a local CSV (`anonymize`, `assess`): decoded from the
//! spec's `csv.encoding`, with its `csv.delimiter` or, without one, the delimiter of its header line (as
//! uploads do).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::codec::encoding::DecodingReader;
use crate::codec::sniff::read_table_sniffing;
use crate::codec::{read_table, CsvOptions};
use crate::core::data::Table;
use crate::domain::resolve::InputFormat;

/// The file at `path` as UTF-8: decoded from `format`'s encoding, or as it is without one. `what`
/// names the file in errors.
fn open(path: &Path, format: &InputFormat, what: &str) -> Result<Box<dyn Read + Send>, String> {
    let file = File::open(path)
        .map_err(|e| format!("cannot read {what} {}: {}", path.display(), e.kind()))?;
    let file = BufReader::with_capacity(1 << 16, file);
    Ok(match format.encoding {
        Some(encoding) => Box::new(DecodingReader::new(file, encoding)),
        None => Box::new(file),
    })
}

/// Size and SHA-256 (lowercase hex) of the bytes of a file as they were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDigest {
    /// Bytes read.
    pub byte_size: u64,
    /// Their SHA-256.
    pub sha256: String,
}

/// Hashes the bytes that pass through it (the file's own bytes, before any decoding).
struct Hashing<R> {
    inner: R,
    state: Arc<Mutex<(Sha256, u64)>>,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buffer)?;
        if let Ok(mut state) = self.state.lock() {
            state.0.update(&buffer[..n]);
            state.1 += n as u64;
        }
        Ok(n)
    }
}

/// [`read_input`], and the size and SHA-256 of exactly the bytes the table was read from.
pub fn read_input_digested(
    path: &Path,
    format: &InputFormat,
    max_field_bytes: usize,
) -> Result<(Table, CsvOptions, FileDigest), String> {
    let file = File::open(path)
        .map_err(|e| format!("cannot read input {}: {}", path.display(), e.kind()))?;
    let state = Arc::new(Mutex::new((Sha256::new(), 0u64)));
    let hashing = BufReader::with_capacity(
        1 << 16,
        Hashing {
            inner: file,
            state: Arc::clone(&state),
        },
    );
    let reader: Box<dyn Read + Send> = match format.encoding {
        Some(encoding) => Box::new(DecodingReader::new(hashing, encoding)),
        None => Box::new(hashing),
    };
    let (table, options) = read_table_sniffing(reader, format.delimiter, max_field_bytes)
        .map_err(|e| format!("input {}: {e} [{}]", path.display(), e.code()))?;
    let (hasher, byte_size) = std::mem::take(
        &mut *state
            .lock()
            .map_err(|_| "the input's checksum was lost".to_string())?,
    );
    let digest = FileDigest {
        byte_size,
        sha256: crate::core::hex::hex(&hasher.finalize()),
    };
    Ok((table, options, digest))
}

/// Reads the input table and the options it was read with (`max_field_bytes` per field).
pub fn read_input(
    path: &Path,
    format: &InputFormat,
    max_field_bytes: usize,
) -> Result<(Table, CsvOptions), String> {
    read_table_sniffing(
        open(path, format, "input")?,
        format.delimiter,
        max_field_bytes,
    )
    .map_err(|e| format!("input {}: {e} [{}]", path.display(), e.code()))
}

/// Reads another table of the same format with the options the input was read with.
pub fn read_like_input(
    path: &Path,
    format: &InputFormat,
    options: &CsvOptions,
    what: &str,
) -> Result<Table, String> {
    read_table(open(path, format, what)?, options)
        .map_err(|e| format!("{what} {}: {e} [{}]", path.display(), e.code()))
}
