//! Sending to Queues: JSON text messages, in batches the platform accepts.

use serde::Serialize;
use worker::Env;

use super::error::AppResult;

/// Most messages one `sendBatch` may carry.
const BATCH_LIMIT: usize = 100;

/// Sends each message as JSON text to the queue bound as `binding`, `copies` times each.
pub async fn send_all<T: Serialize>(
    env: &Env,
    binding: &str,
    messages: &[T],
    copies: usize,
) -> AppResult<()> {
    let mut texts = Vec::with_capacity(messages.len() * copies);
    for message in messages {
        let text = serde_json::to_string(message)?;
        texts.extend(std::iter::repeat_n(text, copies));
    }
    let queue = env.queue(binding)?;
    for batch in texts.chunks(BATCH_LIMIT) {
        queue.send_batch(batch.to_vec()).await?;
    }
    Ok(())
}
