//! Dates and date-times as ordered values: ISO 8601 text read to seconds since 1970-01-01T00:00:00, so
//! that Mondrian can recode a `date` or `datetime` quasi-identifier to ranges of time
//! (`[1933-10-15 .. 1945-04-05]`). Only ISO text is read, so that the order of the text and the order
//! of time agree and every published range can be read back.

use crate::core::calendar::days_from_civil;

/// Seconds since 1970-01-01T00:00:00 of `YYYY-MM-DD` (midnight); `None` for any other text or an
/// impossible date.
pub fn date_seconds(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = digits(&b[0..4])?;
    let month = digits(&b[5..7])?;
    let day = digits(&b[8..10])?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month as u32, day as u32) * 86_400)
}

/// Seconds since 1970-01-01T00:00:00 of `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS`
/// (a space may stand for the `T`); `None` for any other text.
pub fn datetime_seconds(text: &str) -> Option<i64> {
    if text.len() == 10 {
        return date_seconds(text);
    }
    let b = text.as_bytes();
    if !(b.len() == 16 || b.len() == 19) || !(b[10] == b'T' || b[10] == b' ') || b[13] != b':' {
        return None;
    }
    let day = date_seconds(text.get(..10)?)?;
    let hour = digits(&b[11..13])?;
    let minute = digits(&b[14..16])?;
    let second = if b.len() == 19 {
        if b[16] != b':' {
            return None;
        }
        digits(&b[17..19])?
    } else {
        0
    };
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some(day + hour * 3600 + minute * 60 + second)
}

fn digits(bytes: &[u8]) -> Option<i64> {
    if !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let (next_year, next_month) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    days_from_civil(next_year, next_month as u32, 1) - days_from_civil(year, month as u32, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates_and_times_read_to_seconds() {
        assert_eq!(date_seconds("1970-01-01"), Some(0));
        assert_eq!(date_seconds("1970-01-02"), Some(86_400));
        assert_eq!(date_seconds("1969-12-31"), Some(-86_400));
        assert_eq!(date_seconds("2024-02-29"), Some(1_709_164_800));
        for bad in [
            "2023-02-29",
            "2023-13-01",
            "2023-1-05",
            "05/01/2023",
            "",
            "2023-01-0x",
        ] {
            assert_eq!(date_seconds(bad), None, "{bad}");
        }
        assert_eq!(datetime_seconds("1970-01-01T01:00"), Some(3600));
        assert_eq!(datetime_seconds("1970-01-01 00:01:05"), Some(65));
        assert_eq!(datetime_seconds("1970-01-02"), Some(86_400));
        for bad in [
            "1970-01-01T24:00",
            "1970-01-01T00:60",
            "1970-01-01X00:00",
            "1970-01-01T00:00:0",
        ] {
            assert_eq!(datetime_seconds(bad), None, "{bad}");
        }
    }
}
