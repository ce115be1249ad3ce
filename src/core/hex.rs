//! Lowercase hexadecimal text of bytes: checksums, fingerprints, entity tags and pseudonym tokens all
//! print digests this way.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lowercase hex, two digits per byte.
pub fn hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(2 * bytes.len());
    push_hex(bytes, &mut text);
    text
}

/// Appends `bytes` as lowercase hex to `text`, without allocating.
pub fn push_hex(bytes: &[u8], text: &mut String) {
    for &b in bytes {
        text.push(DIGITS[usize::from(b >> 4)] as char);
        text.push(DIGITS[usize::from(b & 15)] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_print_as_two_lowercase_digits_each() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        let mut text = String::from("x");
        push_hex(&[0xba, 0x78], &mut text);
        assert_eq!(text, "xba78");
    }
}
