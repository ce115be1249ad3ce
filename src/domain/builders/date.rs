//! Date and time granularities (ARX's date-based hierarchy builder): values are read with a format
//! (`%Y`, `%m`, `%d`, `%H`, `%M`, `%S`; `%Y-%m-%d` by default) and generalized level by level to
//! `hour` (`2017-05-22 13h`), `day` (`2017-05-22`), `week` (ISO week, `2017-W21`), `month` (`2017-05`),
//! `quarter` (`2017-Q2`), `year` (`2017`), `N years` (blocks aligned to multiples of N, `[2015 .. 2019]`),
//! `decade` (10 years) and `century` (100 years). Each level must lie inside the next one: a week is
//! followed by years only, counted as ISO week-years, and `N years` is followed by a multiple of N.

use serde::Deserialize;

use super::{BuildError, MAX_LEVELS};
use crate::core::calendar::days_from_civil;

/// The `date` builder's parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DateBuilder {
    /// How values are written; `%Y-%m-%d` when absent.
    pub format: Option<String>,
    /// Granularities from the finest; `["month", "year", "decade"]` when absent.
    pub levels: Option<Vec<String>>,
    /// Values that stand for a missing value (`[""]` when absent).
    pub missing: Option<Vec<String>>,
}

/// One granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    /// The hour of a day.
    Hour,
    /// A calendar day.
    Day,
    /// An ISO week.
    Week,
    /// A calendar month.
    Month,
    /// A quarter.
    Quarter,
    /// Blocks of this many years (1: the year).
    Years(u32),
}

impl Granularity {
    fn parse(name: &str) -> Option<Self> {
        Some(match name.trim() {
            "hour" => Granularity::Hour,
            "day" => Granularity::Day,
            "week" => Granularity::Week,
            "month" => Granularity::Month,
            "quarter" => Granularity::Quarter,
            "year" => Granularity::Years(1),
            "decade" => Granularity::Years(10),
            "century" => Granularity::Years(100),
            other => {
                let n = other.strip_suffix("years")?.trim().parse::<u32>().ok()?;
                if n == 0 {
                    return None;
                }
                Granularity::Years(n)
            }
        })
    }

    /// Whether every period of `self` lies inside one period of `next`.
    fn nests_in(self, next: Granularity) -> bool {
        use Granularity::*;
        match (self, next) {
            (Hour, Day | Week | Month | Quarter | Years(_)) => true,
            (Day, Week | Month | Quarter | Years(_)) => true,
            (Week, Years(_)) => true,
            (Month, Quarter | Years(_)) => true,
            (Quarter, Years(_)) => true,
            (Years(a), Years(b)) => b > a && b % a == 0,
            _ => false,
        }
    }
}

/// A point in time read from a value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Moment {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
}

