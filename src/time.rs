//! Instants as Unix seconds, parsed from the forms knowledge files use:
//! RFC 3339 timestamps, civil dates and date-times (taken as UTC), and plain
//! Unix seconds.

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::Timestamp;

/// Seconds in an hour.
pub const SECS_PER_HOUR: f64 = 3600.0;
/// Seconds in a day.
pub const SECS_PER_DAY: f64 = 86_400.0;

/// Parses `2026-02-01T14:42:30Z`, `2026-02-01T14:42:30`, `2026-02-01 14:42`
/// or `2026-02-01` into Unix seconds. Offset-less forms are UTC.
pub fn parse_instant(text: &str) -> Result<i64, String> {
    let text = text.trim();
    if let Ok(ts) = text.parse::<Timestamp>() {
        return Ok(ts.as_second());
    }
    let civil = text.parse::<DateTime>().or_else(|_| {
        text.parse::<Date>()
            .map(|d| d.to_datetime(jiff::civil::Time::midnight()))
    });
    match civil {
        Ok(dt) => dt
            .to_zoned(TimeZone::UTC)
            .map(|z| z.timestamp().as_second())
            .map_err(|e| e.to_string()),
        Err(_) => Err(format!(
            "`{text}` is not a date: expected RFC 3339 (2026-02-01T14:42:30Z) or a date (2026-02-01)"
        )),
    }
}

/// The current time as Unix seconds.
pub fn now() -> i64 {
    Timestamp::now().as_second()
}

/// Formats Unix seconds as RFC 3339 UTC.
pub fn format_instant(secs: i64) -> String {
    Timestamp::from_second(secs)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| secs.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_files_use() {
        let day = parse_instant("2026-02-01").unwrap();
        assert_eq!(parse_instant("2026-02-01T00:00:00Z").unwrap(), day);
        assert_eq!(parse_instant("2026-02-01T00:00:00").unwrap(), day);
        assert_eq!(parse_instant("2026-02-01T02:00:00+02:00").unwrap(), day);
        assert_eq!(
            parse_instant("2026-02-01T14:42:30Z").unwrap() - day,
            14 * 3600 + 42 * 60 + 30
        );
        assert!(parse_instant("last tuesday").is_err());
        assert_eq!(format_instant(day), "2026-02-01T00:00:00Z");
    }
}
