//! Sending to Queues: messages as JSON texts, in batches the platform accepts.

use worker::Env;

use super::error::AppResult;

/// Most messages one `sendBatch` may carry.
const BATCH_LIMIT: usize = 100;

/// Sends each JSON text to the queue bound as `binding`, `copies` times each.
pub async fn send_all(
    env: &Env,
    binding: &str,
    messages: &[String],
    copies: usize,
) -> AppResult<()> {
    let texts: Vec<String> = messages
        .iter()
        .flat_map(|text| std::iter::repeat_n(text.clone(), copies))
        .collect();
    let queue = env.queue(binding)?;
    for batch in texts.chunks(BATCH_LIMIT) {
        queue.send_batch(batch.to_vec()).await?;
    }
    Ok(())
}
