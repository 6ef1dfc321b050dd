//! The page's routes (docs/phone.md, "Routes"): the pairing page and its form, the page and its scripts, the
//! queue and a card as JSON, decisions, the live change stream, and signed links. Every route but pairing
//! (and the stylesheets, which hold no data) first finds the paired device by its cookie.

use crate::limits::PairingAttempts;
use bytes::Bytes;
use codemode_api::{
    Api, ApiError, ClientAnswer, ClientDecision, ErrorCode, FollowingApi, ShownCall, SignedLink,
};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// The cookie that carries a device's token: HttpOnly, Secure, SameSite=Strict.
pub const COOKIE: &str = "codemode_device";

/// The largest request body read (a decision with a reason, a pairing form).
const MAX_BODY: usize = 64 * 1024;

/// How long the change stream waits before it says it is still there (proxies close silent streams).
const KEEPALIVE: Duration = Duration::from_secs(20);

/// What the page loads, built into the binary; `widgets.js` and `style.css` are the app's own, so a call
/// reads the same on the phone as in the window.
const INDEX_HTML: &str = include_str!("page/index.html");
const PHONE_JS: &str = include_str!("page/phone.js");
const PHONE_CSS: &str = include_str!("page/phone.css");
const PAIR_HTML: &str = include_str!("page/pair.html");
const WIDGETS_JS: &str = include_str!("../../../ui/src/widgets.js");
const STYLE_CSS: &str = include_str!("../../../ui/src/style.css");

pub struct State {
    api: Arc<FollowingApi>,
    attempts: Mutex<PairingAttempts>,
    fingerprint: String,
}

impl State {
    pub fn new(api: Arc<FollowingApi>, fingerprint: String) -> State {
        State {
            api,
            attempts: Mutex::new(PairingAttempts::default()),
            fingerprint,
        }
    }
}

/// A refused or failed request, answered as JSON to the page's scripts and as a page to a person.
struct Failure {
    status: StatusCode,
    error: ApiError,
}

impl From<ApiError> for Failure {
    fn from(error: ApiError) -> Self {
        let status = match error.code {
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::Stale | ErrorCode::Conflict => StatusCode::CONFLICT,
            ErrorCode::InvalidArgs => StatusCode::BAD_REQUEST,
            ErrorCode::Config | ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Handed => StatusCode::ACCEPTED,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Failure { status, error }
    }
}

impl Failure {
    fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Failure {
        Failure {
            status,
            error: ApiError::new(code, message),
        }
    }
}

pub async fn handle(
    state: Arc<State>,
    peer: IpAddr,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let page = !request.uri().path().starts_with("/api/");
    let response = match route(&state, peer, request).await {
        Ok(response) => response,
        Err(failure) if page => html(failure.status, &message_page(&failure.error)),
        Err(failure) => json_response(
            failure.status,
            &serde_json::to_value(&failure.error).unwrap_or_default(),
        ),
    };
    Ok(guarded(response))
}

async fn route(
    state: &State,
    peer: IpAddr,
    request: Request<Incoming>,
) -> Result<Response<Body>, Failure> {
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    // Without a device: the pairing page and form, and the stylesheets.
    match (&method, path.as_str()) {
        (&Method::GET, "/pair") => {
            let code = query(&request).remove("code").unwrap_or_default();
            return Ok(html(StatusCode::OK, &pair_page(&code, &state.fingerprint)));
        }
        (&Method::POST, "/pair") => return pair(state, peer, request).await,
        (&Method::GET, "/style.css") => return Ok(asset("text/css", STYLE_CSS)),
        (&Method::GET, "/phone.css") => return Ok(asset("text/css", PHONE_CSS)),
        _ => {}
    }
    let api = state.api.current().await?;
    let token = cookie(&request);
    let device = api.device_of(token.as_deref())?;
    match (&method, path.as_str()) {
        (&Method::GET, "/") => Ok(html(StatusCode::OK, INDEX_HTML)),
        (&Method::GET, "/phone.js") => Ok(asset("text/javascript", PHONE_JS)),
        (&Method::GET, "/widgets.js") => Ok(asset("text/javascript", WIDGETS_JS)),
        (&Method::GET, "/api/queue") => queue(&api, &device),
        (&Method::GET, "/api/card") => card(&api, &query(&request)).await,
        (&Method::POST, "/api/decide") => decide(&api, &device, request).await,
        (&Method::GET, "/api/events") => Ok(events(state.api.clone(), token.unwrap_or_default())),
        (&Method::GET, "/link") => link(&api, &query(&request)),
        _ => Err(Failure::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            format!("Nothing at {path}"),
        )),
    }
}

