//! Calendar dates from milliseconds since the epoch (proleptic Gregorian, UTC), for share pages
//! and the spending guard's daily counters.

/// `(year, month, day, hour, minute)` of `ms` after the epoch, in UTC.
pub fn civil(ms: u64) -> (i64, u32, u32, u32, u32) {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm), for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        month,
        day,
        (rest / 3600) as u32,
        (rest % 3600 / 60) as u32,
    )
}

/// `YYYY-MM-DD` in UTC.
///
/// ```
/// assert_eq!(stepwise_core::dates::day(1_795_000_000_000), "2026-11-18");
/// ```
pub fn day(ms: u64) -> String {
    let (year, month, day, _, _) = civil(ms);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `YYYY-MM-DD HH:MM` in UTC.
pub fn minute(ms: u64) -> String {
    let (year, month, day, hour, minute) = civil(ms);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}")
}

/// ISO 8601 in UTC, to the second: `YYYY-MM-DDTHH:MM:SSZ`.
///
/// ```
/// assert_eq!(stepwise_core::dates::iso(1_795_000_000_000), "2026-11-18T11:06:40Z");
/// ```
pub fn iso(ms: u64) -> String {
    let (year, month, day, hour, minute) = civil(ms);
    let second = ms / 1000 % 60;
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(minute(0), "1970-01-01 00:00");
        assert_eq!(minute(951_782_400_000), "2000-02-29 00:00");
        assert_eq!(minute(1_795_000_000_000), "2026-11-18 11:06");
        assert_eq!(
            day(1_795_000_000_000 - 11 * 3_600_000 - 7 * 60_000),
            "2026-11-17"
        );
    }
}
