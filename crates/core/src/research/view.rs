//! A job as clients read it: the record plus the facts core derives from it, so the app, the
//! share page and any other client show the same thing without re-deriving rules.

use serde::Serialize;

use super::Research;

/// The JSON of `GET /api/research/:id` and of the job in events: every field of the record,
/// and `synthesis_not_available` (the spec's condition for the completed card).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "Research"))]
pub struct ResearchView<'a> {
    /// The record.
    #[serde(flatten)]
    pub research: &'a Research,
    /// Completed with no synthesis, at most one successful report and no external report.
    pub synthesis_not_available: bool,
}

impl Research {
    /// The job as clients read it.
    ///
    /// ```
    /// use stepwise_core::research::{DraftFields, Research};
    /// let fields = DraftFields { title: "T".into(), prompt: "Why?".into(),
    ///     selected_llms: vec![], synthesis_llm: "a".into(), external_reports: vec![], stream_id: None };
    /// let job = Research::draft("r1".into(), "me".into(), fields, 0).unwrap();
    /// let json = serde_json::to_value(job.view()).unwrap();
    /// assert_eq!((json["id"].as_str(), json["synthesis_not_available"].as_bool()), (Some("r1"), Some(false)));
    /// ```
    pub fn view(&self) -> ResearchView<'_> {
        ResearchView {
            research: self,
            synthesis_not_available: self.synthesis_not_available(),
        }
    }
}
