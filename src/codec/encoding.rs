//! Input in other character encodings than UTF-8 (hospital exports are often Windows-1252), decoded to
//! UTF-8 before parsing with encoding_rs, the WHATWG Encoding Standard's decoders. Labels are the
//! standard's (`windows-1252`, `iso-8859-1`, `latin1`, …; ISO-8859-1 decodes as its superset
//! Windows-1252, as browsers do). UTF-8 input is not decoded: the CSV reader checks it and names the
//! first invalid field. Output is UTF-8 unless the CLI is asked for another encoding ([`EncodingWriter`]);
//! a character that encoding cannot write is an error, never a silent replacement.

use std::io::{self, Read, Write};

use encoding_rs::{Decoder, EncoderResult, Encoding, UTF_16BE, UTF_16LE, UTF_8};

/// The encoding a label names, or `None` for UTF-8 (read as it is); an error message for an unknown or
/// unsupported label.
pub fn encoding_for(label: &str) -> Result<Option<&'static Encoding>, String> {
    let encoding = Encoding::for_label(label.trim().as_bytes()).ok_or_else(|| {
        "unknown encoding: use utf-8, windows-1252, iso-8859-1 or another WHATWG label".to_string()
    })?;
    if encoding == UTF_16LE || encoding == UTF_16BE || encoding.name() == "replacement" {
        return Err(format!(
            "the {} encoding is not supported for CSV files",
            encoding.name()
        ));
    }
    Ok((encoding != UTF_8).then_some(encoding))
}

/// Turns chunks of encoded bytes into UTF-8, chunk by chunk (a character split between chunks is
/// completed by the next one).
pub struct Transcoder {
    decoder: Decoder,
}

impl Transcoder {
    /// A transcoder from `encoding`.
    pub fn new(encoding: &'static Encoding) -> Self {
        Self {
            decoder: encoding.new_decoder_without_bom_handling(),
        }
    }

    /// The UTF-8 of `bytes`; `last` for the final chunk (an empty one may close the stream).
    pub fn push(&mut self, bytes: &[u8], last: bool) -> Vec<u8> {
        let capacity = self
            .decoder
            .max_utf8_buffer_length(bytes.len())
            .unwrap_or(bytes.len() * 3 + 16);
        let mut out = vec![0u8; capacity];
        let (_, _, written, _) = self.decoder.decode_to_utf8(bytes, &mut out, last);
        out.truncate(written);
        out
    }
}

/// A reader that decodes `inner` from an encoding to UTF-8.
pub struct DecodingReader<R> {
    inner: R,
    transcoder: Transcoder,
    decoded: Vec<u8>,
    at: usize,
    finished: bool,
}

impl<R: Read> DecodingReader<R> {
    /// Decodes `inner` from `encoding`.
    pub fn new(inner: R, encoding: &'static Encoding) -> Self {
        Self {
            inner,
            transcoder: Transcoder::new(encoding),
            decoded: Vec::new(),
            at: 0,
            finished: false,
        }
    }
}

impl<R: Read> Read for DecodingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.decoded.len() {
            if self.finished {
                return Ok(0);
            }
            let mut chunk = [0u8; 1 << 14];
            let n = self.inner.read(&mut chunk)?;
            self.finished = n == 0;
            self.decoded = self.transcoder.push(&chunk[..n], self.finished);
            self.at = 0;
        }
        let n = buf.len().min(self.decoded.len() - self.at);
        buf[..n].copy_from_slice(&self.decoded[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A writer that encodes the UTF-8 written to it into `encoding` before passing it on. A character the
/// encoding has no form for fails the write with `InvalidData` (the message names no character).
pub struct EncodingWriter<W: Write> {
    inner: W,
    encoder: encoding_rs::Encoder,
    encoding: &'static Encoding,
    /// Bytes of a UTF-8 sequence split between two writes.
    pending: Vec<u8>,
}

impl<W: Write> EncodingWriter<W> {
    /// Encodes into `encoding` what is written, then writes it to `inner`.
    pub fn new(inner: W, encoding: &'static Encoding) -> Self {
        Self {
            inner,
            encoder: encoding.new_encoder(),
            encoding,
            pending: Vec::new(),
        }
    }

    fn encode(&mut self, text: &str, last: bool) -> io::Result<()> {
        let mut input = text;
        let mut out = vec![
            0u8;
            self.encoder
                .max_buffer_length_from_utf8_without_replacement(input.len())
                .unwrap_or(input.len() * 4 + 16)
        ];
        loop {
            let (result, read, written) = self
                .encoder
                .encode_from_utf8_without_replacement(input, &mut out, last);
            self.inner.write_all(&out[..written])?;
            input = &input[read..];
            match result {
                EncoderResult::InputEmpty => return Ok(()),
                EncoderResult::OutputFull => continue,
                EncoderResult::Unmappable(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                        "the output holds a character that {} cannot write; write UTF-8 instead",
                        self.encoding.name()
                    ),
                    ))
                }
            }
        }
    }
}

