//! The CSV-reader battery: awkward inputs (quotes never closed, at the end of the file and mid-file,
//! quotes inside unquoted fields, stray carriage returns, NUL bytes, very long fields, mixed line endings)
//! with what must come of each: exactly the records an RFC 4180 reader finds, or a coded error naming a
//! line — never fewer records without an error. The same cases run through `read_table`, the
//! `anonymize` command and the upload route.
//!
//! Every input has the header `q;v` (`;`-delimited); `q` is always `1`, `v` carries the case.
#![allow(dead_code)]

/// The default field limit (1 MiB).
pub const FIELD_LIMIT: usize = 1 << 20;

/// What reading a case must give.
#[derive(Debug, Clone)]
pub enum Expect {
    /// Exactly these `v` values, one per record, in order.
    Records(Vec<Vec<u8>>),
    /// An error with this code naming this line, and this fragment in its message.
    Error {
        /// The stable code (the API's problem code).
        code: &'static str,
        /// The line the message names.
        line: u64,
        /// Another fragment of the message.
        fragment: &'static str,
    },
}

/// One input of the battery.
#[derive(Debug, Clone)]
pub struct Case {
    /// What the case is about.
    pub name: &'static str,
    /// The CSV bytes.
    pub input: Vec<u8>,
    /// What must come of it.
    pub expect: Expect,
}

fn records(values: &[&[u8]]) -> Expect {
    Expect::Records(values.iter().map(|v| v.to_vec()).collect())
}

fn error(code: &'static str, line: u64, fragment: &'static str) -> Expect {
    Expect::Error {
        code,
        line,
        fragment,
    }
}

fn case(name: &'static str, input: impl Into<Vec<u8>>, expect: Expect) -> Case {
    Case {
        name,
        input: input.into(),
        expect,
    }
}

/// Every case.
pub fn cases() -> Vec<Case> {
    let long = vec![b'x'; FIELD_LIMIT];
    let mut at_limit = b"q;v\n1;a\n1;".to_vec();
    at_limit.extend_from_slice(&long);
    at_limit.extend_from_slice(b"\n1;b\n");
    let mut over_limit = b"q;v\n1;a\n1;\"".to_vec();
    over_limit.extend_from_slice(&long);
    over_limit.extend_from_slice(b"x\"\n1;b\n");
    vec![
        case(
            "the issue's example: a quote opened mid-file and never closed",
            "q;v\n1;\"abc\n1;2\n",
            error("unterminated_quote", 2, "never closed"),
        ),
        case(
            "a quote opened on the last line, at the end of the file",
            "q;v\n1;a\n1;b\n1;\"abc",
            error("unterminated_quote", 4, "never closed"),
        ),
        case(
            "a quote opened mid-file swallowing many records",
            "q;v\n1;a\n1;\"b\n1;c\n1;d\n1;e\n",
            error("unterminated_quote", 3, "never closed"),
        ),
        case(
            "a quote left open mid-file and closed by a later quote",
            "q;v\n1;a\n1;\"b\n1;c\n1;\"d\"\n1;e\n",
            error("text_after_quote", 5, "opened on line 3"),
        ),
        case(
            "text after a closing quote",
            "q;v\n1;a\n1;\"b\"c\n",
            error("text_after_quote", 3, "opened on line 3"),
        ),
        case(
            "quotes inside unquoted fields are literal",
            "q;v\n1;5'10\"\n1;a\"b\"\"c\n",
            records(&[b"5'10\"", b"a\"b\"\"c"]),
        ),
        case(
            "quoted fields with delimiters, doubled quotes and line breaks",
            "q;v\n1;\"x;\n\"\"y\"\"\"\n1;\"\"\n1;\"a\r\nb\rc\"\n",
            records(&[b"x;\n\"y\"", b"", b"a\r\nb\rc"]),
        ),
        case(
            "a stray carriage return outside quotes",
            "q;v\n1;a\n1;b\rc\n1;d\n",
            error("stray_carriage_return", 3, "carriage return"),
        ),
        case(
            "a carriage return ending the header alone",
            "q;v\r1;a\n1;b\n",
            error("stray_carriage_return", 1, "carriage return"),
        ),
        case(
            "mixed line endings",
            "q;v\r\n1;a\n1;b\r\n1;c\n1;d",
            records(&[b"a", b"b", b"c", b"d"]),
        ),
        case(
            "a NUL byte in an unquoted field",
            &b"q;v\n1;a\n1;b\0c\n"[..],
            error("invalid_characters", 3, "NUL"),
        ),
        case(
            "a NUL byte in a quoted field",
            &b"q;v\n1;a\n1;\"b\0c\"\n"[..],
            error("invalid_characters", 3, "NUL"),
        ),
        case(
            "UTF-16 text",
            &b"q\x00;\x00v\x00\n\x001\x00;\x00a\x00\n\x00"[..],
            error("invalid_characters", 1, "NUL"),
        ),
        case(
            "a field at the limit",
            at_limit,
            Expect::Records(vec![b"a".to_vec(), long.clone(), b"b".to_vec()]),
        ),
        case(
            "a field over the limit",
            over_limit,
            error("field_too_long", 3, "limit of 1048576 bytes"),
        ),
        case(
            "a control character in a column name",
            "q;v\u{1b}\n1;a\n1;b\n",
            error("invalid_characters", 1, "control character"),
        ),
    ]
}
