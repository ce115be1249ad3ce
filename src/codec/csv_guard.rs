//! A byte-level check in front of the CSV parser. It follows the quoting of the bytes as they stream
//! through (the same rules the `csv` crate applies: a quote opens a field only at its start, a doubled
//! quote inside a quoted field is one quote) and stops the input with a [`CodecError`] where the parser
//! would silently lose or invent records, or hold too much in memory:
//!
//! - a quoted field still open at the end of the input (the parser would end it there and swallow
//!   every record after its opening quote): [`CodecError::UnterminatedQuote`], naming the line where
//!   the quote opened;
//! - text after the closing quote of a field (RFC 4180 forbids it; it is how a quote left open further
//!   up shows when a later quote closes it): [`CodecError::TextAfterQuote`];
//! - a carriage return outside quotes that is not followed by a line feed (the parser would start a
//!   record there): [`CodecError::StrayCarriageReturn`];
//! - a NUL byte anywhere (binary or UTF-16 input; no store's text type holds it):
//!   [`CodecError::InvalidCharacters`];
//! - a field longer than the limit, found before the parser has buffered more than the limit and one
//!   read: [`CodecError::FieldTooLong`].
//!
//! Leniencies that keep every record: a quote inside an unquoted field (`5'10"`) is a literal
//! character, as in the parser; lines may end in LF or CRLF, mixed. Lines are counted by line feeds,
//! like the parser's record positions, so both name the same lines.

use std::io::{self, Read};

use super::CodecError;

/// Where the guard is within a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first byte of a field.
    FieldStart,
    /// Inside a field that did not start with a quote.
    Unquoted,
    /// Inside a quoted field.
    Quoted,
    /// Just after a quote inside a quoted field: it closes the field or, doubled, is a literal quote.
    QuoteInQuoted,
}

/// A [`Read`] adapter that passes bytes through unchanged and fails with an [`io::Error`] wrapping a
/// [`CodecError`] (see [`codec_error`]) at the first violation.
pub struct CsvGuard<R> {
    inner: R,
    delimiter: u8,
    max_field_bytes: usize,
    state: State,
    /// 1-based line of the byte being looked at.
    line: u64,
    /// 1-based position of the current field in its record.
    column: usize,
    /// Bytes of the current field's value so far.
    field_bytes: usize,
    /// Line where the current field started.
    field_line: u64,
    /// The previous byte was a carriage return outside quotes.
    pending_cr: bool,
    /// A violation was reported; every later read fails too.
    failed: bool,
}

/// The bytes that end a run outside quotes: a quote (it may open a field), CR, LF, NUL.
const UNQUOTED_SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    table[b'"' as usize] = true;
    table[b'\r' as usize] = true;
    table[b'\n' as usize] = true;
    table[0] = true;
    table
};

/// The bytes that end a run inside a quoted field: a quote, LF (counted), NUL.
const QUOTED_SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    table[b'"' as usize] = true;
    table[b'\n' as usize] = true;
    table[0] = true;
    table
};

impl<R: Read> CsvGuard<R> {
    /// Guards `inner`, read with `delimiter`, allowing fields of up to `max_field_bytes` bytes.
    pub fn new(inner: R, delimiter: u8, max_field_bytes: usize) -> Self {
        CsvGuard {
            inner,
            delimiter,
            max_field_bytes,
            state: State::FieldStart,
            line: 1,
            column: 1,
            field_bytes: 0,
            field_line: 1,
            pending_cr: false,
            failed: false,
        }
    }

    /// Follows `bytes`; the first violation, if any. The state machine sees only the bytes that can
    /// change its state: runs outside quotes are skipped up to the next quote, line break or NUL (their
    /// delimiters counted), runs inside quotes up to the next quote, line feed or NUL.
    fn scan(&mut self, bytes: &[u8]) -> Result<(), CodecError> {
        let mut i = 0;
        while i < bytes.len() {
            let special = match self.state {
                State::FieldStart | State::Unquoted if !self.pending_cr => &UNQUOTED_SPECIAL,
                State::Quoted => &QUOTED_SPECIAL,
                _ => {
                    self.step(bytes[i])?;
                    i += 1;
                    continue;
                }
            };
            let rest = &bytes[i..];
            let run = rest
                .iter()
                .position(|&b| special[usize::from(b)])
                .unwrap_or(rest.len());
            if self.state == State::Quoted {
                self.grow_field(run)?;
            } else {
                self.skip_unquoted(&rest[..run])?;
            }
            i += run;
            if i < bytes.len() {
                self.step(bytes[i])?;
                i += 1;
            }
        }
        Ok(())
    }

