//! The offline provider drives whole guided flows through real turns: begin → offline reply
//! streamed through the parser in small chunks → finish, as the Worker and the CLI do.

use stepwise_core::markers::{Event, MarkerParser};
use stepwise_core::offline::{self, OFFLINE_LABEL};
use stepwise_core::protocol::{ChatMessage, ChatRequest, ChatResponse, Role};
use stepwise_core::turn::{self, Rejection, TurnStart};
use stepwise_core::workflow::{Config, FieldValue, UserAction, WorkflowSpec};

struct Session {
    spec: WorkflowSpec,
    step: String,
    config: Config,
    skipped: Vec<String>,
    history: Vec<ChatMessage>,
}

impl Session {
    fn new() -> Self {
        let spec = WorkflowSpec::builtin("research_stream").unwrap();
        Session {
            step: "purpose".into(),
            spec,
            config: Config::new(),
            skipped: Vec::new(),
            history: Vec::new(),
        }
    }

    fn send(&mut self, message: &str, action: UserAction) -> ChatResponse {
        let request = ChatRequest {
            message: message.into(),
            current_step: Some(self.step.clone()),
            current_config: self.config.clone(),
            conversation_history: self.history.clone(),
            user_action: Some(action),
            skipped: self.skipped.clone(),
            ..ChatRequest::default()
        };
        let response = match turn::begin(&self.spec, &request) {
            Ok(TurnStart::Respond(response)) | Err(Rejection { response, .. }) => response,
            Ok(TurnStart::CallModel(plan)) => {
                let reply = offline::reply(&self.spec, &plan);
                let mut parser = MarkerParser::new();
                let mut shown = String::new();
                for chunk in reply
                    .as_bytes()
                    .chunks(5)
                    .map(|c| String::from_utf8_lossy(c).into_owned())
                {
                    for event in parser.feed(&chunk) {
                        if let Event::Text { text } = event {
                            shown.push_str(&text);
                        }
                    }
                }
                let response = turn::finish(&self.spec, &plan, parser.finish()).response;
                assert!(
                    response.message.starts_with(OFFLINE_LABEL),
                    "{}",
                    response.message
                );
                assert!(
                    !shown.contains("EXTRACTED_DATA")
                        && !shown.contains("SUGGESTIONS:")
                        && !shown.contains("OPTIONS:")
                );
                response
            }
        };
        assert!(response.error.is_none(), "{:?}", response.error);
        self.history.push(ChatMessage::new(Role::User, message));
        self.history
            .push(ChatMessage::new(Role::Assistant, response.message.clone()));
        self.step = response.next_step.clone();
        self.config = response.updated_config.clone();
        self.skipped = response.skipped.clone();
        response
    }
}

fn list(items: &[&str]) -> FieldValue {
    FieldValue::List(items.iter().map(|s| s.to_string()).collect())
}

#[test]
fn the_offline_provider_completes_the_research_stream_flow() {
    let mut s = Session::new();
    let r = s.send(
        "Monitor competitive landscape for strategic planning",
        UserAction::TextInput,
    );
    assert_eq!(r.next_step, "business_goals");
    let r = s.send(
        "Track launches, price moves and partnering",
        UserAction::TextInput,
    );
    assert_eq!(r.next_step, "stream_type");
    assert_eq!(
        r.suggestions,
        ["competitive", "regulatory", "clinical", "scientific"]
    );
    let pick = UserAction::OptionSelected {
        target_field: "stream_type".into(),
        selected_value: r.suggestions[0].clone(),
    };
    let r = s.send("competitive", pick);
    assert_eq!(r.next_step, "focus_areas");
    assert_eq!(r.options.len(), 5);
    assert_eq!(
        r.proposed_message.as_deref(),
        Some("Continue with selected focus areas")
    );
    let values = vec![r.options[0].value.clone(), r.options[1].value.clone()];
    let r = s.send(
        "Continue",
        UserAction::OptionsSelected {
            target_field: "focus_areas".into(),
            selected_values: values,
        },
    );
    assert_eq!(r.next_step, "competitors");
    let r = s.send(
        "Skip",
        UserAction::SkipStep {
            target_field: "competitors".into(),
        },
    );
    assert_eq!(r.next_step, "keywords");
    assert_eq!(
        r.suggestions,
        [
            "Oncology",
            "Cardiology",
            "Track launches",
            "price moves",
            "partnering"
        ]
    );
    let r = s.send("EGFR, KRAS", UserAction::TextInput);
    assert_eq!(r.next_step, "review");
    assert!(
        r.message.contains("- stream type: \"competitive\""),
        "{}",
        r.message
    );
    let r = s.send("Looks good", UserAction::Confirm);
    assert_eq!(r.next_step, "done");
    assert_eq!(
        s.config["purpose"],
        FieldValue::Text("Monitor competitive landscape for strategic planning".into())
    );
    assert_eq!(
        s.config["business_goals"],
        list(&["Track launches", "price moves", "partnering"])
    );
    assert_eq!(s.config["focus_areas"], list(&["Oncology", "Cardiology"]));
    assert_eq!(s.config["keywords"], list(&["EGFR", "KRAS"]));
    assert_eq!(s.skipped, ["competitors"]);
}

#[test]
fn a_question_or_an_unknown_choice_keeps_the_step_open() {
    let mut s = Session::new();
    assert_eq!(
        s.send("What's the weather like?", UserAction::TextInput)
            .next_step,
        "purpose"
    );
    s.send("Track rivals", UserAction::TextInput);
    s.send("Launches", UserAction::TextInput);
    let r = s.send("marketing, I think", UserAction::TextInput);
    assert_eq!(r.next_step, "stream_type");
    assert!(r.message.contains("could not take an answer"));
    assert_eq!(
        s.send("a clinical one", UserAction::TextInput).next_step,
        "focus_areas"
    );
}

#[test]
fn typing_more_areas_adds_to_the_selection() {
    let mut s = Session::new();
    s.send("Track rivals", UserAction::TextInput);
    s.send("Launches", UserAction::TextInput);
    s.send("scientific", UserAction::TextInput);
    s.step = "focus_areas".into();
    s.config.insert("focus_areas".into(), list(&["Oncology"]));
    s.send(
        "add neurology please",
        UserAction::GoToStep {
            step: "focus_areas".into(),
        },
    );
    let r = s.send("add neurology please", UserAction::TextInput);
    assert_eq!(s.config["focus_areas"], list(&["Oncology", "Neurology"]));
    assert_eq!(r.next_step, "competitors");
}
