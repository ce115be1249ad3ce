//! Column profiles of a parsed table: each column's name, number of distinct values (the size of its
//! dictionary) and a value type inferred from every distinct value: `integer`, `decimal`, `date`
//! (ISO `YYYY-MM-DD`) or `string`. Empty values are missing values and fit every type; a column with no
//! non-empty value is `string`. Profiles describe columns, never values.

use serde::{Deserialize, Serialize};

use crate::core::data::{Column, Table};

/// The type inferred for a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    /// Every value is an optionally signed run of ASCII digits.
    Integer,
    /// Every value is an integer or a decimal number (`1.5`, `-.5`, `2e-3`), at least one is not an
    /// integer.
    Decimal,
    /// Every value is a valid calendar date written `YYYY-MM-DD`.
    Date,
    /// Anything else.
    String,
}

/// What the API reports about one column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnProfile {
    /// The column name from the header.
    pub name: String,
    /// Number of distinct values (the empty value included when present).
    pub distinct_count: u64,
    /// The inferred type.
    #[serde(rename = "type")]
    pub value_type: ValueType,
}

/// Profiles every column of `table`, in header order.
pub fn profile_table(table: &Table) -> Vec<ColumnProfile> {
    table.columns().iter().map(profile_column).collect()
}

/// Profiles one column from its dictionary (each distinct value is examined once).
pub fn profile_column(column: &Column) -> ColumnProfile {
    ColumnProfile {
        name: column.name.clone(),
        distinct_count: column.dictionary.len() as u64,
        value_type: infer_type(column.dictionary.values()),
    }
}

/// The narrowest type every value fits (empty values ignored); `string` when no value is non-empty.
pub fn infer_type<'a>(values: impl IntoIterator<Item = &'a str>) -> ValueType {
    // candidates still possible: integer ⊂ decimal, date
    let mut integer = true;
    let mut decimal = true;
    let mut date = true;
    let mut any = false;
    for value in values {
        if value.is_empty() {
            continue;
        }
        any = true;
        let bytes = value.as_bytes();
        if integer && !is_integer(bytes) {
            integer = false;
        }
        if decimal && !integer && !is_decimal(bytes) {
            decimal = false;
        }
        if date && !is_date(bytes) {
            date = false;
        }
        if !integer && !decimal && !date {
            return ValueType::String;
        }
    }
    if !any {
        ValueType::String
    } else if integer {
        ValueType::Integer
    } else if decimal {
        ValueType::Decimal
    } else if date {
        ValueType::Date
    } else {
        ValueType::String
    }
}

fn strip_sign(bytes: &[u8]) -> &[u8] {
    match bytes {
        [b'+' | b'-', rest @ ..] => rest,
        _ => bytes,
    }
}

fn all_digits(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_digit)
}

/// `[+-]?[0-9]+`
fn is_integer(bytes: &[u8]) -> bool {
    let digits = strip_sign(bytes);
    !digits.is_empty() && all_digits(digits)
}

/// `[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?`
fn is_decimal(bytes: &[u8]) -> bool {
    let body = strip_sign(bytes);
    let (mantissa, exponent) = match body.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (whole, fraction) = match mantissa.iter().position(|&b| b == b'.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, &[][..]),
    };
    let mantissa_ok =
        all_digits(whole) && all_digits(fraction) && !(whole.is_empty() && fraction.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let digits = strip_sign(e);
        !digits.is_empty() && all_digits(digits)
    });
    mantissa_ok && exponent_ok
}

/// `YYYY-MM-DD`, a real calendar day (leap years included), year 0001–9999.
fn is_date(bytes: &[u8]) -> bool {
    let [y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1] = *bytes else {
        return false;
    };
    let digits = [y0, y1, y2, y3, m0, m1, d0, d1];
    if !all_digits(&digits) {
        return false;
    }
    let number = |ds: &[u8]| ds.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
    let year = number(&[y0, y1, y2, y3]);
    let month = number(&[m0, m1]);
    let day = number(&[d0, d1]);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    year >= 1 && (1..=days).contains(&day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn infer(values: &[&str]) -> ValueType {
        infer_type(values.iter().copied())
    }

    #[test]
    fn integers() {
        assert_eq!(infer(&["39", "-4", "+7", "007"]), ValueType::Integer);
        assert_eq!(infer(&["39", ""]), ValueType::Integer);
        assert_eq!(infer(&["-"]), ValueType::String);
        assert_eq!(infer(&["3 9"]), ValueType::String);
        assert_eq!(infer(&[" 39"]), ValueType::String);
    }

    #[test]
    fn decimals() {
        assert_eq!(infer(&["1", "1.5"]), ValueType::Decimal);
        assert_eq!(infer(&["1.5", "1"]), ValueType::Decimal);
        assert_eq!(
            infer(&["-.5", "2.", "3e8", "4.1E-3", "+1.0"]),
            ValueType::Decimal
        );
        assert_eq!(infer(&["."]), ValueType::String);
        assert_eq!(infer(&["1.2.3"]), ValueType::String);
        assert_eq!(infer(&["1e"]), ValueType::String);
        assert_eq!(infer(&["e5"]), ValueType::String);
        assert_eq!(infer(&["NaN"]), ValueType::String);
        assert_eq!(infer(&["inf"]), ValueType::String);
        assert_eq!(infer(&["1,5"]), ValueType::String);
    }

    #[test]
    fn dates() {
        assert_eq!(infer(&["2024-02-29", "1999-12-31", ""]), ValueType::Date);
        assert_eq!(infer(&["2023-02-29"]), ValueType::String);
        assert_eq!(infer(&["1900-02-29"]), ValueType::String);
        assert_eq!(infer(&["2000-02-29"]), ValueType::Date);
        assert_eq!(infer(&["2024-13-01"]), ValueType::String);
        assert_eq!(infer(&["2024-04-31"]), ValueType::String);
        assert_eq!(infer(&["2024-4-1"]), ValueType::String);
        assert_eq!(infer(&["0000-01-01"]), ValueType::String);
        assert_eq!(infer(&["2024-01-01T00:00"]), ValueType::String);
        // a date and an integer together are neither
        assert_eq!(infer(&["2024-01-01", "5"]), ValueType::String);
    }

    #[test]
    fn strings_and_empty_columns() {
        assert_eq!(infer(&["Male", "Female"]), ValueType::String);
        assert_eq!(infer(&["39", "Male"]), ValueType::String);
        assert_eq!(infer(&[""]), ValueType::String);
        assert_eq!(infer(&[]), ValueType::String);
    }

    #[test]
    fn profiles_count_distinct_values_and_serialize_as_the_api_does() {
        let table = Table::from_rows(
            &["age", "sex", "income", "born"],
            &[
                vec!["39", "Male", "1.5", "1985-03-01"],
                vec!["50", "Female", "2", "1974-11-30"],
                vec!["39", "Male", "2", "1985-03-01"],
            ],
        );
        let profiles = profile_table(&table);
        let json = serde_json::to_value(&profiles).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"name": "age", "distinct_count": 2, "type": "integer"},
                {"name": "sex", "distinct_count": 2, "type": "string"},
                {"name": "income", "distinct_count": 2, "type": "decimal"},
                {"name": "born", "distinct_count": 2, "type": "date"},
            ])
        );
        let back: Vec<ColumnProfile> = serde_json::from_value(json).unwrap();
        assert_eq!(back, profiles);
    }
}