    /// Follows a run outside quotes without quotes, line breaks or NUL: its delimiters start fields.
    fn skip_unquoted(&mut self, run: &[u8]) -> Result<(), CodecError> {
        if run.len() > self.max_field_bytes.saturating_sub(self.field_bytes) {
            // a field in the run may reach the limit: let the state machine find which
            for &b in run {
                self.step(b)?;
            }
            return Ok(());
        }
        if run.is_empty() {
            return Ok(());
        }
        let delimiter = self.delimiter;
        match run.iter().rposition(|&b| b == delimiter) {
            None => self.field_bytes += run.len(),
            Some(last) => {
                self.column += run.iter().filter(|&&b| b == delimiter).count();
                self.field_bytes = run.len() - last - 1;
            }
        }
        // an unquoted field never spans lines
        self.field_line = self.line;
        self.state = if self.field_bytes > 0 {
            State::Unquoted
        } else {
            State::FieldStart
        };
        Ok(())
    }

    /// One byte through the state machine.
    fn step(&mut self, b: u8) -> Result<(), CodecError> {
        if self.pending_cr {
            self.pending_cr = false;
            if b == b'\n' {
                self.line += 1;
                return Ok(());
            }
            return Err(CodecError::StrayCarriageReturn { line: self.line });
        }
        if b == 0 {
            return Err(CodecError::InvalidCharacters {
                line: self.line,
                column: self.column,
                what: "the field contains a NUL byte (binary or UTF-16 input?)",
            });
        }
        match self.state {
            State::FieldStart | State::Unquoted => {
                if b == self.delimiter {
                    self.next_field();
                } else if b == b'\n' {
                    self.line += 1;
                    self.next_record();
                } else if b == b'\r' {
                    self.pending_cr = true;
                    self.next_record();
                } else if b == b'"' && self.state == State::FieldStart {
                    self.state = State::Quoted;
                    self.field_line = self.line;
                } else {
                    if self.state == State::FieldStart {
                        self.state = State::Unquoted;
                        self.field_line = self.line;
                    }
                    self.grow_field(1)?;
                }
            }
            State::Quoted => {
                if b == b'"' {
                    self.state = State::QuoteInQuoted;
                } else {
                    self.line += u64::from(b == b'\n');
                    self.grow_field(1)?;
                }
            }
            State::QuoteInQuoted => {
                if b == b'"' {
                    self.state = State::Quoted;
                    self.grow_field(1)?;
                } else if b == self.delimiter {
                    self.next_field();
                } else if b == b'\n' {
                    self.line += 1;
                    self.next_record();
                } else if b == b'\r' {
                    self.pending_cr = true;
                    self.next_record();
                } else {
                    return Err(CodecError::TextAfterQuote {
                        opened: self.field_line,
                        line: self.line,
                    });
                }
            }
        }
        Ok(())
    }

    /// The end of the input: a quoted field must have been closed.
    fn finish(&self) -> Result<(), CodecError> {
        if self.state == State::Quoted {
            return Err(CodecError::UnterminatedQuote {
                line: self.field_line,
            });
        }
        Ok(())
    }

    fn grow_field(&mut self, bytes: usize) -> Result<(), CodecError> {
        self.field_bytes += bytes;
        if self.field_bytes > self.max_field_bytes {
            return Err(CodecError::FieldTooLong {
                line: self.field_line,
                column: self.column,
                limit: self.max_field_bytes,
            });
        }
        Ok(())
    }

    fn next_field(&mut self) {
        self.state = State::FieldStart;
        self.column += 1;
        self.field_bytes = 0;
    }

    fn next_record(&mut self) {
        self.state = State::FieldStart;
        self.column = 1;
        self.field_bytes = 0;
    }

    fn fail(&mut self, error: CodecError) -> io::Error {
        self.failed = true;
        io::Error::new(io::ErrorKind::InvalidData, error)
    }
}

impl<R: Read> Read for CsvGuard<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.failed {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the CSV input was already rejected",
            ));
        }
        let n = self.inner.read(buf)?;
        let checked = if n == 0 {
            self.finish()
        } else {
            self.scan(&buf[..n])
        };
        match checked {
            Ok(()) => Ok(n),
            Err(error) => Err(self.fail(error)),
        }
    }
}

