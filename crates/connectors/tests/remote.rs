//! Remote MCP servers over HTTPS and OAuth, against the official Python SDK behind a TLS listener with a CA
//! the test makes (`tests/servers/remote_mcp.py`, `make_certs.sh`): a private CA trusted per connector, a wrong
//! CA refused with the connector, host and reason named, and the whole sign-in (discovery, registration, PKCE,
//! the loopback redirect) driven headlessly, then a refresh before expiry and a revoked sign-in.

use codemode::Runtime;
use connectors::{Connectors, remote};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

mod support;
use support::{RemoteServer, scratch};

async fn open(dir: &Path, entry: Value) -> (Runtime, Connectors) {
    let text = json!({"mcpServers": {"remote": entry}}).to_string();
    support::open_runtime(dir, &text).await
}

async fn run(runtime: &Runtime, code: &str) -> Value {
    let outcome = runtime.execute(code).await.expect("execute");
    serde_json::to_value(&outcome).expect("outcome")
}

/// What a person's browser does with the authorization address: the test server approves at once and
/// redirects to the loopback address, which is then visited.
fn browse(address: &str, ca: &Path) {
    let address = address.to_owned();
    let ca = std::fs::read(ca).expect("ca");
    tokio::spawn(async move {
        let client = reqwest::Client::builder()
            .tls_certs_merge(reqwest::Certificate::from_pem_bundle(&ca).expect("pem"))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let answer = client.get(&address).send().await.expect("authorize");
        assert_eq!(answer.status().as_u16(), 302, "the authorization redirects");
        let back = answer.headers()["location"]
            .to_str()
            .expect("location")
            .to_owned();
        assert!(back.starts_with("http://127.0.0.1:"), "{back}");
        let page = client.get(&back).send().await.expect("callback");
        assert!(page.text().await.unwrap().contains("Signed in"));
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn https_with_the_connectors_ca_and_certificate_errors_that_say_why() {
    let dir = scratch("https");
    let server = RemoteServer::start(&dir, &[]);
    assert!(
        server.url.starts_with("https://localhost:"),
        "{}",
        server.url
    );
    let ca = server.certs.join("ca.pem");

    let (runtime, built) = open(&dir, json!({"url": server.url, "caFile": ca})).await;
    let done = run(&runtime, r#"async () => remote.echo({ text: "over TLS" })"#).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"], "over TLS");
    built.shutdown().await;

    // The system's store alone does not know the test CA; an unrelated CA does not either.
    for entry in [
        json!({"url": server.url}),
        json!({"url": server.url, "caFile": server.certs.join("other-ca.pem")}),
    ] {
        let (runtime, built) = open(&dir, entry).await;
        let failed = run(&runtime, r#"async () => remote.echo({ text: "x" })"#).await;
        let error = failed["error"].as_str().unwrap_or_default();
        eprintln!("{error}");
        assert!(
            error.contains("MCP server \"remote\" failed to start")
                && error.contains("the certificate of localhost was refused")
                && error.contains("signed by an authority this machine does not trust"),
            "{failed}"
        );
        built.shutdown().await;
    }

    // Nothing listening: the address is named.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (runtime, built) = open(
        &dir,
        json!({"url": format!("https://localhost:{closed}/mcp")}),
    )
    .await;
    let failed = run(&runtime, r#"async () => remote.echo({ text: "x" })"#).await;
    let error = failed["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!("cannot connect to https://localhost:{closed}/mcp")),
        "{failed}"
    );
    eprintln!("{error}");
    built.shutdown().await;

    // A caFile that is not there, or holds no certificate, is said as such.
    let (runtime, _built) = open(&dir, json!({"url": server.url, "caFile": "missing.pem"})).await;
    let failed = run(&runtime, r#"async () => remote.echo({ text: "x" })"#).await;
    assert!(
        failed["error"]
            .as_str()
            .unwrap_or_default()
            .contains("caFile"),
        "{failed}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn oauth_sign_in_refresh_before_expiry_and_a_revoked_sign_in() {
    let dir = scratch("oauth");
    let server = RemoteServer::start(&dir, &["--oauth"]);
    let ca = server.certs.join("ca.pem");
    let entry = json!({"url": server.url, "caFile": ca});
    let tokens = remote::credentials_path(&dir, "remote");

    // Before a sign-in: the call fails and says how to sign in.
    let (runtime, built) = open(&dir, entry.clone()).await;
    let failed = run(&runtime, r#"async () => remote.whoami({})"#).await;
    let error = failed["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("needs a sign-in")
            && error.contains("codemode login remote")
            && error.contains("Sign in"),
        "{failed}"
    );

    // The sign-in, as `codemode login` runs it, with the test as the browser.
    remote::sign_in("remote", &server.url, Some(&ca), None, &tokens, |address| {
        assert!(address.contains("code_challenge_method=S256"), "{address}");
        browse(address, &ca);
    })
    .await
    .expect("signed in");
    let mode = std::fs::metadata(&tokens)
        .expect("tokens")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "tokens are owner-only");
    let events = server.events();
    let client_id = events
        .iter()
        .find(|e| e["event"] == "registered")
        .map(|e| e["client_id"].clone())
        .expect("registered dynamically");

    // The next call starts the server again, now with the token.
    let done = run(&runtime, r#"async () => remote.whoami({})"#).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"], client_id);

    // An hour later (the kept time of issue moved back, no sleeping): refreshed before it is used.
    let mut kept: Value = serde_json::from_slice(&std::fs::read(&tokens).unwrap()).unwrap();
    let received = kept["token_received_at"].as_u64().expect("received at");
    kept["token_received_at"] = json!(received - 3600);
    std::fs::write(&tokens, serde_json::to_vec(&kept).unwrap()).unwrap();
    let done = run(
        &runtime,
        r#"async () => remote.echo({ text: "after an hour" })"#,
    )
    .await;
    assert_eq!(done["result"], "after an hour", "{done}");
    assert!(
        server
            .events()
            .iter()
            .any(|e| e["event"] == "token" && e["grant"] == "refresh_token"),
        "the token was refreshed: {:?}",
        server.events()
    );

    // Access revoked at the provider: the call fails and says to sign in again; so does the next start.
    reqwest::Client::builder()
        .tls_certs_merge(
            reqwest::Certificate::from_pem_bundle(&std::fs::read(&ca).unwrap()).unwrap(),
        )
        .build()
        .unwrap()
        .post(server.url.replace("/mcp", "/admin/revoke-all"))
        .send()
        .await
        .expect("revoke");
    for _ in 0..2 {
        let failed = run(&runtime, r#"async () => remote.whoami({})"#).await;
        let error = failed["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("refused its sign-in") && error.contains("codemode login remote"),
            "{failed}"
        );
    }

    // Signing out forgets the tokens.
    assert!(remote::sign_out(&tokens).expect("signed out"));
    assert!(!tokens.exists());
    built.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_registered_client_signs_in_with_its_secret_and_scopes_and_refreshes_with_them() {
    const SECRET: &str = "client-s3cret-7a41";
    let dir = scratch("preregistered");
    let server = RemoteServer::start(
        &dir,
        &["--oauth", "--client", &format!("console-app:{SECRET}")],
    );
    let ca = server.certs.join("ca.pem");
    let oauth =
        json!({"clientId": "console-app", "clientSecret": SECRET, "scopes": ["notes:read"]});
    let entry = json!({"url": server.url, "caFile": ca, "oauth": oauth});
    let tokens = remote::credentials_path(&dir, "remote");
    let text = json!({"mcpServers": {"remote": entry}}).to_string();
    let parsed = connectors::config::parse(&text, &dir.join("connectors.json"), &dir).unwrap();
    assert!(
        !format!("{parsed:?}").contains(SECRET),
        "the secret stays out of debug prints"
    );
    let connectors::config::ConnectorKind::Http { oauth, .. } = &parsed.connectors[0].kind else {
        panic!("a url connector");
    };
    remote::sign_in(
        "remote",
        &server.url,
        Some(&ca),
        oauth.as_ref(),
        &tokens,
        |address| {
            assert!(
                address.contains("client_id=console-app") && address.contains("scope=notes%3Aread"),
                "{address}"
            );
            browse(address, &ca);
        },
    )
    .await
    .expect("signed in");
    assert!(
        !server.events().iter().any(|e| e["event"] == "registered"),
        "no dynamic registration: {:?}",
        server.events()
    );
    let (runtime, built) = open(&dir, entry).await;
    let done = run(&runtime, r#"async () => remote.whoami({})"#).await;
    assert_eq!(done["result"], "console-app", "{done}");

    // The refresh of a confidential client needs its secret, which the kept tokens do not hold.
    let mut kept: Value = serde_json::from_slice(&std::fs::read(&tokens).unwrap()).unwrap();
    assert!(
        !kept.to_string().contains(SECRET),
        "the secret is not kept with the tokens"
    );
    kept["token_received_at"] = json!(kept["token_received_at"].as_u64().unwrap() - 3600);
    std::fs::write(&tokens, serde_json::to_vec(&kept).unwrap()).unwrap();
    let done = run(&runtime, r#"async () => remote.whoami({})"#).await;
    assert_eq!(done["result"], "console-app", "{done}");
    assert!(
        server
            .events()
            .iter()
            .any(|e| e["event"] == "token" && e["grant"] == "refresh_token"),
        "{:?}",
        server.events()
    );
    built.shutdown().await;
}