/// Redeems a pairing code posted by the pairing page: sets the device's cookie and opens the queue.
async fn pair(
    state: &State,
    peer: IpAddr,
    request: Request<Incoming>,
) -> Result<Response<Body>, Failure> {
    same_origin(&request)?;
    let api = state.api.current().await?;
    let admitted = state
        .attempts
        .lock()
        .map(|mut attempts| attempts.admit(peer, api.now_ms()))
        .unwrap_or(false);
    if !admitted {
        return Err(Failure::new(
            StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::Unauthorized,
            "Too many pairing attempts; wait a minute and try again.",
        ));
    }
    let body = read_body(request).await?;
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    let paired = api.redeem_pairing(form.get("code").map(String::as_str).unwrap_or_default())?;
    let mut response = redirect("/");
    let cookie = format!(
        "{COOKIE}={}; Path=/; Max-Age=31536000; HttpOnly; Secure; SameSite=Strict",
        paired.token
    );
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    Ok(response)
}

/// The queue as the phone lists it: the app's rows, with whether each may be decided from a phone.
fn queue(api: &Api, device: &str) -> Result<Response<Body>, Failure> {
    let queue: Vec<Value> = api
        .approval_queue()?
        .into_iter()
        .map(|call| {
            let confirm_in_app = api.confirm_in_app(&call.action);
            let mut row = serde_json::to_value(&call).unwrap_or_default();
            row["confirmInApp"] = json!(confirm_in_app);
            row
        })
        .collect();
    Ok(json_response(
        StatusCode::OK,
        &json!({"device": device, "now": api.now_ms(), "queue": queue}),
    ))
}

/// One waiting call whole, as the app's card shows it: every argument row, what it would change, the
/// program with the call's line, the source, the rule that asked, and when it stops waiting.
async fn card(api: &Api, query: &HashMap<String, String>) -> Result<Response<Body>, Failure> {
    let run = query.get("run").cloned().unwrap_or_default();
    let seq = query
        .get("seq")
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| Failure::from(ApiError::invalid_args("A card is named by run and seq.")))?;
    let card = api.approval_card(&run, seq)?;
    let preview = api.preview(&run, seq).await.ok().flatten();
    // Which call to connector.method this is in the program, for finding its line.
    let nth = card
        .execution
        .log
        .iter()
        .filter(|e| {
            e.seq < seq && e.connector == card.action.connector && e.method == card.action.method
        })
        .count();
    Ok(json_response(
        StatusCode::OK,
        &json!({
            "action": card.action,
            "arguments": card.arguments,
            "expiresAt": card.expires_at,
            "quorum": card.quorum,
            "now": api.now_ms(),
            "source": card.execution.source,
            "code": card.execution.code,
            "nth": nth,
            "confirmInApp": api.confirm_in_app(&card.action),
            "preview": preview,
        }),
    ))
}

/// A decision from the page, bound to the call it showed (run, seq, digest).
async fn decide(
    api: &Api,
    device: &str,
    request: Request<Incoming>,
) -> Result<Response<Body>, Failure> {
    same_origin(&request)?;
    let is_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        // A form posted from another site cannot send JSON without asking first, which this server refuses.
        return Err(Failure::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::InvalidArgs,
            "A decision is sent as application/json.",
        ));
    }
    let body = read_body(request).await?;
    let sent: Value = serde_json::from_slice(&body)
        .map_err(|e| Failure::from(ApiError::invalid_args(format!("A decision is JSON: {e}"))))?;
    let call: ShownCall = serde_json::from_value(sent.clone()).map_err(|e| {
        Failure::from(ApiError::invalid_args(format!(
            "A decision names executionId, seq and digest: {e}"
        )))
    })?;
    let answer = match sent["decision"].as_str() {
        Some("approve") => ClientAnswer::Approve,
        Some("reject") => ClientAnswer::Reject(sent["reason"].as_str().map(str::to_owned)),
        _ => {
            return Err(ApiError::invalid_args("decision is \"approve\" or \"reject\".").into());
        }
    };
    match api.answer_from_device(device, &call, answer).await? {
        ClientDecision::Decided(outcome) => Ok(json_response(
            StatusCode::OK,
            &json!({"result": "decided", "outcome": outcome}),
        )),
        ClientDecision::Stale(message) => Err(ApiError::stale(message).into()),
    }
}