/// The [`CodecError`] a [`CsvGuard`] stopped the input with, if `error` is one.
pub fn codec_error(error: io::Error) -> Result<CodecError, io::Error> {
    if error
        .get_ref()
        .is_some_and(|inner| inner.is::<CodecError>())
    {
        if let Some(inner) = error.into_inner() {
            if let Ok(codec) = inner.downcast::<CodecError>() {
                return Ok(*codec);
            }
        }
        return Err(io::Error::other("the CSV guard's error was lost"));
    }
    Err(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything `bytes` yields through a guard with `;` and a 16-byte limit, read `chunk` bytes at a
    /// time.
    fn check(bytes: &[u8], chunk: usize) -> Result<(), CodecError> {
        let mut guard = CsvGuard::new(bytes, b';', 16);
        let mut buf = vec![0; chunk];
        loop {
            match guard.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) => return Err(codec_error(e).unwrap()),
            }
        }
    }

    fn all_chunkings(bytes: &[u8]) -> Result<(), CodecError> {
        let whole = check(bytes, 8192);
        for chunk in 1..bytes.len().max(1) {
            let split = check(bytes, chunk);
            assert_eq!(
                format!("{split:?}"),
                format!("{whole:?}"),
                "chunk size {chunk}"
            );
        }
        whole
    }

    #[test]
    fn well_formed_input_passes() {
        for ok in [
            &b"a;b\n1;2\n"[..],
            b"a;b\r\n\"x;\"\"y\"\"\";2\r\n",
            b"a;b\n\"multi\r\nline\";2",
            b"a;b\n5'10\";x\"y\n",
            b"a;b\r\n1;2\n3;4\r\n",
            b"a;b\n1;2\r",
            b"a;\"\"\n\"\";\"\"\n",
            b"",
        ] {
            assert!(
                all_chunkings(ok).is_ok(),
                "{:?}",
                String::from_utf8_lossy(ok)
            );
        }
    }

    #[test]
    fn violations_name_their_lines() {
        assert!(matches!(
            all_chunkings(b"a;b\nx;\"abc\nx;2\n"),
            Err(CodecError::UnterminatedQuote { line: 2 })
        ));
        assert!(matches!(
            all_chunkings(b"a;b\nx;\"abc\nx;2\ny;\"z\"\n"),
            Err(CodecError::TextAfterQuote { opened: 2, line: 4 })
        ));
        assert!(matches!(
            all_chunkings(b"a;b\n1;2\n3;4\r5;6\n"),
            Err(CodecError::StrayCarriageReturn { line: 3 })
        ));
        assert!(matches!(
            all_chunkings(b"a;b\n1;2\n3;\"4\0\"\n"),
            Err(CodecError::InvalidCharacters {
                line: 3,
                column: 2,
                ..
            })
        ));
        assert!(matches!(
            all_chunkings(b"a;b\n1;2\n3;\"0123456789\n123456\"\n"),
            Err(CodecError::FieldTooLong {
                line: 3,
                column: 2,
                limit: 16
            })
        ));
        // a doubled quote counts once, the enclosing quotes not at all
        assert!(all_chunkings(b"a\n\"0123456789abcd\"\n\"\"\"123456789abcde\"\n").is_ok());
        assert!(all_chunkings(b"a\n0123456789abcdefg\n").is_err());
    }

    /// The guard fed one byte at a time through the state machine, without the fast paths.
    fn byte_by_byte(bytes: &[u8], limit: usize) -> Result<(), CodecError> {
        let mut guard = CsvGuard::new(&b""[..], b';', limit);
        for &b in bytes {
            guard.step(b)?;
        }
        guard.finish()
    }

    fn chunked(bytes: &[u8], limit: usize, chunk: usize) -> Result<(), CodecError> {
        let mut guard = CsvGuard::new(bytes, b';', limit);
        let mut buf = vec![0; chunk];
        loop {
            match guard.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) => return Err(codec_error(e).unwrap()),
            }
        }
    }

    proptest::proptest! {
        /// The fast paths skip bytes only where the state machine would not change its verdict.
        #[test]
        fn fast_paths_agree_with_the_state_machine(
            bytes in proptest::collection::vec(
                proptest::sample::select(vec![b'a', b'b', b';', b'"', b'\r', b'\n', 0u8]),
                0..80,
            ),
            limit in 1usize..8,
            chunk in 1usize..12,
        ) {
            let expected = format!("{:?}", byte_by_byte(&bytes, limit));
            proptest::prop_assert_eq!(format!("{:?}", chunked(&bytes, limit, chunk)), expected.clone());
            proptest::prop_assert_eq!(format!("{:?}", chunked(&bytes, limit, 8192)), expected);
        }
    }

    #[test]
    fn other_io_errors_pass_through() {
        let error = io::Error::new(io::ErrorKind::BrokenPipe, "gone");
        assert_eq!(
            codec_error(error).unwrap_err().kind(),
            io::ErrorKind::BrokenPipe
        );
    }
}
