//! Approving from a phone (docs/phone.md): pairing a device with a one-time code, knowing a device by its
//! token, revoking it, signing the links that open a card on it, and deciding from it — bound to the call
//! it was shown, recorded `by: "device"` with the device's name, as the window decides.

use crate::asking::{ClientAnswer, ClientDecision};
use crate::deciding::ShownCall;
use crate::{Api, ApiError};
use codemode::{Answerer, Device, Redeemed};
use hmac::{KeyInit, Mac};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// How long a pairing code can be redeemed.
pub const PAIRING_VALID: Duration = Duration::from_secs(10 * 60);

/// How long a signed link opens its card.
pub const LINK_VALID: Duration = Duration::from_secs(15 * 60);

/// The longest device name.
const MAX_DEVICE_NAME: usize = 40;

/// Letters a person can read off a screen and type without confusing two of them (no 0/O, 1/I/L).
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/// Characters of a pairing code: 31^10, about 2^49, tried at most a few times a minute, for ten minutes.
const CODE_LENGTH: usize = 10;

/// A pairing code just made: shown once, kept only as a hash.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Pairing {
    pub name: String,
    pub code: String,
    /// Epoch ms after which the code pairs nothing.
    pub expires_at: i64,
}

/// A device just paired: its name, and the token its cookie carries (never shown, never stored).
#[derive(Debug, Clone, PartialEq)]
pub struct PairedDevice {
    pub name: String,
    pub token: String,
}

/// The parts of a signed link (docs/phone.md, "Signed links"): which call it opens, until when, once.
#[derive(Debug, Clone, PartialEq)]
pub struct SignedLink {
    pub call: ShownCall,
    pub expires_at: i64,
    pub nonce: String,
    /// HMAC-SHA-256 over the other parts, in hex.
    pub signature: String,
}

impl SignedLink {
    /// The link's query string (after `/link?`).
    pub fn query(&self) -> String {
        format!(
            "run={}&seq={}&digest={}&exp={}&nonce={}&sig={}",
            self.call.execution_id,
            self.call.seq,
            self.call.digest,
            self.expires_at,
            self.nonce,
            self.signature
        )
    }

    fn signed_text(call: &ShownCall, expires_at: i64, nonce: &str) -> String {
        format!(
            "{}\n{}\n{}\n{expires_at}\n{nonce}",
            call.execution_id, call.seq, call.digest
        )
    }
}

/// Random hex of `bytes` bytes, from the operating system's generator (through uuid's v4, whose 122 random
/// bits per id are drawn from it).
fn random_hex(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes * 2);
    while out.len() < bytes * 2 {
        out.push_str(&uuid::Uuid::new_v4().simple().to_string());
    }
    out.truncate(bytes * 2);
    out
}

fn pairing_code() -> String {
    let entropy = uuid::Uuid::new_v4();
    let mut value = entropy.as_u128();
    (0..CODE_LENGTH)
        .map(|_| {
            let letter = CODE_ALPHABET[(value % CODE_ALPHABET.len() as u128) as usize];
            value /= CODE_ALPHABET.len() as u128;
            letter as char
        })
        .collect()
}

