//! Approving from a phone: serving its page, and pairing and revoking devices.

use crate::console::{CommandResult, Console};
use codemode_api::ApiError;
use serde::Serialize;
use tauri::State;

/// Settings → "Approve from a phone": whether the page is served and where, and the paired devices.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhoneView {
    serving: Option<codemode_phone::Serving>,
    devices: Vec<codemode::Device>,
    /// The authority's fingerprint, which the phone's pairing page shows too.
    fingerprint: Option<String>,
    listen: &'static str,
}

#[tauri::command]
pub async fn phone(console: State<'_, Console>) -> CommandResult<PhoneView> {
    let api = console.api().await?;
    let serving = console.phone_serving().await;
    Ok(PhoneView {
        fingerprint: serving.as_ref().map(|s| s.fingerprint.clone()),
        serving,
        devices: api.devices()?,
        listen: codemode_phone::NETWORK_LISTEN,
    })
}

#[tauri::command]
pub async fn set_phone(console: State<'_, Console>, on: bool) -> CommandResult<PhoneView> {
    console.set_phone(on).await?;
    phone(console).await
}

/// A one-time pairing code for a device, with its link and the link as a QR code to scan.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairingView {
    pairing: codemode_api::Pairing,
    link: String,
    qr_svg: Option<String>,
}

#[tauri::command]
pub async fn pair_phone(console: State<'_, Console>, name: String) -> CommandResult<PairingView> {
    let serving = console.phone_serving().await.ok_or_else(|| {
        ApiError::invalid_args(
            "Turn on \"Approve from a phone\" first: the link points to its page.",
        )
    })?;
    let pairing = console.api().await?.pair_device(&name)?;
    let link = codemode_phone::pairing_link(&serving.url, &pairing.code);
    Ok(PairingView {
        qr_svg: codemode_phone::qr_svg(&link),
        pairing,
        link,
    })
}

#[tauri::command]
pub async fn revoke_phone(console: State<'_, Console>, name: String) -> CommandResult<PhoneView> {
    console.api().await?.revoke_device(&name)?;
    phone(console).await
}
