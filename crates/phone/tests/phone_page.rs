//! The phone page as a phone's browser meets it (docs/phone.md): over HTTPS from the data directory's own
//! authority, nothing but pairing without a paired device's cookie, a decision bound to the call it showed
//! and recorded as the device's, and signed links that open a card once. Each test serves a real page on a
//! free port and talks to it with an HTTP client that trusts only that authority.

use codemode::Actor;
use codemode::clock::Clock;
use codemode_api::{Api, FollowingApi, ShownCall};
use codemode_phone::{Authority, PhoneServer};
use connectors::HomeOptions;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

#[path = "../../api/tests/support/mod.rs"]
mod support;
use support::worker;

const COOKIE: &str = "codemode_device";

/// Time the tests move by hand: codes and links expire without sleeping.
struct HandClock(AtomicI64);

impl Clock for HandClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl HandClock {
    fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

struct Phone {
    api: Arc<FollowingApi>,
    server: PhoneServer,
    clock: Arc<HandClock>,
    http: reqwest::Client,
    dir: PathBuf,
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("codemode-phone-{name}-{}", uuid_like()));
    std::fs::create_dir_all(&dir).expect("a data directory");
    dir
}

fn uuid_like() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// A client that trusts `dir`'s authority and nothing else, and follows no redirect (the tests read them).
fn client_trusting(dir: &Path) -> reqwest::Client {
    let ca = std::fs::read(dir.join("phone").join("ca.pem")).expect("the authority's certificate");
    reqwest::Client::builder()
        .tls_certs_only(reqwest::Certificate::from_pem_bundle(&ca).expect("pem"))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client")
}

async fn serve(name: &str) -> Phone {
    serve_with(name, None).await
}

/// A fresh data directory with `config` as its `connectors.json` (the default one when `None`), and the hand
/// clock its options carry. The clock starts at now: the page's certificate is dated by it, and the client
/// checks the certificate against now.
fn data_dir(name: &str, config: Option<&str>) -> (PathBuf, Arc<HandClock>, HomeOptions) {
    let dir = fresh_dir(name);
    if let Some(config) = config {
        std::fs::write(dir.join("connectors.json"), config).expect("connectors.json");
    }
    let clock = Arc::new(HandClock(AtomicI64::new(
        codemode::clock::SystemClock.now_ms(),
    )));
    let options = HomeOptions {
        worker: Some(worker()),
        clock: Some(clock.clone()),
        ..HomeOptions::default()
    };
    (dir, clock, options)
}

/// A page over a data directory whose `connectors.json` is `config` (the default one when `None`).
async fn serve_with(name: &str, config: Option<&str>) -> Phone {
    let (dir, clock, options) = data_dir(name, config);
    let api = Api::open(&dir, options.clone()).await.expect("opens");
    let api = Arc::new(FollowingApi::from_api(api, options));
    let server = PhoneServer::start(api.clone(), "127.0.0.1:0".parse().unwrap())
        .await
        .expect("serves");
    let http = client_trusting(&dir);
    Phone {
        api,
        server,
        clock,
        http,
        dir,
    }
}

impl Phone {
    async fn api(&self) -> Arc<Api> {
        self.api.current().await.expect("the api")
    }

    /// `localhost`, as the certificate names it.
    fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.server.local_addr.port())
    }

    fn origin(&self) -> String {
        format!("https://localhost:{}", self.server.local_addr.port())
    }

    async fn post_code(&self, code: &str) -> reqwest::Response {
        self.http
            .post(self.url("/pair"))
            .form(&[("code", code)])
            .send()
            .await
            .expect("answers")
    }

    /// Pairs a device named `name` through the page, as a phone does: the token its cookie holds.
    async fn pair(&self, name: &str) -> String {
        let pairing = self.api().await.pair_device(name).expect("a code");
        device_token(self.post_code(&pairing.code).await)
    }

    async fn get(&self, token: Option<&str>, path: &str) -> reqwest::Response {
        let mut request = self.http.get(self.url(path));
        if let Some(token) = token {
            request = request.header("cookie", format!("{COOKIE}={token}"));
        }
        request.send().await.expect("answers")
    }

    async fn decide(&self, token: &str, body: Value) -> (StatusCode, Value) {
        let response = self
            .http
            .post(self.url("/api/decide"))
            .header("cookie", format!("{COOKIE}={token}"))
            .header("origin", self.origin())
            .json(&body)
            .send()
            .await
            .expect("answers");
        let status = response.status();
        (status, response.json().await.expect("JSON"))
    }

    /// A run paused on a write of `path`: its call as the queue shows it.
    async fn paused_write(&self, path: &str) -> ShownCall {
        let code = format!(
            "async () => {{ await files.write_file({{ path: {path:?}, content: \"from the phone\" }}); return \"written\"; }}"
        );
        let outcome = self.api().await.run(&code, "agent").await.expect("runs");
        assert_eq!(outcome.status(), "paused", "{outcome:?}");
        let action = self
            .api()
            .await
            .pending(Some(outcome.execution_id()))
            .expect("pending")
            .remove(0);
        ShownCall {
            execution_id: action.execution_id,
            seq: action.seq,
            digest: action.digest,
        }
    }
}

