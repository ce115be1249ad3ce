//! Timestamps on the wire: the store keeps unix milliseconds; the API shows RFC 3339 UTC strings with
//! millisecond precision (`2026-11-21T10:17:00.123Z`).

use crate::core::calendar::civil_from_days;

/// The current time in unix milliseconds (process clock).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// RFC 3339 UTC text of `unix_ms` milliseconds since the epoch.
pub fn rfc3339(unix_ms: i64) -> String {
    let seconds = unix_ms.div_euclid(1000);
    let millis = unix_ms.rem_euclid(1000);
    let days = seconds.div_euclid(86_400);
    let second_of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        second_of_day / 3600,
        second_of_day % 3600 / 60,
        second_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29T12:34:56.789Z (a leap day)
        assert_eq!(rfc3339(951_827_696_789), "2000-02-29T12:34:56.789Z");
        // 2026-11-21T10:17:00Z
        assert_eq!(rfc3339(1_795_256_220_000), "2026-11-21T10:17:00.000Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999Z");
    }
}