/// `event: changed` whenever anything in the store changes (any process), and a comment every
/// [`KEEPALIVE`]; the stream ends when the device is revoked.
fn events(api: Arc<FollowingApi>, token: String) -> Response<Body> {
    let changed = Bytes::from_static(b"event: changed\ndata: {}\n\n");
    let stream = futures_util::stream::unfold(
        (api, token, None::<(i64, u64)>),
        move |(following, token, last)| {
            let changed = changed.clone();
            async move {
                let api = following.current().await.ok()?;
                api.device_of(Some(&token)).ok()?;
                let frame = match last {
                    None => changed,
                    Some(last) => {
                        api.changed(last, KEEPALIVE).await;
                        match api.change_token().ok()? == last {
                            true => Bytes::from_static(b": still here\n\n"),
                            false => changed,
                        }
                    }
                };
                let now = api.change_token().ok()?;
                Some((Ok(Frame::data(frame)), (following, token, Some(now))))
            }
        },
    );
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
}

/// A signed link from a webhook: checked, marked followed, and the page opened on its card.
fn link(api: &Api, query: &HashMap<String, String>) -> Result<Response<Body>, Failure> {
    let part = |name: &str| query.get(name).cloned().unwrap_or_default();
    let malformed = || Failure::from(ApiError::unauthorized("This link is incomplete."));
    let link = SignedLink {
        call: ShownCall {
            execution_id: part("run"),
            seq: part("seq").parse().map_err(|_| malformed())?,
            digest: part("digest"),
        },
        expires_at: part("exp").parse().map_err(|_| malformed())?,
        nonce: part("nonce"),
        signature: part("sig"),
    };
    let call = api.follow_link(&link)?;
    let target = format!(
        "/#call={}:{}:{}",
        encode(&call.execution_id),
        call.seq,
        encode(&call.digest)
    );
    Ok(redirect(&target))
}

/// A state-changing request must come from the page itself: a browser names the page's origin; a request
/// from another site (which the SameSite cookie already leaves without a device) is refused outright.
fn same_origin(request: &Request<Incoming>) -> Result<(), Failure> {
    let Some(origin) = request.headers().get(header::ORIGIN) else {
        return Ok(());
    };
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if origin.to_str().ok() == Some(format!("https://{host}").as_str()) {
        return Ok(());
    }
    Err(Failure::new(
        StatusCode::FORBIDDEN,
        ErrorCode::Unauthorized,
        "This request comes from another site.",
    ))
}

async fn read_body(request: Request<Incoming>) -> Result<Bytes, Failure> {
    Limited::new(request.into_body(), MAX_BODY)
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|_| {
            Failure::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::InvalidArgs,
                "The request is too large or was cut off.",
            )
        })
}

fn query(request: &Request<Incoming>) -> HashMap<String, String> {
    url::form_urlencoded::parse(request.uri().query().unwrap_or_default().as_bytes())
        .into_owned()
        .collect()
}

fn cookie(request: &Request<Incoming>) -> Option<String> {
    request
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned())
}

fn encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed_unsync()
}

fn html(status: StatusCode, page: &str) -> Response<Body> {
    let mut response = Response::new(full(page.to_owned()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

fn asset(kind: &'static str, text: &'static str) -> Response<Body> {
    let mut response = Response::new(full(text));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    response
}

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let mut response = Response::new(full(value.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn redirect(to: &str) -> Response<Body> {
    let mut response = Response::new(full(Bytes::new()));
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(value) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// What every answer carries: nothing from elsewhere runs or loads, nothing is cached or framed, and no
/// address leaks in a referrer to another site. `same-origin`, not `no-referrer`: under `no-referrer` a
/// browser sends `Origin: null` with the page's own form posts, and the origin check could not tell them from
/// another site's.
fn guarded(mut response: Response<Body>) -> Response<Body> {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::STRICT_TRANSPORT_SECURITY,
        HeaderValue::from_static("max-age=31536000"),
    );
    response
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn pair_page(code: &str, fingerprint: &str) -> String {
    PAIR_HTML
        .replace("{{code}}", &escape_html(code))
        .replace("{{fingerprint}}", &escape_html(fingerprint))
}

/// A page that says what went wrong, in the words the API used, with the way on.
fn message_page(error: &ApiError) -> String {
    let next = match error.code {
        ErrorCode::Unauthorized => {
            "To approve from this phone, pair it: on the computer, run <code>codemode devices pair NAME</code> \
             (or use Settings → Approve from a phone) and open the link it gives."
        }
        _ => "<a href=\"/\">Open the queue</a>",
    };
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Codemode Console</title><link rel=\"stylesheet\" href=\"/style.css\">\
         <link rel=\"stylesheet\" href=\"/phone.css\"></head><body class=\"phone\"><main class=\"phone-message\">\
         <h1>Codemode Console</h1><p id=\"message\" data-code=\"{}\">{}</p><p class=\"dim\">{next}</p></main></body></html>",
        error.code,
        escape_html(&error.message)
    )
}
