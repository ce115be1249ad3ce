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

/// The running SHA-256 and size of the bytes read from a file.
type DigestState = Arc<Mutex<(Sha256, u64)>>;

/// The file at `path` as UTF-8: decoded from `format`'s encoding, or as it is without one; its own bytes
/// (before decoding) are hashed into `digest` when one is given. `what` names the file in errors.
fn open(
    path: &Path,
    format: &InputFormat,
    what: &str,
    digest: Option<&DigestState>,
) -> Result<Box<dyn Read + Send>, String> {
    let file = File::open(path)
        .map_err(|e| format!("cannot read {what} {}: {}", path.display(), e.kind()))?;
    let file: Box<dyn Read + Send> = match digest {
        Some(state) => Box::new(Hashing {
            inner: file,
            state: Arc::clone(state),
        }),
        None => Box::new(file),
    };
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

/// Hashes the bytes that pass through it.
struct Hashing<R> {
    inner: R,
    state: DigestState,
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

/// Reads the input table and the options it was read with (`max_field_bytes` per field); with
/// `digested`, also the size and SHA-256 of exactly the bytes the table was read from.
pub fn read_input(
    path: &Path,
    format: &InputFormat,
    max_field_bytes: usize,
    digested: bool,
) -> Result<(Table, CsvOptions, Option<FileDigest>), String> {
    let state: Option<DigestState> = digested.then(|| Arc::new(Mutex::new((Sha256::new(), 0))));
    let (table, options) = read_table_sniffing(
        open(path, format, "input", state.as_ref())?,
        format.delimiter,
        max_field_bytes,
    )
    .map_err(|e| format!("input {}: {e} [{}]", path.display(), e.code()))?;
    let digest = match state {
        None => None,
        Some(state) => {
            let (hasher, byte_size) = std::mem::take(
                &mut *state
                    .lock()
                    .map_err(|_| "the input's checksum was lost".to_string())?,
            );
            Some(FileDigest {
                byte_size,
                sha256: crate::core::hex::hex(&hasher.finalize()),
            })
        }
    };
    Ok((table, options, digest))
}

/// Reads another table of the same format with the options the input was read with.
pub fn read_like_input(
    path: &Path,
    format: &InputFormat,
    options: &CsvOptions,
    what: &str,
) -> Result<Table, String> {
    read_table(open(path, format, what, None)?, options)
        .map_err(|e| format!("{what} {}: {e} [{}]", path.display(), e.code()))
}
