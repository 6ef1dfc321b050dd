//! The connectors a runtime holds, their methods cached per tools generation, and discovery over them
//! (search, describe, listings, the MCP tool description).

use super::*;

/// A connector and, once known, its methods.
pub(super) struct Registered {
    pub(super) connector: Arc<dyn Connector>,
    pub(super) loaded: Mutex<Option<Arc<Methods>>>,
}

/// What a connector offers at one tools generation.
pub(super) struct Methods {
    pub(super) generation: u64,
    pub(super) instructions: Option<String>,
    /// In the connector's order (discovery lists them so).
    pub(super) tools: Vec<ToolDescriptor>,
}

impl Methods {
    pub(super) fn tool(&self, name: &str) -> Option<&ToolDescriptor> {
        self.tools.iter().find(|t| t.name == name)
    }
}

impl Registered {
    /// The methods already known for the current tools generation, without asking the connector.
    pub(super) fn cached(&self) -> Option<Arc<Methods>> {
        let generation = self.connector.tools_generation();
        lock(&self.loaded)
            .as_ref()
            .filter(|m| m.generation == generation)
            .cloned()
    }

    /// The connector's methods: asked once per tools generation, so a restarted server is asked again.
    pub(super) async fn methods(&self) -> Result<Arc<Methods>, String> {
        if let Some(methods) = self.cached() {
            return Ok(methods);
        }
        let tools = self.connector.tools().await?;
        for tool in &tools {
            if tool.requires_approval && tool.replay == Replay::Reexecute {
                return Err(format!(
                    "Connector \"{}\" tool \"{}\" cannot combine requiresApproval with replay: \"reexecute\" — approved actions must be logged, not re-executed.",
                    self.connector.name(),
                    tool.name
                ));
            }
        }
        let methods = Arc::new(Methods {
            generation: self.connector.tools_generation(),
            instructions: self.connector.instructions(),
            tools,
        });
        *lock(&self.loaded) = Some(methods.clone());
        Ok(methods)
    }
}

/// One connector as listings show it: its methods, or why they could not be had.
#[derive(Debug, Clone)]
pub struct ConnectorListing {
    pub name: String,
    pub instructions: Option<String>,
    pub methods: Vec<ToolDescriptor>,
    pub error: Option<String>,
}

/// What discovery may show: visible methods of every connector whose methods are known (neither `hidden` nor
/// hidden by an unconditional `deny` rule).
pub(super) fn catalogs<'a>(
    loaded: &'a [(&'a Registered, Result<Arc<Methods>, String>)],
    rules: &RuleSet,
) -> Vec<Catalog<'a>> {
    loaded
        .iter()
        .filter_map(|(registered, methods)| {
            let methods = methods.as_ref().ok()?;
            Some(Catalog {
                name: registered.connector.name(),
                instructions: methods.instructions.as_deref(),
                tools: methods
                    .tools
                    .iter()
                    .filter(|t| !t.hidden && !rules.hides(registered.connector.name(), &t.name))
                    .collect(),
            })
        })
        .collect()
}

impl Inner {
    pub(super) fn connector(&self, name: &str) -> Option<&Registered> {
        self.connectors.iter().find(|c| c.connector.name() == name)
    }

    /// Every connector's methods; connectors whose methods cannot be had (a server that does not start) are
    /// left out of discovery rather than failing it.
    pub(super) async fn loaded(&self) -> Vec<(&Registered, Result<Arc<Methods>, String>)> {
        let mut loaded = Vec::with_capacity(self.connectors.len());
        for registered in &self.connectors {
            loaded.push((registered, registered.methods().await));
        }
        loaded
    }

    /// Methods come from an index built once per tools generation; snippets are read (and indexed) per query,
    /// as they change.
    pub(super) async fn search(&self, query: &str) -> Result<SearchOutput, RuntimeError> {
        let loaded = self.loaded().await;
        let generations: Option<Vec<u64>> = loaded
            .iter()
            .map(|(_, m)| m.as_ref().ok().map(|m| m.generation))
            .collect();
        // Methods a rule hides change with the rules: their version is part of the key.
        let rules = self.rules();
        let generations = generations.map(|mut g| {
            g.push(rules.version as u64);
            g
        });
        let cached = lock(&self.methods)
            .as_ref()
            .filter(|(key, _)| Some(key) == generations.as_ref())
            .map(|(_, index)| index.clone());
        let methods = match cached {
            Some(index) => index,
            None => {
                let index = Arc::new(SearchIndex::new(&catalogs(&loaded, &rules)));
                if let Some(generations) = generations {
                    *lock(&self.methods) = Some((generations, index.clone()));
                }
                index
            }
        };
        let mut snippets = SearchIndex::default();
        snippets.add_snippets(&self.store.snippets(None)?);
        Ok(discovery::search_indexes(&[&methods, &snippets], query))
    }

    pub(super) async fn describe(&self, target: &str) -> Result<DescribeOutput, RuntimeError> {
        let snippets = self.store.snippets(None)?;
        let loaded = self.loaded().await;
        Ok(discovery::describe(
            target,
            &catalogs(&loaded, &self.rules()),
            &snippets,
        ))
    }

    pub(super) fn names(&self) -> Vec<String> {
        self.connectors
            .iter()
            .map(|c| c.connector.name().to_owned())
            .collect()
    }
}

impl Runtime {
    /// Ranked search over connector methods and snippets (docs/semantics.md §8.3).
    pub async fn search(&self, query: &str) -> Result<SearchOutput, RuntimeError> {
        self.inner.search(query).await
    }

    /// A snippet, connector or method with its TypeScript declarations (docs/semantics.md §8.4).
    pub async fn describe(&self, target: &str) -> Result<DescribeOutput, RuntimeError> {
        self.inner.describe(target).await
    }

    /// Every connector with its methods (hidden ones included, flagged) or the reason they are unavailable;
    /// asking starts servers that have not started yet.
    pub async fn connectors(&self) -> Vec<ConnectorListing> {
        self.inner
            .loaded()
            .await
            .into_iter()
            .map(|(registered, methods)| {
                let name = registered.connector.name().to_owned();
                match methods {
                    Ok(methods) => ConnectorListing {
                        name,
                        instructions: methods.instructions.clone(),
                        methods: methods.tools.clone(),
                        error: None,
                    },
                    Err(error) => ConnectorListing {
                        name,
                        instructions: None,
                        methods: Vec::new(),
                        error: Some(error),
                    },
                }
            })
            .collect()
    }

    /// The model-facing description of the `codemode` tool, with optional per-connector hints.
    pub fn tool_description(&self, hints: &HashMap<String, String>) -> String {
        let connectors: Vec<(&str, Option<&str>)> = self
            .inner
            .connectors
            .iter()
            .map(|c| {
                (
                    c.connector.name(),
                    hints.get(c.connector.name()).map(String::as_str),
                )
            })
            .collect();
        discovery::tool_description(&connectors)
    }
}
