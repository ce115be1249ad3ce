//! The archive of a job with several published tables (the fragments of a fragmentation job): a POSIX
//! ustar archive written with the `tar` crate, entries `fragment-1.csv`, `fragment-2.csv`, … in order,
//! and a streaming reader that cuts one entry out of the archive's bytes as they arrive in chunks, so
//! the service serves one fragment without holding the archive in memory.

use std::io::{self, Read, Write};

/// Bytes of a tar block (headers and the padding of entry data).
const BLOCK: usize = 512;

/// The name of entry `index` (1-based) of a fragment archive.
pub fn fragment_entry_name(index: usize) -> String {
    format!("fragment-{index}.csv")
}

/// Writes the entries (`name`, reader of exactly `len` bytes) as a ustar archive to `output`. Entries
/// carry mode 0644 and modification time 0, so that equal contents give equal archives.
pub fn write_archive<W: Write, R: Read>(
    output: W,
    entries: impl IntoIterator<Item = (String, R, u64)>,
) -> io::Result<W> {
    let mut builder = tar::Builder::new(output);
    for (name, reader, len) in entries {
        let mut header = tar::Header::new_ustar();
        header.set_size(len);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, &name, reader)?;
    }
    builder.into_inner()
}

/// Cuts the data of one entry out of a ustar archive fed in pieces of any size.
#[derive(Debug)]
pub struct EntryCutter {
    wanted: String,
    /// Bytes of the current header not yet complete.
    header: Vec<u8>,
    /// What the bytes at the current position are.
    state: CutState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CutState {
    /// Reading a header block.
    Header,
    /// Inside an entry's data: `left` data bytes, then `padding` bytes; `keep` when it is the wanted one.
    Data { left: u64, padding: u64, keep: bool },
    /// The wanted entry was read whole, or the archive ended.
    Done,
}

impl EntryCutter {
    /// A cutter of the entry named `wanted`.
    pub fn new(wanted: impl Into<String>) -> Self {
        Self {
            wanted: wanted.into(),
            header: Vec::with_capacity(BLOCK),
            state: CutState::Header,
        }
    }

    /// Whether the wanted entry was read whole (or the archive ended without it).
    pub fn is_done(&self) -> bool {
        self.state == CutState::Done
    }

    /// Feeds the next piece of the archive; returns the wanted entry's bytes it holds. A malformed
    /// header is an error.
    pub fn feed(&mut self, mut piece: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        while !piece.is_empty() {
            match self.state {
                CutState::Done => break,
                CutState::Header => {
                    let take = (BLOCK - self.header.len()).min(piece.len());
                    self.header.extend_from_slice(&piece[..take]);
                    piece = &piece[take..];
                    if self.header.len() == BLOCK {
                        self.state = self.read_header()?;
                        self.header.clear();
                    }
                }
                CutState::Data {
                    left,
                    padding,
                    keep,
                } => {
                    let total = left + padding;
                    let take = (total.min(piece.len() as u64)) as usize;
                    let data = (left.min(take as u64)) as usize;
                    if keep {
                        out.extend_from_slice(&piece[..data]);
                    }
                    piece = &piece[take..];
                    let left = left - data as u64;
                    let padding = padding - (take - data) as u64;
                    self.state = if left == 0 && padding == 0 {
                        if keep {
                            CutState::Done
                        } else {
                            CutState::Header
                        }
                    } else {
                        CutState::Data {
                            left,
                            padding,
                            keep,
                        }
                    };
                }
            }
        }
        Ok(out)
    }

    /// The state after the complete header block in `self.header`.
    fn read_header(&self) -> io::Result<CutState> {
        if self.header.iter().all(|&b| b == 0) {
            return Ok(CutState::Done);
        }
        let mut block = [0u8; BLOCK];
        block.copy_from_slice(&self.header);
        let header = tar::Header::from_byte_slice(&block);
        let size = header.entry_size()?;
        let name = header.path_bytes();
        let keep = name.as_ref() == self.wanted.as_bytes();
        let padding = (BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64;
        if size == 0 && keep {
            return Ok(CutState::Done);
        }
        if size == 0 {
            return Ok(CutState::Header);
        }
        Ok(CutState::Data {
            left: size,
            padding,
            keep,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
        write_archive(
            Vec::new(),
            entries
                .iter()
                .map(|(n, b)| (n.to_string(), &b[..], b.len() as u64)),
        )
        .unwrap()
    }

    #[test]
    fn entries_read_back_with_the_tar_crate_and_the_cutter() {
        let first: Vec<u8> = (0..1300u32).map(|i| (i % 251) as u8).collect();
        let second = b"a;b\n1;2\n".to_vec();
        let empty = Vec::new();
        let bytes = archive(&[
            ("fragment-1.csv", first.clone()),
            ("fragment-2.csv", second.clone()),
            ("fragment-3.csv", empty.clone()),
        ]);
        // the tar crate lists them in order with their contents
        let mut read = tar::Archive::new(&bytes[..]);
        let listed: Vec<(String, Vec<u8>)> = read
            .entries()
            .unwrap()
            .map(|e| {
                let mut e = e.unwrap();
                let name = e.path().unwrap().to_string_lossy().into_owned();
                let mut data = Vec::new();
                e.read_to_end(&mut data).unwrap();
                (name, data)
            })
            .collect();
        assert_eq!(listed.len(), 3);
        assert_eq!(listed[0], ("fragment-1.csv".to_string(), first.clone()));
        // the cutter finds each entry whatever the piece size
        for (name, expected) in [
            ("fragment-1.csv", &first),
            ("fragment-2.csv", &second),
            ("fragment-3.csv", &empty),
        ] {
            for piece in [1usize, 7, 512, 513, 4096] {
                let mut cutter = EntryCutter::new(name);
                let mut got = Vec::new();
                for chunk in bytes.chunks(piece) {
                    got.extend(cutter.feed(chunk).unwrap());
                    if cutter.is_done() {
                        break;
                    }
                }
                assert!(cutter.is_done(), "{name} {piece}");
                assert_eq!(&got, expected, "{name} {piece}");
            }
        }
        // an entry the archive lacks yields nothing
        let mut cutter = EntryCutter::new("fragment-9.csv");
        assert!(cutter.feed(&bytes).unwrap().is_empty());
        assert!(cutter.is_done());
    }
}
