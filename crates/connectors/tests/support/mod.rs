//! What the connector tests share: the sandbox worker, and the MCP servers the test command installs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The sandbox worker sits beside the test binaries once the workspace is built; build it if it is not.
pub fn worker() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let target = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_owned();
    let worker = target.join("codemode-worker");
    if !worker.exists() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "-p", "codemode", "--bin", "codemode-worker"])
            .status()
            .expect("cargo builds the worker");
        assert!(status.success());
    }
    worker
}

/// Where `scripts/test` installs the npm MCP servers and the Python MCP SDK: `$CODEMODE_TEST_DEPS`, else
/// `.test-deps` at the top of the workspace.
pub fn test_deps() -> PathBuf {
    let deps = std::env::var_os("CODEMODE_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.test-deps"));
    assert!(
        deps.join("node_modules").is_dir() && deps.join("venv/bin/python").exists(),
        "the MCP servers these tests use are missing from {}: run scripts/test, which installs them",
        deps.display()
    );
    deps
}

/// `node <entry point>` of an npm MCP server installed by the test command.
pub fn npm_server(package: &str) -> (String, Vec<String>) {
    let deps = test_deps();
    let manifest = deps.join("node_modules").join(package).join("package.json");
    let text = std::fs::read_to_string(&manifest).expect("the package's manifest");
    let json: serde_json::Value = serde_json::from_str(&text).expect("package.json");
    let bin = match &json["bin"] {
        serde_json::Value::String(path) => path.clone(),
        serde_json::Value::Object(map) => map
            .values()
            .next()
            .and_then(|v| v.as_str())
            .expect("a bin entry")
            .to_owned(),
        _ => panic!("{package} has no bin"),
    };
    let entry = manifest.parent().expect("package dir").join(bin);
    ("node".to_owned(), vec![entry.display().to_string()])
}

/// The Python interpreter with the official MCP SDK, and our misbehaving server.
pub fn trouble_server(extra: &[&str]) -> (String, Vec<String>) {
    let python = test_deps().join("venv/bin/python");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/trouble.py");
    let mut args = vec![script.display().to_string()];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    (python.display().to_string(), args)
}

/// A fresh folder for one test.
pub fn scratch(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("codemode-{label}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A streamable-HTTP MCP server on the official Python SDK (`tests/servers/remote_mcp.py`), over TLS with a
/// test CA and optionally behind OAuth; stopped when dropped.
pub struct RemoteServer {
    child: std::process::Child,
    pub url: String,
    pub certs: PathBuf,
    pub events: PathBuf,
}

impl RemoteServer {
    pub fn start(dir: &Path, extra: &[&str]) -> RemoteServer {
        use std::io::BufRead;
        let servers = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers");
        let certs = dir.join("certs");
        let made = std::process::Command::new("bash")
            .arg(servers.join("make_certs.sh"))
            .arg(&certs)
            .status()
            .expect("make_certs.sh");
        assert!(made.success(), "make_certs.sh failed");
        let events = dir.join("events.jsonl");
        let mut child = std::process::Command::new(test_deps().join("venv/bin/python"))
            .arg(servers.join("remote_mcp.py"))
            .arg("--certfile")
            .arg(certs.join("server.pem"))
            .arg("--keyfile")
            .arg(certs.join("server.key"))
            .arg("--events")
            .arg(&events)
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(dir.join("server.log")).expect("server.log"))
            .spawn()
            .expect("remote_mcp.py");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("ready line");
        let url = line
            .trim()
            .strip_prefix("ready ")
            .unwrap_or_else(|| panic!("remote_mcp.py did not start: {line:?}"))
            .to_owned();
        RemoteServer {
            child,
            url,
            certs,
            events,
        }
    }

    /// The server's events (`remote_mcp.py --events`), one JSON object each.
    pub fn events(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.events)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Drop for RemoteServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A runtime over the connectors a `connectors.json` text declares, as a host opens them.
pub async fn open_runtime(
    dir: &Path,
    config_text: &str,
) -> (codemode::Runtime, connectors::Connectors) {
    let parsed =
        connectors::config::parse(config_text, &dir.join("connectors.json"), dir).expect("config");
    let built = connectors::Connectors::build(&parsed, dir).expect("connectors");
    let options = codemode::RuntimeOptions {
        worker: Some(worker()),
        ..codemode::RuntimeOptions::default()
    };
    let runtime = codemode::Runtime::open(&dir.join("codemode.db"), options, built.all.clone())
        .await
        .expect("runtime");
    (runtime, built)
}
