//! The source of time, injected so that expiry and retention are tested without sleeping.

/// The source of time, injected so that expiry and retention can be tested without sleeping.
pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The wall clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }
}

/// A duration as configuration writes it: `500ms`, `45s`, `90m`, `24h`, `7d` (docs/configuration.md).
pub fn parse_duration(text: &str) -> Option<std::time::Duration> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let millis = match unit {
        "ms" => n,
        "s" => n.checked_mul(1_000)?,
        "m" => n.checked_mul(60_000)?,
        "h" => n.checked_mul(3_600_000)?,
        "d" => n.checked_mul(86_400_000)?,
        _ => return None,
    };
    Some(std::time::Duration::from_millis(millis))
}

/// The shortest of `7d`, `24h`, `90m`, `45s` that says the duration exactly (whole seconds).
pub fn format_duration(age: std::time::Duration) -> String {
    let secs = age.as_secs();
    if secs > 0 && secs.is_multiple_of(86_400) {
        format!("{}d", secs / 86_400)
    } else if secs > 0 && secs.is_multiple_of(3600) {
        format!("{}h", secs / 3600)
    } else if secs > 0 && secs.is_multiple_of(60) {
        format!("{}m", secs / 60)
    } else {
        format!("{secs}s")
    }
}

/// A moment as a person writes it on a command line (docs/history.md, "Filters"): RFC 3339
/// (`2026-12-01T09:00:00Z`, `2026-12-01T10:00:00+01:00`, a plain date `2026-12-01` meaning its midnight UTC)
/// or a duration back from `now` (`7d`, `12h`, `30m`). Epoch ms; `None` when it is neither.
pub fn parse_moment(text: &str, now: i64) -> Option<i64> {
    let text = text.trim();
    if let Some(ago) = parse_duration(text) {
        return Some(now.saturating_sub(ago.as_millis().min(i64::MAX as u128) as i64));
    }
    let (date, rest) = text.split_at(text.len().min(10));
    let mut parts = date.split('-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: i64 = parts.next()?.parse().ok()?;
    let day: i64 = parts.next()?.parse().ok()?;
    if date.len() != 10 || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    if rest.is_empty() {
        return Some(days * 86_400_000);
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let zone_at = rest.find(['Z', 'z', '+', '-'])?;
    let (clock, zone) = rest.split_at(zone_at);
    let mut fields = clock.split(':');
    let hour: i64 = fields.next()?.parse().ok()?;
    let minute: i64 = fields.next()?.parse().ok()?;
    let seconds = fields.next().unwrap_or("0");
    if fields.next().is_some() || hour > 23 || minute > 59 {
        return None;
    }
    let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
    let second: i64 = whole.parse().ok()?;
    if second > 60 || !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let millis: i64 = format!("{fraction:0<3}")[..3].parse().ok()?;
    let offset_minutes = match zone {
        "Z" | "z" => 0,
        _ => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let (h, m) = zone[1..].split_once(':')?;
            sign * (h.parse::<i64>().ok()? * 60 + m.parse::<i64>().ok()?)
        }
    };
    Some(((days * 24 + hour) * 60 + minute - offset_minutes) * 60_000 + second * 1000 + millis)
}

/// `ms` as RFC 3339 in UTC, to the millisecond: `2026-12-06T21:48:50.250Z`.
pub fn format_moment(ms: i64) -> String {
    let (y, m, d, hour, minute, second, millis) = civil_time(ms);
    format!("{y:04}-{m:02}-{d:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z")
}

/// `ms` since the epoch as UTC year, month, day, hour, minute, second and millisecond.
pub fn civil_time(ms: i64) -> (i64, i64, i64, i64, i64, i64, i64) {
    let secs = ms.div_euclid(1000);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    (
        y,
        m,
        d,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms.rem_euclid(1000),
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Days since 1970-01-01 of a date in the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod moment_tests {
    use super::parse_moment;

    #[test]
    fn moments_are_rfc_3339_dates_or_durations_back_from_now() {
        let now = 1_800_000_000_000;
        assert_eq!(parse_moment("7d", now), Some(now - 7 * 86_400_000));
        assert_eq!(parse_moment("1970-01-01", now), Some(0));
        assert_eq!(
            parse_moment("2026-12-06T21:48:50Z", now),
            Some(1_796_593_730_000)
        );
        assert_eq!(
            parse_moment("2026-12-06T22:48:50.25+01:00", now),
            Some(1_796_593_730_250)
        );
        assert_eq!(
            parse_moment("2000-02-29T00:00:00-00:30", now),
            Some(951_784_200_000)
        );
        assert_eq!(
            super::format_moment(1_796_593_730_250),
            "2026-12-06T21:48:50.250Z"
        );
        assert_eq!(
            parse_moment(&super::format_moment(951_784_200_000), now),
            Some(951_784_200_000)
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2026-12-06T25:00:00Z",
            "2026-12-06T10:00",
        ] {
            assert_eq!(parse_moment(bad, now), None, "{bad}");
        }
    }
}