impl<W: Write> Write for EncodingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        // encode the longest complete UTF-8 prefix; keep a split sequence for the next write
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the output is not UTF-8",
                ))
            }
        };
        let rest = self.pending.split_off(valid);
        let text = std::mem::replace(&mut self.pending, rest);
        // the prefix was checked above
        let text = String::from_utf8(text)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the output is not UTF-8"))?;
        self.encode(&text, false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the output ends inside a character",
            ));
        }
        self.encode("", true)?;
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_1252_becomes_utf8_across_chunks() {
        // "José;Müller;€" in Windows-1252
        let bytes = b"Jos\xe9;M\xfcller;\x80\n";
        let encoding = encoding_for("windows-1252").unwrap().unwrap();
        let mut text = String::new();
        DecodingReader::new(&bytes[..], encoding)
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "José;Müller;€\n");
        // one byte at a time through the transcoder
        let mut transcoder = Transcoder::new(encoding);
        let mut out = Vec::new();
        for &b in bytes.iter() {
            out.extend(transcoder.push(&[b], false));
        }
        out.extend(transcoder.push(&[], true));
        assert_eq!(String::from_utf8(out).unwrap(), "José;Müller;€\n");
    }

    #[test]
    fn utf8_is_encoded_across_writes_and_unmappable_characters_fail() {
        let encoding = encoding_for("windows-1252").unwrap().unwrap();
        let mut out = Vec::new();
        {
            let mut writer = EncodingWriter::new(&mut out, encoding);
            let text = "José;Müller;€\n".as_bytes();
            // one byte at a time: characters split between writes
            for b in text {
                writer.write_all(&[*b]).unwrap();
            }
            writer.flush().unwrap();
        }
        assert_eq!(out, b"Jos\xe9;M\xfcller;\x80\n");
        // through a CSV writer that flushes it, then flushed again
        let mut out = Vec::new();
        {
            let mut writer = EncodingWriter::new(&mut out, encoding);
            let mut csv = csv::WriterBuilder::new()
                .delimiter(b';')
                .from_writer(&mut writer);
            csv.write_record(["José", "Zoë"]).unwrap();
            csv.flush().unwrap();
            drop(csv);
            writer.flush().unwrap();
        }
        assert_eq!(out, b"Jos\xe9;Zo\xeb\n");
        let mut sink = Vec::new();
        let mut writer = EncodingWriter::new(&mut sink, encoding);
        let e = writer.write_all("Zoë 王".as_bytes()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(!e.to_string().contains('王'));
    }

    #[test]
    fn labels() {
        assert!(encoding_for("utf-8").unwrap().is_none());
        assert!(encoding_for("UTF8").unwrap().is_none());
        assert_eq!(
            encoding_for("latin1").unwrap().unwrap().name(),
            "windows-1252"
        );
        assert_eq!(
            encoding_for("iso-8859-1").unwrap().unwrap().name(),
            "windows-1252"
        );
        assert_eq!(
            encoding_for("iso-8859-15").unwrap().unwrap().name(),
            "ISO-8859-15"
        );
        assert!(encoding_for("utf-16le").is_err());
        assert!(encoding_for("klingon").is_err());
    }
}
