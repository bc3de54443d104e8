//! The resources Stepwise offers MCP clients: a research job's synthesis and its providers'
//! reports, by URI (`stepwise://research/<id>/synthesis`, `stepwise://research/<id>/reports/
//! <provider>`), and the templates that name them.

use serde_json::{Value, json};

/// The URI scheme and authority of every resource.
const PREFIX: &str = "stepwise://research/";

/// A resource a URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceUri {
    /// A job's synthesis.
    Synthesis {
        /// The job.
        research_id: String,
    },
    /// One provider's report of a job.
    Report {
        /// The job.
        research_id: String,
        /// The provider's name.
        provider: String,
    },
}

impl ResourceUri {
    /// The resource `uri` names, if it names one.
    ///
    /// ```
    /// use stepwise_core::mcp::resources::ResourceUri;
    /// let id = "0123456789abcdef0123456789abcdef";
    /// let uri = format!("stepwise://research/{id}/reports/fake-openai");
    /// let parsed = ResourceUri::parse(&uri).unwrap();
    /// assert_eq!(parsed, ResourceUri::Report { research_id: id.into(), provider: "fake-openai".into() });
    /// assert_eq!(parsed.to_uri(), uri);
    /// assert_eq!(ResourceUri::parse("stepwise://research/xyz/synthesis"), None);
    /// ```
    pub fn parse(uri: &str) -> Option<ResourceUri> {
        let rest = uri.strip_prefix(PREFIX)?;
        let mut parts = rest.split('/');
        let research_id = parts.next()?;
        if research_id.len() != 32 || !research_id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let research_id = research_id.to_ascii_lowercase();
        let resource = match (parts.next()?, parts.next(), parts.next()) {
            ("synthesis", None, _) => ResourceUri::Synthesis { research_id },
            ("reports", Some(provider), None) if is_name(provider) => ResourceUri::Report {
                research_id,
                provider: provider.to_owned(),
            },
            _ => return None,
        };
        Some(resource)
    }

    /// The URI.
    pub fn to_uri(&self) -> String {
        match self {
            ResourceUri::Synthesis { research_id } => format!("{PREFIX}{research_id}/synthesis"),
            ResourceUri::Report {
                research_id,
                provider,
            } => format!("{PREFIX}{research_id}/reports/{provider}"),
        }
    }

    /// The job it belongs to.
    pub fn research_id(&self) -> &str {
        match self {
            ResourceUri::Synthesis { research_id } | ResourceUri::Report { research_id, .. } => {
                research_id
            }
        }
    }
}

/// A provider name as configured: letters, digits, `-`, `_` and `.`, at most 64.
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `resources/templates/list`'s templates.
pub fn templates() -> Value {
    json!([
        {"uriTemplate": format!("{PREFIX}{{research_id}}/synthesis"), "name": "research-synthesis",
         "title": "A research job's synthesis", "mimeType": "text/markdown",
         "description": "The synthesis of one of your finished research jobs."},
        {"uriTemplate": format!("{PREFIX}{{research_id}}/reports/{{provider}}"), "name": "research-report",
         "title": "A provider's report", "mimeType": "text/markdown",
         "description": "One provider's report of one of your research jobs."}
    ])
}
