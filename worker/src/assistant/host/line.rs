//! The waiting line's Stops, and what the conversation's tabs are told of it: every change to it
//! (a message queued, stopped, or taken out to begin) and every tab that joins gets the whole line
//! as one `conversation:waiting` event, so a reloaded tab shows the message it sent before the
//! reload still waiting (and can withdraw it), and every other tab shows it too.

use stepwise_core::conversation::{ConversationEvent, WaitingMessage};
use worker::{State, web_sys};

use super::{Host, stopped_waiting, take_where};
use crate::platform::error::AppError;

impl Host {
    /// The messages waiting behind the running turn, first to be answered first (a
    /// conversation's line holds assistant messages or guided ones, never both).
    fn waiting_messages(&self) -> Vec<WaitingMessage> {
        let assistant = self.queue.borrow();
        let guided = self.guided.borrow();
        let assistant = assistant.iter().map(|queued| queued.shown());
        // A guided action (a chip, Skip) is its message too: sent again as typed, it is the same.
        let guided = guided.iter().map(|waiting| WaitingMessage {
            id: waiting.id.clone(),
            content: waiting.order.request.message.clone(),
            action: false,
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

    /// Tells every tab watching conversation `id` that the message waiting as `waiting`
    /// (`content`) could not begin (`error`): the tab that sent it gives it back even after a
    /// reload.
    pub fn announce_not_begun(
        &self,
        state: &State,
        id: &str,
        (waiting, content): (&str, &str),
        error: &AppError,
    ) {
        let sockets = state.get_websockets();
        if sockets.is_empty() {
            return;
        }
        let text = ConversationEvent::NotBegun {
            conversation_id: id.to_owned(),
            waiting_id: waiting.to_owned(),
            content: content.to_owned(),
            code: error.code().to_owned(),
            message: error.message().to_owned(),
        }
        .to_json();
        for ws in &sockets {
            let _ = ws.send_with_str(&text);
        }
    }

    /// Tells one tab that joined the line as it is now.
    pub(super) fn tell_waiting(&self, ws: &web_sys::WebSocket, id: &str) {
        let _ = ws.send_with_str(&self.waiting_event(id).to_json());
    }

    /// Stops the message that waits as `waiting` (an assistant or a guided one): taken out of
    /// the line, its stream ends with `stopped` (nothing of it ran); once its turn has begun,
    /// that turn is stopped. False when there is no such message, or its turn ended.
    pub fn stop_waiting(&self, waiting: &str) -> bool {
        if self.withdraw_waiting(waiting) {
            return true;
        }
        if let Some(beginning) = self.beginning.borrow_mut().as_mut()
            && beginning.waiting == waiting
        {
            // An approved call being begun runs at most once, and is not stopped.
            return beginning.stop.replace(true).is_some();
        }
        self.waited_as.borrow().as_deref() == Some(waiting) && self.stop()
    }

    /// Takes the message that waits as `waiting` out of the line (its stream ends with `stopped`:
    /// nothing of it ran); false when it is not in the line (any more: its turn may have begun,
    /// and is left to run). A message withdrawn lately answers `true` again (a client whose
    /// answer was lost asks again).
    pub fn withdraw_waiting(&self, waiting: &str) -> bool {
        if self.withdrawn.has(waiting) {
            return true;
        }
        let taken = self
            .take_queued(waiting)
            .or_else(|| take_where(&self.guided, |g| g.id == waiting).map(|g| (g.sink, g.wire)));
        taken.is_some_and(|(sink, mut wire)| {
            stopped_waiting(&sink, &mut wire);
            self.withdrawn.remember(waiting);
            true
        })
    }
}