impl DateBuilder {
    /// The granularities, checked.
    pub fn granularities(&self) -> Result<Vec<Granularity>, BuildError> {
        let names: Vec<String> = match &self.levels {
            Some(levels) => levels.clone(),
            None => vec!["month".into(), "year".into(), "decade".into()],
        };
        if names.len() + 1 > MAX_LEVELS {
            return Err(BuildError::Invalid(format!(
                "a built hierarchy has at most {MAX_LEVELS} levels"
            )));
        }
        let levels = names
            .iter()
            .map(|n| {
                Granularity::parse(n).ok_or_else(|| {
                    BuildError::Invalid(format!(
                        "unknown granularity '{n}': one of hour, day, week, month, quarter, year, \
                         decade, century or 'N years'"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        for pair in levels.windows(2) {
            if !pair[0].nests_in(pair[1]) {
                return Err(BuildError::Invalid(format!(
                    "each granularity must lie inside the next: {:?} is not inside {:?}",
                    pair[0], pair[1]
                )));
            }
        }
        Ok(levels)
    }

    /// Rows without the top.
    pub(super) fn rows(&self, values: &[&str]) -> Result<Vec<Vec<String>>, BuildError> {
        let levels = self.granularities()?;
        let format = self.format.as_deref().unwrap_or("%Y-%m-%d");
        check_format(format)?;
        let moments: Vec<Option<Moment>> = values.iter().map(|v| read(format, v)).collect();
        let unread = moments.iter().filter(|m| m.is_none()).count();
        if unread > 0 {
            return Err(BuildError::Uncovered {
                count: unread,
                why: "do not match the date format",
            });
        }
        // after a week, years are ISO week-years
        let weeks = levels.contains(&Granularity::Week);
        Ok(values
            .iter()
            .zip(moments.into_iter().flatten())
            .map(|(&value, moment)| {
                let mut row = vec![value.to_string()];
                let (week_year, week) = iso_week(moment);
                for &level in &levels {
                    let year = if weeks { week_year } else { moment.year };
                    row.push(match level {
                        Granularity::Hour => format!(
                            "{:04}-{:02}-{:02} {:02}h",
                            moment.year, moment.month, moment.day, moment.hour
                        ),
                        Granularity::Day => {
                            format!("{:04}-{:02}-{:02}", moment.year, moment.month, moment.day)
                        }
                        Granularity::Week => format!("{week_year:04}-W{week:02}"),
                        Granularity::Month => format!("{:04}-{:02}", moment.year, moment.month),
                        Granularity::Quarter => {
                            format!("{:04}-Q{}", moment.year, (moment.month - 1) / 3 + 1)
                        }
                        Granularity::Years(1) => format!("{year:04}"),
                        Granularity::Years(n) => {
                            let first = year.div_euclid(i64::from(n)) * i64::from(n);
                            format!("[{first:04} .. {:04}]", first + i64::from(n) - 1)
                        }
                    });
                }
                row
            })
            .collect())
    }
}

/// Refuses formats without a year or with an unknown directive.
fn check_format(format: &str) -> Result<(), BuildError> {
    let mut chars = format.chars();
    let mut year = false;
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.next() {
                Some('Y') => year = true,
                Some('m' | 'd' | 'H' | 'M' | 'S' | '%') => {}
                _ => {
                    return Err(BuildError::Invalid(
                        "a date format uses %Y, %m, %d, %H, %M, %S and %%".into(),
                    ))
                }
            }
        }
    }
    if year {
        Ok(())
    } else {
        Err(BuildError::Invalid("a date format needs %Y".into()))
    }
}

/// Reads `value` with `format`; `None` when it does not match or is no valid date.
fn read(format: &str, value: &str) -> Option<Moment> {
    let mut moment = Moment {
        month: 1,
        day: 1,
        ..Moment::default()
    };
    let mut text = value.trim();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            text = text.strip_prefix(c)?;
            continue;
        }
        let directive = chars.next()?;
        if directive == '%' {
            text = text.strip_prefix('%')?;
            continue;
        }
        let most = if directive == 'Y' { 4 } else { 2 };
        let digits = text
            .bytes()
            .take(most)
            .take_while(u8::is_ascii_digit)
            .count();
        if digits == 0 {
            return None;
        }
        let number: u32 = text[..digits].parse().ok()?;
        text = &text[digits..];
        match directive {
            'Y' => moment.year = i64::from(number),
            'm' => moment.month = number,
            'd' => moment.day = number,
            'H' => moment.hour = number,
            'M' | 'S' if number < 60 => {}
            _ => return None,
        }
    }
    let valid = text.is_empty()
        && (1..=12).contains(&moment.month)
        && moment.day >= 1
        && moment.day <= days_in_month(moment.year, moment.month)
        && moment.hour < 24;
    valid.then_some(moment)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    let next = if month == 12 {
        days_from_civil(year + 1, 1, 1)
    } else {
        days_from_civil(year, month + 1, 1)
    };
    (next - days_from_civil(year, month, 1)) as u32
}

/// The ISO week-year and week of a day (weeks start on Monday; week 1 holds the year's first
/// Thursday).
fn iso_week(moment: Moment) -> (i64, u32) {
    let days = days_from_civil(moment.year, moment.month, moment.day);
    // 1970-01-01 was a Thursday: Monday = 0
    let weekday = (days + 3).rem_euclid(7);
    let thursday = days - weekday + 3;
    let (year, _, _) = crate::core::calendar::civil_from_days(thursday);
    let week = (thursday - days_from_civil(year, 1, 1)) / 7 + 1;
    (year, week as u32)
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec;
    use super::super::ErrorCode;

    #[test]
    fn granularities_label_each_level() {
        let rows = spec(r#"{"type": "date", "levels": ["month", "year", "5 years", "decade"]}"#)
            .build(&["2017-05-22", "1966-05-16"])
            .unwrap();
        assert_eq!(
            rows[0],
            [
                "2017-05-22",
                "2017-05",
                "2017",
                "[2015 .. 2019]",
                "[2010 .. 2019]",
                "*"
            ]
        );
        assert_eq!(
            rows[1],
            [
                "1966-05-16",
                "1966-05",
                "1966",
                "[1965 .. 1969]",
                "[1960 .. 1969]",
                "*"
            ]
        );
        let rows = spec(
            r#"{"type": "date", "format": "%d/%m/%Y %H:%M", "levels": ["hour", "day", "quarter"]}"#,
        )
        .build(&["31/12/2020 23:59"])
        .unwrap();
        assert_eq!(
            rows[0],
            [
                "31/12/2020 23:59",
                "2020-12-31 23h",
                "2020-12-31",
                "2020-Q4",
                "*"
            ]
        );
    }

    #[test]
    fn weeks_are_iso_weeks_inside_week_years() {
        // 2019-12-30 is a Monday in week 1 of 2020; 2021-01-03 a Sunday in week 53 of 2020
        let rows = spec(r#"{"type": "date", "levels": ["week", "year"]}"#)
            .build(&["2019-12-30", "2021-01-03", "2017-05-22"])
            .unwrap();
        assert_eq!(rows[0], ["2019-12-30", "2020-W01", "2020", "*"]);
        assert_eq!(rows[1], ["2021-01-03", "2020-W53", "2020", "*"]);
        assert_eq!(rows[2], ["2017-05-22", "2017-W21", "2017", "*"]);
    }

    #[test]
    fn bad_dates_and_levels_are_refused() {
        let builder = spec(r#"{"type": "date"}"#);
        let e = builder
            .build(&["2019-02-29", "2020-02-29", "soon"])
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::UncoveredValues);
        assert_eq!(
            e.to_string(),
            "2 distinct value(s) of the column do not match the date format"
        );
        for json in [
            r#"{"type": "date", "levels": ["week", "month"]}"#,
            r#"{"type": "date", "levels": ["year", "month"]}"#,
            r#"{"type": "date", "levels": ["5 years", "decade", "7 years"]}"#,
            r#"{"type": "date", "levels": ["fortnight"]}"#,
            r#"{"type": "date", "format": "%m/%d"}"#,
        ] {
            let e = spec(json).build(&["2019-01-01"]).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidHierarchy, "{json}");
        }
    }
}
