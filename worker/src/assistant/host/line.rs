//! What the conversation's tabs are told of the waiting line: every change to it (a message
//! queued, stopped, or taken out to begin) and every tab that joins gets the whole line as one
//! `conversation:waiting` event, so a reloaded tab shows the message it sent before the reload
//! still waiting (and can stop that one), and every other tab shows it too.

use stepwise_core::conversation::{ConversationEvent, WaitingMessage};
use worker::{State, web_sys};

use super::Host;

impl Host {
    /// The messages waiting behind the running turn, first to be answered first (a
    /// conversation's line holds assistant messages or guided ones, never both).
    fn waiting_messages(&self) -> Vec<WaitingMessage> {
        let assistant = self.queue.borrow();
        let guided = self.guided.borrow();
        let assistant = assistant.iter().map(|queued| queued.shown());
        let guided = guided.iter().map(|waiting| WaitingMessage {
            id: waiting.id.clone(),
            content: waiting.order.request.message.clone(),
        });
        assistant.chain(guided).collect()
    }

    /// The line as its event.
    fn waiting_event(&self, id: &str) -> ConversationEvent {
        ConversationEvent::Waiting {
            conversation_id: id.to_owned(),
            messages: self.waiting_messages(),
        }
    }

    /// Tells every tab watching conversation `id` the line as it is now (after a change).
    pub fn announce_waiting(&self, state: &State, id: &str) {
        let sockets = state.get_websockets();
        if sockets.is_empty() {
            return;
        }
        let text = self.waiting_event(id).to_json();
        for ws in &sockets {
            let _ = ws.send_with_str(&text);
        }
    }

    /// Tells one tab that joined the line as it is now.
    pub(super) fn tell_waiting(&self, ws: &web_sys::WebSocket, id: &str) {
        let _ = ws.send_with_str(&self.waiting_event(id).to_json());
    }
}
