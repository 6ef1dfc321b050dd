//! The connectors and what they offer: listing them, signing in to remote ones, search and describe over
//! their methods, and the `codemode` tool's description.

use crate::{Api, ApiError, ConnectorInfo, listing};
use codemode::Connector;
use codemode::discovery::{DescribeOutput, SearchOutput};
use connectors::config;

impl Api {
    /// Every connector with its methods, in one shape for every front end. MCP servers that have not started
    /// yet are started to list theirs.
    pub async fn connectors(&self) -> Vec<ConnectorInfo> {
        listing::list(&self.home).await
    }

    /// Signs in to a remote connector with OAuth (docs/remote-servers.md): `open` gets the address a person
    /// opens in a browser; this returns once the browser came back and the tokens are kept. The server is
    /// restarted with them on its next call.
    pub async fn sign_in(&self, connector: &str, open: impl FnOnce(&str)) -> Result<(), ApiError> {
        self.usable()?;
        let (url, ca_file, oauth, path) = self.remote(connector)?;
        connectors::remote::sign_in(
            connector,
            &url,
            ca_file.as_deref(),
            oauth.as_ref(),
            &path,
            open,
        )
        .await
        .map_err(ApiError::invalid_args)?;
        self.restart(connector).await;
        Ok(())
    }

    /// Forgets a remote connector's sign-in; `false` when there was none.
    pub async fn sign_out(&self, connector: &str) -> Result<bool, ApiError> {
        let (_, _, _, path) = self.remote(connector)?;
        let signed_out = connectors::remote::sign_out(&path).map_err(ApiError::internal)?;
        self.restart(connector).await;
        Ok(signed_out)
    }

    /// A remote connector's address, private CA, pre-registered client and sign-in file.
    #[allow(clippy::type_complexity)]
    fn remote(
        &self,
        connector: &str,
    ) -> Result<
        (
            String,
            Option<std::path::PathBuf>,
            Option<config::OAuthClient>,
            std::path::PathBuf,
        ),
        ApiError,
    > {
        let entry = self
            .home
            .entry(connector)
            .ok_or_else(|| ApiError::no_connector(connector))?;
        let server = self
            .home
            .connectors
            .servers
            .iter()
            .find(|s| s.name() == connector);
        match (&entry.kind, server.and_then(|s| s.credentials())) {
            (
                config::ConnectorKind::Http {
                    url,
                    ca_file,
                    oauth,
                    ..
                },
                Some(path),
            ) => Ok((url.clone(), ca_file.clone(), oauth.clone(), path.to_owned())),
            _ => Err(ApiError::invalid_args(format!(
                "connector \"{connector}\" is not a remote server (it has no \"url\"): there is nothing to sign in to"
            ))),
        }
    }

    /// Stops a server, so that its next call starts it with what changed.
    pub(crate) async fn restart(&self, connector: &str) {
        if let Some(server) = self
            .home
            .connectors
            .servers
            .iter()
            .find(|s| s.name() == connector)
        {
            server.shutdown().await;
        }
    }

    /// The configured connectors as they stand, starting nothing (their methods come with [`Api::connectors`]).
    pub fn configured_connectors(&self) -> Vec<ConnectorInfo> {
        listing::configured(&self.home)
    }

    /// Ranked search over connector methods and snippets.
    pub async fn search(&self, query: &str) -> Result<SearchOutput, ApiError> {
        Ok(self.home.runtime.search(query).await?)
    }

    /// A connector, method or snippet with its TypeScript declarations.
    pub async fn describe(&self, target: &str) -> Result<DescribeOutput, ApiError> {
        Ok(self.home.runtime.describe(target).await?)
    }

    /// The model-facing description of the `codemode` tool, with the configured connector hints.
    pub fn tool_description(&self) -> String {
        self.home.runtime.tool_description(&self.home.hints())
    }
}
