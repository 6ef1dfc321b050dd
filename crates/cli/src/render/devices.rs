//! Paired phones and the pairing code that adds one.

use super::{table, time};

/// Paired devices, by name.
pub fn devices(devices: &[codemode::Device]) -> String {
    if devices.is_empty() {
        return "no device is paired (pair one with: codemode devices pair NAME)".to_owned();
    }
    let rows: Vec<Vec<String>> = devices
        .iter()
        .map(|d| {
            vec![
                d.name.clone(),
                time(d.paired_at),
                d.last_used_at.map(time).unwrap_or_else(|| "-".to_owned()),
                match d.revoked_at {
                    Some(at) => format!("revoked {}", time(at)),
                    None => "active".to_owned(),
                },
            ]
        })
        .collect();
    table(&["DEVICE", "PAIRED", "LAST USED", "STATE"], &rows)
}

/// A pairing code as a person uses it: the link to open on the phone, the code to type instead, and the
/// fingerprint the phone's pairing page shows, to compare.
pub fn pairing(
    pairing: &codemode_api::Pairing,
    link: &str,
    fingerprint: &str,
    not_served: bool,
) -> String {
    let mut text = format!(
        "Pair \"{}\": scan the code, or open this link on the phone (or open /pair and type the code), before {}:\n\n{}\n  {link}\n\n  code         {}\n  fingerprint  {fingerprint}\n\nThe page shows the same fingerprint; if it does not, do not pair.",
        pairing.name,
        time(pairing.expires_at),
        codemode_phone::qr_text(link).unwrap_or_default(),
        pairing.code
    );
    if not_served {
        text.push_str(
            "\nNo phone page is served now: start it with `codemode serve --listen 0.0.0.0:8443`, or in the app \
             (Settings → Approve from a phone).",
        );
    }
    text
}
