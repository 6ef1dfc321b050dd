//! The pairing link as a QR code a phone's camera opens: an SVG for the app's window and half-block
//! characters for a terminal, both of one encoding.

use qrcodegen::{QrCode, QrCodeEcc};

/// The quiet zone the QR standard asks around a code, in modules.
const QUIET: i32 = 4;

fn encode(text: &str) -> Option<QrCode> {
    QrCode::encode_text(text, QrCodeEcc::Medium).ok()
}

/// An SVG of `text`'s code (dark modules on white, whatever the theme: cameras want contrast), or `None`
/// when the text is too long for a QR code.
pub fn qr_svg(text: &str) -> Option<String> {
    let code = encode(text)?;
    let size = code.size() + 2 * QUIET;
    let mut path = String::new();
    for y in 0..code.size() {
        for x in 0..code.size() {
            if code.get_module(x, y) {
                path.push_str(&format!("M{},{}h1v1h-1z", x + QUIET, y + QUIET));
            }
        }
    }
    Some(format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {size} {size}\" shape-rendering=\"crispEdges\">\
         <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/><path d=\"{path}\" fill=\"#000\"/></svg>"
    ))
}

/// `text`'s code in a terminal: two modules a character (`▀`, `▄`, `█`, space), light on dark inverted so it
/// reads on a dark terminal too, since each cell is drawn as the background the camera expects.
pub fn qr_text(text: &str) -> Option<String> {
    let code = encode(text)?;
    let dark = |x: i32, y: i32| code.get_module(x, y);
    let (from, to) = (-2, code.size() + 2);
    let mut out = String::new();
    let mut y = from;
    while y < to {
        for x in from..to {
            // Light modules are drawn as ink: on a dark terminal they show as the code's white.
            let top = !dark(x, y);
            let bottom = y + 1 < to && !dark(x, y + 1);
            out.push(match (top, bottom) {
                (true, true) => '█',
                (true, false) => '▀',
                (false, true) => '▄',
                (false, false) => ' ',
            });
        }
        out.push('\n');
        y += 2;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_becomes_a_square_code_with_its_quiet_zone() {
        let svg = qr_svg("https://192.168.1.20:8443/pair?code=ABCDEFGHJK").unwrap();
        let code = encode("https://192.168.1.20:8443/pair?code=ABCDEFGHJK").unwrap();
        let side = code.size() + 2 * QUIET;
        assert!(
            svg.contains(&format!("viewBox=\"0 0 {side} {side}\"")),
            "{svg}"
        );
        // The three finder patterns' corners are dark.
        assert!(svg.contains(&format!("M{QUIET},{QUIET}h1v1h-1z")));
        let text = qr_text("https://192.168.1.20:8443/pair?code=ABCDEFGHJK").unwrap();
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len() as i32, (code.size() + 4 + 1) / 2);
        assert!(
            rows.iter()
                .all(|r| r.chars().count() as i32 == code.size() + 4)
        );
    }

    #[test]
    fn too_long_a_text_has_no_code() {
        assert!(qr_svg(&"x".repeat(5000)).is_none());
    }
}