/// The device token a successful pairing sets, checking the cookie's flags.
fn device_token(response: reqwest::Response) -> String {
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = response
        .headers()
        .get("set-cookie")
        .expect("a cookie")
        .to_str()
        .unwrap()
        .to_owned();
    for flag in ["HttpOnly", "Secure", "SameSite=Strict"] {
        assert!(cookie.contains(flag), "{cookie}");
    }
    cookie
        .split(';')
        .next()
        .and_then(|pair| pair.strip_prefix(&format!("{COOKIE}=")))
        .expect("the device's token")
        .to_owned()
}

fn decision(call: &ShownCall, answer: &str) -> Value {
    json!({"executionId": call.execution_id, "seq": call.seq, "digest": call.digest, "decision": answer})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_phone_pairs_with_its_code_and_sees_the_queue() {
    let phone = serve("pairs").await;
    let call = phone.paused_write("notes.txt").await;
    let pairing = phone.api().await.pair_device("Pixel 8").unwrap();

    // The link the computer shows opens a form holding the code, beside the authority's fingerprint.
    let page = phone
        .get(None, &format!("/pair?code={}", pairing.code))
        .await
        .text()
        .await
        .unwrap();
    let fingerprint = Authority::of(&phone.dir).unwrap().fingerprint();
    assert!(page.contains(&fingerprint), "{page}");
    assert!(
        page.contains(&format!("value=\"{}\"", pairing.code)),
        "{page}"
    );

    // Typed by hand, case and dashes do not matter.
    let typed = format!("{}-{}", &pairing.code[..5], &pairing.code[5..]).to_lowercase();
    let response = phone.post_code(&typed).await;
    assert_eq!(response.headers()["location"], "/");
    let token = device_token(response);

    let queue: Value = phone
        .get(Some(&token), "/api/queue")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(queue["device"], "Pixel 8");
    assert_eq!(
        queue["queue"][0]["action"]["executionId"],
        call.execution_id.as_str()
    );
    assert_eq!(queue["queue"][0]["action"]["digest"], call.digest.as_str());
    assert_eq!(queue["queue"][0]["confirmInApp"], false);
    let devices = phone.api().await.devices().unwrap();
    assert_eq!(devices.len(), 1);
    assert_eq!(devices[0].name, "Pixel 8");

    // The page itself, its script and the app's own widgets load for the paired phone.
    for path in ["/", "/phone.js", "/widgets.js", "/style.css", "/phone.css"] {
        let response = phone.get(Some(&token), path).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert_eq!(response.headers()["x-content-type-options"], "nosniff");
        assert!(
            response.headers()["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("default-src 'none'")
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_paired_token_nothing_but_pairing_answers() {
    let phone = serve("refuses").await;
    let call = phone.paused_write("secret.txt").await;
    let other = serve("other-console").await;
    let token_elsewhere = other.pair("Pixel 8").await;

    for token in [
        None,
        Some(""),
        Some("0123abcd"),
        Some(token_elsewhere.as_str()),
    ] {
        for path in ["/", "/phone.js", "/widgets.js", "/api/queue", "/api/events"] {
            let response = phone.get(token, path).await;
            assert_eq!(
                response.status(),
                StatusCode::UNAUTHORIZED,
                "{path} with {token:?}"
            );
            let body = response.text().await.unwrap();
            assert!(!body.contains("secret.txt"), "{path}: {body}");
        }
        let mut request = phone
            .http
            .post(phone.url("/api/decide"))
            .json(&decision(&call, "approve"));
        if let Some(token) = token {
            request = request.header("cookie", format!("{COOKIE}={token}"));
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        let refusal: Value = response.json().await.unwrap();
        assert_eq!(refusal["code"], "unauthorized");
    }
    assert_eq!(
        phone.api().await.pending(None).unwrap().len(),
        1,
        "nothing was decided"
    );
    // A person who opens the page unpaired is told how to pair.
    let page = phone.get(None, "/").await.text().await.unwrap();
    assert!(page.contains("codemode devices pair NAME"), "{page}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_code_pairs_once_never_after_ten_minutes_and_never_when_made_up() {
    let phone = serve("codes").await;
    let api = phone.api().await;

    let made_up = phone.post_code("ABCDEFGHJK").await;
    assert_eq!(made_up.status(), StatusCode::UNAUTHORIZED);
    assert!(made_up.headers().get("set-cookie").is_none());
    assert!(
        made_up
            .text()
            .await
            .unwrap()
            .contains("not one this console gave")
    );

    let once = api.pair_device("tablet").unwrap();
    assert_eq!(
        phone.post_code(&once.code).await.status(),
        StatusCode::SEE_OTHER
    );
    let again = phone.post_code(&once.code).await;
    assert_eq!(again.status(), StatusCode::UNAUTHORIZED);
    assert!(again.text().await.unwrap().contains("used already"));

    let late = api.pair_device("phone").unwrap();
    phone.clock.advance(10 * 60 * 1000 + 1);
    let response = phone.post_code(&late.code).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(response.headers().get("set-cookie").is_none());
    assert!(response.text().await.unwrap().contains("expired"));

    // One name, one paired device: a second "tablet" is refused until the first is revoked.
    let refused = api.pair_device("tablet").unwrap_err();
    assert_eq!(refused.code.to_string(), "invalid_args");
    api.revoke_device("tablet").unwrap();
    assert!(api.pair_device("tablet").is_ok());
}

#[tokio::test(flavor = "multi_thread")]
async fn guessing_codes_is_cut_off_after_five_tries_a_minute() {
    let phone = serve("guessing").await;
    for guess in 0..5 {
        let response = phone.post_code(&format!("GUESS{guess:05}")).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    // The right code does not get through either while the address is cut off.
    let real = phone.api().await.pair_device("Pixel 8").unwrap();
    let cut_off = phone.post_code(&real.code).await;
    assert_eq!(cut_off.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(cut_off.headers().get("set-cookie").is_none());
    phone.clock.advance(60_000);
    assert_eq!(
        phone.post_code(&real.code).await.status(),
        StatusCode::SEE_OTHER
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_from_the_phone_runs_the_call_once_and_names_the_device() {
    let phone = serve("approves").await;
    let token = phone.pair("Pixel 8").await;
    let call = phone.paused_write("approved.txt").await;

    let (status, answer) = phone.decide(&token, decision(&call, "approve")).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["outcome"]["status"], "completed");
    assert_eq!(answer["outcome"]["result"], "written");
    let written = phone.dir.join("workspace").join("approved.txt");
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "from the phone");

    let run = phone.api().await.execution(&call.execution_id).unwrap();
    let decided = run.log[0].decision.as_ref().expect("a decision");
    assert_eq!(decided.by, Actor::Device);
    assert_eq!(decided.device.as_deref(), Some("Pixel 8"));

    // The same tap again (a second phone, a double tap) decides nothing more.
    let (status, again) = phone.decide(&token, decision(&call, "approve")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    assert_eq!(again["code"], "stale");
    let run = phone.api().await.execution(&call.execution_id).unwrap();
    assert_eq!(run.log.len(), 1, "the write ran once");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejection_from_the_phone_tells_the_agent_why() {
    let phone = serve("rejects").await;
    let token = phone.pair("Pixel 8").await;
    let call = phone.paused_write("rejected.txt").await;
    let mut body = decision(&call, "reject");
    body["reason"] = json!("not on a Sunday");
    let (status, answer) = phone.decide(&token, body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    // The agent reads the rejection as the run's error, reason included (as from every other surface).
    assert_eq!(answer["outcome"]["status"], "error");
    assert_eq!(
        answer["outcome"]["error"],
        "Action files.write_file rejected by user: not on a Sunday"
    );
    let run = phone.api().await.execution(&call.execution_id).unwrap();
    assert_eq!(run.status, codemode::ExecutionStatus::Rejected);
    assert_eq!(
        run.error.as_deref(),
        Some("Action files.write_file rejected by user: not on a Sunday")
    );
    assert!(!phone.dir.join("workspace").join("rejected.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_on_what_the_phone_did_not_show_is_refused() {
    let phone = serve("bound").await;
    let token = phone.pair("Pixel 8").await;
    let call = phone.paused_write("bound.txt").await;

    // Another call's digest: the phone showed something else.
    let mut changed = call.clone();
    changed.digest = "0".repeat(64);
    let (status, answer) = phone.decide(&token, decision(&changed, "approve")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{answer}");
    assert_eq!(answer["code"], "stale");

    // Another site posting with the phone's cookie, or a form instead of JSON, is refused before anything.
    let cross = phone
        .http
        .post(phone.url("/api/decide"))
        .header("cookie", format!("{COOKIE}={token}"))
        .header("origin", "https://elsewhere.example")
        .json(&decision(&call, "approve"))
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), StatusCode::FORBIDDEN);
    let form = phone
        .http
        .post(phone.url("/api/decide"))
        .header("cookie", format!("{COOKIE}={token}"))
        .header("origin", phone.origin())
        .form(&[
            ("executionId", call.execution_id.as_str()),
            ("decision", "approve"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(
        phone.api().await.pending(None).unwrap().len(),
        1,
        "still waiting"
    );
    assert!(!phone.dir.join("workspace").join("bound.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_to_be_confirmed_in_the_app_is_shown_but_not_decided_on_the_phone() {
    let phone = serve("in-app").await;
    let token = phone.pair("Pixel 8").await;
    let rule = codemode::Rule::from_value(json!({
        "id": "payments-in-app", "effect": "ask", "call": "files.write_file", "confirmInApp": true
    }))
    .unwrap();
    phone.api().await.add_rule(rule, Actor::Console).unwrap();
    let call = phone.paused_write("in-app.txt").await;
    let queue: Value = phone
        .get(Some(&token), "/api/queue")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(queue["queue"][0]["confirmInApp"], true);
    let (status, answer) = phone.decide(&token, decision(&call, "approve")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    assert!(answer["message"].as_str().unwrap().contains("in the app"));
    assert_eq!(phone.api().await.pending(None).unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_phone_is_refused_at_once_and_its_stream_ends() {
    let phone = serve("revoked").await;
    let token = phone.pair("Pixel 8").await;
    let call = phone.paused_write("revoked.txt").await;
    let mut events = phone.get(Some(&token), "/api/events").await;
    assert_eq!(events.status(), StatusCode::OK);
    let first = events.chunk().await.unwrap().expect("a first event");
    assert!(String::from_utf8_lossy(&first).contains("event: changed"));

    phone.api().await.revoke_device("Pixel 8").unwrap();
    assert_eq!(
        phone.get(Some(&token), "/api/queue").await.status(),
        StatusCode::UNAUTHORIZED
    );
    let (status, _) = phone.decide(&token, decision(&call, "approve")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // The revocation is a change: the stream wakes, finds the device revoked, and ends.
    let rest = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        let mut rest = Vec::new();
        while let Some(chunk) = events.chunk().await.unwrap_or(None) {
            rest.extend_from_slice(&chunk);
        }
        rest
    })
    .await
    .expect("the stream ends");
    assert!(!String::from_utf8_lossy(&rest).contains("still here"));
    let devices = phone.api().await.devices().unwrap();
    assert!(devices[0].revoked_at.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_change_stream_tells_the_phone_when_a_call_starts_waiting() {
    let phone = serve("stream").await;
    let token = phone.pair("Pixel 8").await;
    let mut events = phone.get(Some(&token), "/api/events").await;
    assert_eq!(events.headers()["content-type"], "text/event-stream");
    events.chunk().await.unwrap().expect("the first event");
    phone.paused_write("streamed.txt").await;
    let next = tokio::time::timeout(std::time::Duration::from_secs(15), events.chunk())
        .await
        .expect("a change arrives before the keep-alive")
        .unwrap()
        .expect("an event");
    assert!(String::from_utf8_lossy(&next).contains("event: changed"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_link_opens_its_card_once_and_only_as_signed() {
    let phone = serve("links").await;
    let token = phone.pair("Pixel 8").await;
    let call = phone.paused_write("linked.txt").await;
    let api = phone.api().await;

    // A link opens nothing for a browser that is not paired, and is not used up by it.
    let link = api.sign_link(&call).unwrap();
    let unpaired = phone.get(None, &format!("/link?{}", link.query())).await;
    assert_eq!(unpaired.status(), StatusCode::UNAUTHORIZED);

    let opened = phone
        .get(Some(&token), &format!("/link?{}", link.query()))
        .await;
    assert_eq!(opened.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        opened.headers()["location"],
        format!("/#call={}:{}:{}", call.execution_id, call.seq, call.digest).as_str()
    );
    let replayed = phone
        .get(Some(&token), &format!("/link?{}", link.query()))
        .await;
    assert_eq!(replayed.status(), StatusCode::UNAUTHORIZED);
    assert!(replayed.text().await.unwrap().contains("opened before"));

    // Pointed at another call, or at another digest, the signature no longer holds.
    let fresh = api.sign_link(&call).unwrap();
    for altered in [
        fresh.query().replace(&format!("seq={}", call.seq), "seq=7"),
        fresh.query().replace(&call.digest, &"f".repeat(64)),
        fresh.query().replace(
            &format!("exp={}", fresh.expires_at),
            &format!("exp={}", fresh.expires_at + 3_600_000),
        ),
    ] {
        let response = phone.get(Some(&token), &format!("/link?{altered}")).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{altered}");
        assert!(response.text().await.unwrap().contains("altered"));
    }
    // The unaltered one still opens: the refusals used nothing up.
    let opened = phone
        .get(Some(&token), &format!("/link?{}", fresh.query()))
        .await;
    assert_eq!(opened.status(), StatusCode::SEE_OTHER);

    let late = api.sign_link(&call).unwrap();
    phone.clock.advance(15 * 60 * 1000);
    let response = phone
        .get(Some(&token), &format!("/link?{}", late.query()))
        .await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(response.text().await.unwrap().contains("expired"));

    // A link opens a card; only the card's buttons decide.
    assert_eq!(api.pending(None).unwrap().len(), 1);
}

/// A webhook receiver: answers each request with the next status of `statuses` (then 200) and hands over
/// what it received: the request line and headers, and the body.
fn receiver(statuses: Vec<u16>) -> (String, std::sync::mpsc::Receiver<(String, String)>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (sent, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut statuses = statuses.into_iter();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let status = statuses.next().unwrap_or(200);
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
            let _ = sent.send((head, String::from_utf8_lossy(&body).into_owned()));
        }
    });
    (url, received)
}

fn with_webhooks(hooks: Value) -> String {
    json!({
        "runtime": { "webhooks": hooks },
        "connectors": { "files": { "type": "files", "root": "workspace" } }
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_waiting_call_is_announced_once_with_a_link_that_opens_its_card() {
    let (json_url, json_posts) = receiver(vec![]);
    let (ntfy_url, ntfy_posts) = receiver(vec![]);
    let (slack_url, slack_posts) = receiver(vec![]);
    let config = with_webhooks(json!([
        { "url": json_url, "format": "json" },
        { "url": ntfy_url, "format": "ntfy" },
        { "url": slack_url, "format": "slack" },
    ]));
    let phone = serve_with("webhooks", Some(&config)).await;
    let token = phone.pair("Pixel 8").await;
    let call = phone.paused_write("announced.txt").await;
    let wait = std::time::Duration::from_secs(20);

    // The server announces on its own when the run pauses.
    let (head, body) = json_posts
        .recv_timeout(wait)
        .expect("the json webhook is posted");
    assert!(head.starts_with("POST /hook"), "{head}");
    let posted: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(posted["event"], "paused");
    assert_eq!(posted["executionId"], call.execution_id.as_str());
    assert_eq!(posted["digest"], call.digest.as_str());
    assert_eq!(posted["summary"], "files.write_file awaits approval");
    assert!(
        posted["text"].as_str().unwrap().contains("announced.txt"),
        "{posted}"
    );
    let link = posted["link"].as_str().unwrap();
    assert!(link.starts_with(&format!(
        "https://127.0.0.1:{}/link?",
        phone.server.local_addr.port()
    )));

    let (head, body) = ntfy_posts
        .recv_timeout(wait)
        .expect("the ntfy webhook is posted");
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("title: files.write_file awaits approval"),
        "{head}"
    );
    assert!(head.contains("click: https://"), "{head}");
    assert!(body.contains("announced.txt"), "{body}");
    let (_, body) = slack_posts
        .recv_timeout(wait)
        .expect("the slack webhook is posted");
    let slack: Value = serde_json::from_str(&body).unwrap();
    assert!(
        slack["text"]
            .as_str()
            .unwrap()
            .contains("|Open on your phone>"),
        "{slack}"
    );

    // The link opens the card on the paired phone (by localhost, as the test's certificate check wants).
    let path = &link[link.find("/link?").unwrap()..];
    let opened = phone.get(Some(&token), path).await;
    assert_eq!(opened.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        opened.headers()["location"],
        format!("/#call={}:{}:{}", call.execution_id, call.seq, call.digest).as_str()
    );

    // Announced once: asking again sends nothing.
    let again = phone
        .api()
        .await
        .announce_waiting(&phone.server.serving.url)
        .await
        .unwrap();
    assert!(again.is_empty(), "{again:?}");
    assert!(
        json_posts
            .recv_timeout(std::time::Duration::from_millis(500))
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_webhook_that_fails_is_tried_again_later_and_then_no_more() {
    let (url, posts) = receiver(vec![503, 500]);
    let config = with_webhooks(json!([{ "url": url, "format": "json" }]));
    // Announced by hand here: the server's own announcing would race the test's clock.
    let (dir, clock, options) = data_dir("webhook-retries", Some(&config));
    let api = Api::open(&dir, options).await.expect("opens");
    let outcome = api
        .run(
            r#"async () => files.write_file({ path: "r.txt", content: "x" })"#,
            "agent",
        )
        .await
        .unwrap();
    assert_eq!(outcome.status(), "paused");

    // What each round of announcing attempts: (attempt, why it failed).
    let round = || async {
        api.announce_waiting("https://phone.example:8443")
            .await
            .unwrap()
            .into_iter()
            .map(|a| (a.attempt, a.error))
            .collect::<Vec<_>>()
    };
    let first = round().await;
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].0, 1);
    assert!(first[0].1.as_deref().unwrap().contains("503"), "{first:?}");
    posts
        .recv_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    assert!(round().await.is_empty(), "not due again before 30 seconds");
    clock.advance(30_000);
    let second = round().await;
    assert_eq!((second[0].0, second[0].1.is_some()), (2, true));
    clock.advance(60_000);
    assert_eq!(round().await, [(3, None)]);
    clock.advance(3_600_000);
    assert!(round().await.is_empty(), "announced: nothing more to send");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_webhook_that_is_not_a_url_is_refused_with_its_place() {
    let dir = fresh_dir("webhook-config");
    for (hook, says) in [
        (
            json!({ "url": "ftp://example.com/x", "format": "json" }),
            "http or https",
        ),
        (
            json!({ "url": "https://ntfy.sh/mine", "format": "pager" }),
            "\"pager\"",
        ),
        (
            json!({ "url": "https://ntfy.sh/mine", "secret": "x" }),
            "unknown field",
        ),
    ] {
        let config = serde_json::to_string_pretty(
            &serde_json::from_str::<Value>(&with_webhooks(json!([hook]))).unwrap(),
        )
        .unwrap();
        std::fs::write(dir.join("connectors.json"), &config).unwrap();
        let error = connectors::config::load(&dir).unwrap_err();
        assert!(error.message.contains(says), "{error}");
        // The file's line with "webhooks" on it, where a person looks.
        let line = config
            .lines()
            .position(|l| l.contains("\"webhooks\""))
            .unwrap()
            + 1;
        assert_eq!(error.line, line, "{error}");
    }
}