/// A code as typed: case and spaces or dashes do not matter.
fn normal_code(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

fn check_device_name(name: &str) -> Result<(), ApiError> {
    let fine = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ');
    if name.trim().is_empty() || name.chars().count() > MAX_DEVICE_NAME || !name.chars().all(fine) {
        return Err(ApiError::invalid_args(format!(
            "A device name is 1 to {MAX_DEVICE_NAME} letters, digits, spaces, dots, dashes or underscores; \
             got {:?}.",
            crate::display::visible(name)
        )));
    }
    Ok(())
}

impl Api {
    /// A one-time code that pairs a device as `name` for [`PAIRING_VALID`]; refused when a device of that
    /// name is paired.
    pub fn pair_device(&self, name: &str) -> Result<Pairing, ApiError> {
        self.usable()?;
        let name = name.trim();
        check_device_name(name)?;
        let code = pairing_code();
        let expires_at = self.now_ms() + PAIRING_VALID.as_millis() as i64;
        if !self.home.runtime.add_pairing(name, &code, expires_at)? {
            return Err(ApiError::invalid_args(format!(
                "A device named \"{name}\" is paired; revoke it first (codemode devices revoke \"{name}\"), or \
                 pick another name."
            )));
        }
        Ok(Pairing {
            name: name.to_owned(),
            code,
            expires_at,
        })
    }

    /// Pairs the device presenting `code`: returns its name and the token it is known by from now on.
    pub fn redeem_pairing(&self, code: &str) -> Result<PairedDevice, ApiError> {
        let token = random_hex(32);
        match self
            .home
            .runtime
            .redeem_pairing(&normal_code(code), &token)?
        {
            Redeemed::Paired(name) => Ok(PairedDevice { name, token }),
            Redeemed::Unknown => Err(ApiError::unauthorized(
                "That pairing code is not one this console gave.",
            )),
            Redeemed::Used => Err(ApiError::unauthorized(
                "That pairing code was used already; ask for a new one (codemode devices pair NAME).",
            )),
            Redeemed::Expired => Err(ApiError::unauthorized(
                "That pairing code expired (codes last 10 minutes); ask for a new one.",
            )),
            Redeemed::NameTaken(name) => Err(ApiError::unauthorized(format!(
                "Another device was paired as \"{name}\" meanwhile; ask for a code with another name."
            ))),
        }
    }

    /// The name of the paired device holding `token`; refused for no token, an unknown or a revoked one.
    pub fn device_of(&self, token: Option<&str>) -> Result<String, ApiError> {
        let refused =
            || ApiError::unauthorized("This browser is not paired, or its pairing was revoked.");
        let token = token.filter(|t| !t.is_empty()).ok_or_else(refused)?;
        self.home
            .runtime
            .device_by_token(token)?
            .ok_or_else(refused)
    }

    /// Every device paired here, revoked ones included.
    pub fn devices(&self) -> Result<Vec<Device>, ApiError> {
        Ok(self.home.runtime.devices()?)
    }

    /// Ends device `name`'s pairing at once: its next request is refused.
    pub fn revoke_device(&self, name: &str) -> Result<(), ApiError> {
        self.usable()?;
        if !self.home.runtime.revoke_device(name.trim())? {
            return Err(ApiError::not_found(format!(
                "No paired device named \"{}\"",
                crate::display::visible(name)
            )));
        }
        Ok(())
    }

    /// `device`'s answer to `call`, decided as an answer in the client is: bound to run, seq and digest,
    /// stale when the call was decided or changed meanwhile. A call to be decided in the window only
    /// (`confirmInApp`) is refused, as is a device revoked since its request was let in.
    pub async fn answer_from_device(
        &self,
        device: &str,
        call: &ShownCall,
        answer: ClientAnswer,
    ) -> Result<ClientDecision, ApiError> {
        if !self.home.runtime.device_active(device)? {
            return Err(ApiError::unauthorized(format!(
                "The device \"{device}\" was revoked."
            )));
        }
        let waiting = self
            .pending(Some(&call.execution_id))?
            .into_iter()
            .find(|p| p.seq == call.seq);
        if let Some(action) = &waiting
            && self.confirm_in_app(action)
        {
            return Err(ApiError::unauthorized(format!(
                "{}.{} is to be decided in the app (confirmInApp), not from a phone.",
                action.connector, action.method
            )));
        }
        self.answer_as(call, &Answerer::Device(device.to_owned()), answer)
            .await
    }

    /// A link that opens `call`'s card on a paired phone, for [`LINK_VALID`], once.
    pub fn sign_link(&self, call: &ShownCall) -> Result<SignedLink, ApiError> {
        let expires_at = self.now_ms() + LINK_VALID.as_millis() as i64;
        let nonce = random_hex(16);
        let signature = hex(&link_mac(self.dir(), call, expires_at, &nonce)?
            .finalize()
            .into_bytes());
        Ok(SignedLink {
            call: call.clone(),
            expires_at,
            nonce,
            signature,
        })
    }

    /// Checks a link's signature, its time and that it was not followed before (then marks it followed):
    /// the call it opens. A link only opens a card; it decides nothing.
    pub fn follow_link(&self, link: &SignedLink) -> Result<ShownCall, ApiError> {
        let signature = unhex(&link.signature)
            .ok_or_else(|| ApiError::unauthorized("This link's signature is malformed."))?;
        link_mac(self.dir(), &link.call, link.expires_at, &link.nonce)?
            .verify_slice(&signature)
            .map_err(|_| {
                ApiError::unauthorized("This link was not signed by this console, or was altered.")
            })?;
        if link.expires_at <= self.now_ms() {
            return Err(ApiError::unauthorized(
                "This link expired (links last 15 minutes); the queue still shows the call.",
            ));
        }
        if !self.home.runtime.follow_link(&link.nonce)? {
            return Err(ApiError::unauthorized(
                "This link was opened before; the queue still shows the call.",
            ));
        }
        Ok(link.call.clone())
    }
}

type LinkMac = hmac::Hmac<sha2::Sha256>;

fn link_mac(
    dir: &Path,
    call: &ShownCall,
    expires_at: i64,
    nonce: &str,
) -> Result<LinkMac, ApiError> {
    let key = link_key(dir)?;
    let mut mac = LinkMac::new_from_slice(&key).map_err(|e| ApiError::internal(e.to_string()))?;
    mac.update(SignedLink::signed_text(call, expires_at, nonce).as_bytes());
    Ok(mac)
}

/// The key links are signed with: 32 random bytes in `phone/link.key`, owner-only, made on first use.
fn link_key(dir: &Path) -> Result<Vec<u8>, ApiError> {
    let folder = dir.join("phone");
    let path = folder.join("link.key");
    if let Ok(text) = std::fs::read_to_string(&path)
        && let Some(key) = unhex(text.trim()).filter(|k| k.len() == 32)
    {
        return Ok(key);
    }
    let failed = |e: std::io::Error| ApiError::internal(format!("{}: {e}", path.display()));
    connectors::owner_only::create_dir_all(&folder).map_err(failed)?;
    match connectors::owner_only::create(&path, random_hex(32).as_bytes()) {
        // Two processes making it at once: the file that landed is the key.
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(failed(e)),
        _ => {}
    }
    let text = std::fs::read_to_string(&path).map_err(failed)?;
    unhex(text.trim())
        .filter(|k| k.len() == 32)
        .ok_or_else(|| ApiError::internal(format!("{} is not a link key", path.display())))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}
