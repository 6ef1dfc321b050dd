//! The certificate authority a data directory keeps for its phone page (docs/phone.md, "Certificates"): made
//! once, its key owner-only in `phone/`, its fingerprint shown when pairing so a person can check what the
//! phone's browser shows; and the server certificate it signs, afresh at every start, for the names and
//! addresses the page is reached by.

use crate::PhoneError;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use sha2::{Digest, Sha256};
use std::net::IpAddr;
use std::path::Path;

/// A server certificate lives a year: browsers refuse longer ones from some authorities, and a restart makes a
/// new one.
const SERVER_DAYS: i64 = 365;

/// The authority: its certificate (PEM and DER) and the issuer that signs with its key.
pub struct Authority {
    pub certificate_pem: String,
    der: Vec<u8>,
    issuer: Issuer<'static, KeyPair>,
}

/// A server certificate and its key, PEM, with the authority's certificate after it (the chain).
pub struct ServerCertificate {
    pub chain_pem: String,
    pub key_pem: String,
}

fn failed(what: &str) -> impl Fn(rcgen::Error) -> PhoneError + '_ {
    move |e| PhoneError::Certificate(format!("{what}: {e}"))
}

fn io_failed(path: &Path) -> impl Fn(std::io::Error) -> PhoneError + '_ {
    move |e| PhoneError::Certificate(format!("{}: {e}", path.display()))
}

fn authority_params() -> Result<CertificateParams, PhoneError> {
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(failed("authority"))?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "Codemode Console phone page");
    name.push(DnType::OrganizationName, "Codemode Console (this computer)");
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    Ok(params)
}

impl Authority {
    /// The authority of the data directory `dir`: read from `phone/ca.pem` and `phone/ca.key`, or made there
    /// (owner-only) the first time.
    pub fn of(dir: &Path) -> Result<Authority, PhoneError> {
        let folder = dir.join("phone");
        let (cert_path, key_path) = (folder.join("ca.pem"), folder.join("ca.key"));
        if !key_path.exists() {
            make(&folder, &cert_path, &key_path)?;
        }
        let key_pem = std::fs::read_to_string(&key_path).map_err(io_failed(&key_path))?;
        let certificate_pem = std::fs::read_to_string(&cert_path).map_err(io_failed(&cert_path))?;
        let key = KeyPair::from_pem(&key_pem).map_err(failed("phone/ca.key"))?;
        let der = pem_der(&certificate_pem).ok_or_else(|| {
            PhoneError::Certificate(format!("{} holds no certificate", cert_path.display()))
        })?;
        // The issuer is the authority's name and key: what a server certificate it signs names and is
        // checked against.
        let issuer = Issuer::new(authority_params()?, key);
        Ok(Authority {
            certificate_pem,
            der,
            issuer,
        })
    }

    /// SHA-256 of the authority's certificate, as browsers show it (`AB:CD:…`).
    pub fn fingerprint(&self) -> String {
        Sha256::digest(&self.der)
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect::<Vec<_>>()
            .join(":")
    }

    /// A server certificate for `names` (DNS names) and `addresses`, valid from yesterday for a year.
    pub fn server_certificate(
        &self,
        names: &[String],
        addresses: &[IpAddr],
        today: Day,
    ) -> Result<ServerCertificate, PhoneError> {
        let mut params = CertificateParams::new(names.to_vec()).map_err(failed("server"))?;
        params
            .subject_alt_names
            .extend(addresses.iter().map(|a| SanType::IpAddress(*a)));
        let mut name = DistinguishedName::new();
        name.push(DnType::CommonName, "Codemode Console");
        params.distinguished_name = name;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let (year, month, day) = today.plus(-1).civil();
        params.not_before = rcgen::date_time_ymd(year, month, day);
        let (year, month, day) = today.plus(SERVER_DAYS).civil();
        params.not_after = rcgen::date_time_ymd(year, month, day);
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().map_err(failed("server key"))?;
        let certificate = params
            .signed_by(&key, &self.issuer)
            .map_err(failed("server certificate"))?;
        Ok(ServerCertificate {
            chain_pem: format!("{}{}", certificate.pem(), self.certificate_pem),
            key_pem: key.serialize_pem(),
        })
    }
}

fn make(folder: &Path, cert_path: &Path, key_path: &Path) -> Result<(), PhoneError> {
    connectors::owner_only::create_dir_all(folder).map_err(io_failed(folder))?;
    let key = KeyPair::generate().map_err(failed("authority key"))?;
    let certificate = authority_params()?
        .self_signed(&key)
        .map_err(failed("authority certificate"))?;
    // The certificate first: a key without its certificate would be made again; a certificate without its
    // key is replaced with the key.
    connectors::owner_only::replace(cert_path, certificate.pem().as_bytes())
        .map_err(io_failed(cert_path))?;
    connectors::owner_only::replace(key_path, key.serialize_pem().as_bytes())
        .map_err(io_failed(key_path))
}

/// The DER of the first certificate in `pem`.
fn pem_der(pem: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    let body: String = pem
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN CERTIFICATE-----"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    base64::engine::general_purpose::STANDARD.decode(body).ok()
}

/// A calendar day (UTC), for certificate validity: days since 1970-01-01.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Day(pub i64);

impl Day {
    pub fn of_epoch_ms(ms: i64) -> Day {
        Day(ms.div_euclid(86_400_000))
    }

    fn plus(self, days: i64) -> Day {
        Day(self.0 + days)
    }

    /// Year, month and day of this day (the proleptic Gregorian calendar's civil-from-days).
    fn civil(self) -> (i32, u8, u8) {
        let z = self.0 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        (year, month, day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_calendar_dates() {
        assert_eq!(Day(0).civil(), (1970, 1, 1));
        assert_eq!(Day(20_793).civil(), (2026, 12, 6));
        assert_eq!(Day(11_016).civil(), (2000, 2, 29));
        assert_eq!(
            Day::of_epoch_ms(1_796_601_600_000 + 1).civil(),
            (2026, 12, 7)
        );
    }
}
