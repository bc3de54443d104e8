//! A small Chrome DevTools Protocol client for benchmarks: connect to workerd's inspector,
//! record a CPU profile while some load runs, and sum it into self and total time per function.

/** Connects to an inspector target's WebSocket; `send(method, params)` answers its result. */
export async function connect(url) {
  // The inspector refuses an upgrade with a User-Agent and no Origin (node's WebSocket sends
  // exactly that), so an Origin of the loopback is given.
  const ws = new WebSocket(url, { headers: { origin: "http://127.0.0.1" } });
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error(`inspector ${url}: cannot connect`)), { once: true });
  });
  let nextId = 1;
  const pending = new Map();
  ws.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data));
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (message.error) waiting.reject(new Error(`${waiting.method}: ${JSON.stringify(message.error)}`));
    else waiting.resolve(message.result);
  });
  ws.addEventListener("close", () => {
    for (const { reject, method } of pending.values()) reject(new Error(`${method}: the inspector closed`));
    pending.clear();
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { method, resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { send, close: () => ws.close() };
}

/** Records a CPU profile (sampling every `intervalUs`) while `load()` runs. */
export async function profileWhile(cdp, load, intervalUs = 100) {
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: intervalUs });
  await cdp.send("Profiler.start");
  let failure = null;
  try {
    await load();
  } catch (error) {
    failure = error;
  }
  const { profile } = await cdp.send("Profiler.stop");
  await cdp.send("Profiler.disable").catch(() => {});
  if (failure) throw failure;
  return profile;
}

/**
 * Self and total microseconds per function name (a sample lasts until the next one), the
 * sampled time and the idle time. A function counts once per sample in its callers' totals
 * even when it recurses.
 */
export function summarize(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const nameOf = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || (url ? "(anonymous)" : "(program)");
    // JS frames keep their file and line: workerd's own modules and the Worker's glue share names.
    return url && !url.startsWith("wasm://") ? `${name} ${url.split("/").pop()}:${lineNumber + 1}` : name;
  };
  const times = [];
  let at = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((at += delta));
  const functions = new Map();
  const entry = (name) => functions.get(name) ?? functions.set(name, { name, selfUs: 0, totalUs: 0 }).get(name);
  let sampledUs = 0;
  let idleUs = 0;
  profile.samples.forEach((id, i) => {
    const lasted = Math.max(0, (i + 1 < times.length ? times[i + 1] : profile.endTime) - times[i]);
    sampledUs += lasted;
    const name = nameOf(nodes.get(id));
    if (name === "(idle)") idleUs += lasted;
    entry(name).selfUs += lasted;
    const seen = new Set();
    for (let node = id; node !== undefined; node = parent.get(node)) {
      const caller = nameOf(nodes.get(node));
      if (caller === "(root)" || seen.has(caller)) continue;
      seen.add(caller);
      entry(caller).totalUs += lasted;
    }
  });
  const rows = [...functions.values()].sort((a, b) => b.selfUs - a.selfUs);
  return { sampledUs, idleUs, activeUs: sampledUs - idleUs, rows };
}
