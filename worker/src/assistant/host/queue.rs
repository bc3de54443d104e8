//! The waiting line of a conversation's object: messages sent while a streamed turn runs wait
//! here and are answered after it, in order, by the task of the turn that leads
//! ([`Host::work_through_queue`]); a resumed turn that takes the lease between two of them is
//! waited for ([`Host::resuming`]).

use std::rc::Rc;

use futures::channel::oneshot;
use stepwise_core::conversation::WaitingMessage;
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::worker_sys::DurableObjectState;
use worker::{Env, Response, State};

use super::{Host, Running, not_begun, stopped_waiting, take_where, waiting_stream};
use crate::assistant::turn::{Ask, AssistantTurn};
use crate::assistant::{Asked, log_header, prepare};
use crate::platform::error::AppResult;
use crate::platform::live::TurnLog;
use crate::platform::negotiate::Wire;
use crate::platform::output::Output;
use crate::platform::owner::Owner;
use crate::platform::sse::EventSink;

/// A message waiting for the running turn to end, with its client's stream.
pub(super) struct Queued {
    /// The id its stream was named by, for a Stop of it.
    id: String,
    owner: Owner,
    asked: Box<Asked>,
    sink: EventSink,
    wire: Wire,
}

impl Queued {
    /// The message as the conversation's tabs see it while it waits.
    pub(super) fn shown(&self) -> WaitingMessage {
        WaitingMessage {
            id: self.id.clone(),
            content: self.asked.title.clone(),
            action: !matches!(self.asked.ask, Ask::Message(_)),
        }
    }
}

impl Host {
    /// Runs `first` (when given), then the queued messages' turns one after the other, in the
    /// background; the host streams no more when the queue is empty.
    pub(super) fn work_through_queue(
        &self,
        state: &State,
        env: &Env,
        id: &str,
        running: Running,
        first: Option<(AssistantTurn, Rc<TurnLog>)>,
    ) {
        let (shared, env, id) = (self.shared(), env.clone(), id.to_owned());
        // The state's JS handle, owned, for the queued turns begun after this one.
        let owned =
            State::from(JsValue::from(state.as_raw()).unchecked_into::<DurableObjectState>());
        state.wait_until(async move {
            let _running = running;
            let mut next = match first {
                Some(first) => Some(first),
                None => shared.begin_queued(&owned, &env, &id).await,
            };
            while let Some((turn, log)) = next.take() {
                let mut out = Output::Live(log.clone());
                turn.run(&mut out).await;
                log.finish().await;
                next = shared.begin_queued(&owned, &env, &id).await;
            }
            // No wait between the empty queue and this: nothing can be queued in between.
            shared.streaming.set(false);
        });
    }

    /// Queues a message behind the running turn (checked first: `Asked::checked_alone`): its
    /// stream says so at once, and carries its turn when it begins. 409 `queue_full` past
    /// [`MAX_QUEUED`].
    pub(super) fn enqueue(
        &self,
        id: &str,
        owner: Owner,
        asked: Box<Asked>,
        mut wire: Wire,
    ) -> AppResult<Response> {
        let waiting = self.queue.borrow().len();
        let (response, sink, waiting_id) = waiting_stream(id, &mut wire, waiting)?;
        self.queue.borrow_mut().push_back(Queued {
            id: waiting_id,
            owner,
            asked,
            sink,
            wire,
        });
        Ok(response)
    }

    /// Takes the message that waits as `waiting` out of the line: its client's stream.
    pub(super) fn take_queued(&self, waiting: &str) -> Option<(EventSink, Wire)> {
        take_where(&self.queue, |queued| queued.id == waiting).map(|q| (q.sink, q.wire))
    }

    /// Notes a resumed turn being begun: the waiting messages' task waits for it while the
    /// returned sender lives (finished ones are forgotten here).
    pub(super) fn resuming(&self) -> oneshot::Sender<()> {
        let (sender, receiver) = oneshot::channel();
        let mut resumes = self.resumes.borrow_mut();
        resumes.retain_mut(|resume| matches!(resume.try_recv(), Ok(None)));
        resumes.push(receiver);
        sender
    }

    /// Begins the next queued message's turn, if any: its client's stream joins the new log. A
    /// message whose turn cannot begin gets the reason as an `error` event (one a Stop named
    /// while it was being begun gets `stopped`), and the next is tried.
    async fn begin_queued(
        &self,
        state: &State,
        env: &Env,
        id: &str,
    ) -> Option<(AssistantTurn, Rc<TurnLog>)> {
        loop {
            let Queued {
                id: waiting_id,
                owner,
                asked,
                sink,
                mut wire,
            } = self.queue.borrow_mut().pop_front()?;
            self.announce_waiting(state, id);
            // Kept to try again if a resumed turn took the lease meanwhile.
            let again = (*asked).clone();
            self.beginning(&waiting_id, !again.continues());
            let begun = match prepare(env.clone(), &owner, id, false, *asked).await {
                // Stopped while it was being prepared: nothing of it runs or is kept.
                Ok(turn) if self.stop_asked() => {
                    turn.session.abort(env).await;
                    Ok(None)
                }
                Ok(turn) => {
                    let lease = turn.session.lease;
                    let waited = (None, Some(waiting_id.clone()));
                    match log_header::begin_log(state, id, lease, turn.user_entry(), None, waited)
                        .await
                    {
                        Ok(log) => Ok(Some((turn, log))),
                        Err(error) => {
                            turn.session.abort(env).await;
                            Err(error)
                        }
                    }
                }
                Err(error) => Err(error),
            };
            let stop_asked = self.begun();
            if stop_asked && !matches!(begun, Ok(Some(_))) {
                // Stopped, and no turn of it began: its stream says so (not why it could not
                // begin), and the next message is tried as if it had never waited.
                stopped_waiting(&sink, &mut wire);
                continue;
            }
            let resumes: Vec<_> = match &begun {
                Err(error) if error.code() == "turn_in_progress" => {
                    std::mem::take(&mut *self.resumes.borrow_mut())
                }
                _ => Vec::new(),
            };
            if !resumes.is_empty() {
                // A resumed turn holds the lease: this message waits for it, still first.
                self.queue.borrow_mut().push_front(Queued {
                    id: waiting_id,
                    owner,
                    asked: Box::new(again),
                    sink,
                    wire,
                });
                self.announce_waiting(state, id);
                futures::future::join_all(resumes).await;
                continue;
            }
            match begun {
                Ok(Some((turn, log))) => {
                    log.attach(sink, wire, 0);
                    self.show_waited(log.clone(), waiting_id, None);
                    if stop_asked {
                        // Stopped while its log was being begun: the turn stops before it runs
                        // anything (`AssistantTurn::run`), keeping the message and no answer.
                        log.stop();
                    }
                    return Some((turn, log));
                }
                Ok(None) => stopped_waiting(&sink, &mut wire),
                Err(error) => {
                    not_begun(&sink, &mut wire, &error);
                    let shown = (waiting_id.as_str(), again.title.as_str());
                    self.announce_not_begun(state, id, shown, &error);
                }
            }
        }
    }
}
